/**
 * The rules of buying credit (decisions.md, Payments): checkout amounts, and what each
 * provider event does to a checkout and its account.
 */
import { Either } from "effect"
import type { CheckoutRecord, DisputeState } from "../domain/payments.js"
import { InvalidRequest } from "../errors.js"
import { formatMicros } from "../money.js"

export const MIN_CHECKOUT_MICROS = 10_000_000
export const MAX_CHECKOUT_MICROS = 1_000_000_000
/** Card payments are in whole cents. */
export const MICROS_PER_CENT = 10_000

export const microsToCents = (micros: number): number => {
  if (!Number.isSafeInteger(micros) || micros % MICROS_PER_CENT !== 0) {
    throw new RangeError(`${micros} micros is not a whole number of cents`)
  }
  return micros / MICROS_PER_CENT
}

export const centsToMicros = (cents: number): number => cents * MICROS_PER_CENT

/** `amount_micros`: at least $10, at most $1,000, a whole number of cents; else `422`. */
export const checkCheckoutAmount = (amountMicros: number): Either.Either<number, InvalidRequest> => {
  const refuse = (why: string) =>
    Either.left(new InvalidRequest({ status: 422, field: "amount_micros", detail: `amount_micros ${why}` }))
  if (!Number.isSafeInteger(amountMicros)) return refuse("must be an integer number of micros")
  if (amountMicros < MIN_CHECKOUT_MICROS) return refuse(`must be at least ${MIN_CHECKOUT_MICROS} (${formatMicros(MIN_CHECKOUT_MICROS)})`)
  if (amountMicros > MAX_CHECKOUT_MICROS) return refuse(`must be at most ${MAX_CHECKOUT_MICROS} (${formatMicros(MAX_CHECKOUT_MICROS)})`)
  if (amountMicros % MICROS_PER_CENT !== 0) return refuse(`must be a whole number of cents (a multiple of ${MICROS_PER_CENT})`)
  return Either.right(amountMicros)
}

/**
 * What a refund takes from the purchase: the growth of the provider's running total since the
 * last refund seen (events may repeat or arrive out of order), never more than was paid.
 */
export const newlyRefunded = (checkout: CheckoutRecord, refundedTotalMicros: number): number =>
  Math.max(0, Math.min(refundedTotalMicros, checkout.amountMicros) - checkout.refundedMicros)

/** A closed dispute only moves a dispute that is open; a repeated close changes nothing. */
export const closeDispute = (current: DisputeState | null, outcome: "won" | "lost"): DisputeState | null =>
  current === "open" ? outcome : current
