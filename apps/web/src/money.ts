/**
 * Money in the dashboard: integer micros in, the API's `display` strings out (core/money.ts is
 * the one place the rule lives), and dollars as a person types them in.
 */
export { formatMicros as money } from "../../../core/money.js"

/**
 * Dollars as a person types them ("20", "12.5", "12.50") → integer micros, or null when it is
 * not a plain amount in dollars and cents. String arithmetic only: no floating point touches money.
 */
export const dollarsToMicros = (dollars: string): number | null => {
  const match = /^\s*(\d{1,7})(?:\.(\d{1,2}))?\s*$/.exec(dollars)
  if (match === null) return null
  const cents = Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"))
  return cents * 10_000
}
