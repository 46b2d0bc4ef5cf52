/**
 * Money is integer micros of a US dollar everywhere (1 dollar = 1,000,000 micros).
 * `formatMicros` is the one place the `display` format of decisions.md lives:
 * `$` then the amount with at least two decimals and no trailing zeros beyond them.
 */
export const MICROS_PER_DOLLAR = 1_000_000

export const formatMicros = (micros: number): string => {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`micros must be a safe integer, got ${micros}`)
  const sign = micros < 0 ? "-" : ""
  const absolute = Math.abs(micros)
  const dollars = Math.floor(absolute / MICROS_PER_DOLLAR)
  const fraction = String(absolute % MICROS_PER_DOLLAR).padStart(6, "0").replace(/0+$/, "").padEnd(2, "0")
  return `${sign}$${dollars}.${fraction}`
}
