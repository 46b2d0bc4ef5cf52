/** An answer's body as JSON, or undefined when it is empty or not JSON (the tests look at `text` then). */
export const jsonOrUndefined = (text: string): any => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
