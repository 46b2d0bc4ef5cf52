/**
 * Hostile JSON bodies (decisions.md, Requests and errors): a body nested deeper than 32 levels
 * or holding more than 10,000 values is refused before it is parsed, so nothing later (the
 * schema's decoding, its error messages) walks a value deep enough to overflow the stack or
 * wide enough to cost more than a flat body of the same size (docs/security.md, "Hostile
 * bodies"; bench/hostile-bodies.ts measures both).
 *
 * The check is one pass over the text, in a loop: no recursion, no value built. It counts
 * what a well-formed body holds exactly (the root, then one value per array element or object
 * member: a non-empty container has one more than its commas); a malformed body is counted
 * roughly and refused by the parse that follows.
 */
export const MAX_JSON_DEPTH = 32
export const MAX_JSON_VALUES = 10_000

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** The index just past the string whose opening quote is at `open`. */
const endOfString = (text: string, open: number) => {
  let at = open
  for (;;) {
    at = text.indexOf("\"", at + 1)
    if (at === -1) return text.length
    // a quote escaped by an odd run of backslashes is part of the string
    let slashes = 0
    while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++
    if (slashes % 2 === 0) return at + 1
  }
}

/** Why `text` is too deep or too wide to parse, or undefined when it is within both limits. */
export const jsonShapeProblem = (text: string): string | undefined => {
  let depth = 0
  let values = 1
  for (let at = 0; at < text.length;) {
    const c = text.charCodeAt(at)
    if (c === QUOTE) {
      at = endOfString(text, at)
      continue
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) return `the request body is nested deeper than ${MAX_JSON_DEPTH} levels`
      let next = at + 1
      while (next < text.length && isSpace(text.charCodeAt(next))) next++
      const closed = text.charCodeAt(next)
      if (closed !== CLOSE_BRACE && closed !== CLOSE_BRACKET) values++
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--
    } else if (c === COMMA) {
      values++
    }
    if (values > MAX_JSON_VALUES) return `the request body holds more than ${MAX_JSON_VALUES.toLocaleString("en-US")} values`
    at++
  }
  return undefined
}
