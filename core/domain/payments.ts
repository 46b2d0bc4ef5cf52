/**
 * Buying credit (decisions.md, Payments): checkouts and the payment provider's events as the
 * core sees them, whichever provider (Stripe, or the embedded fake) sent them.
 */
import { Schema } from "effect"

export const CheckoutStatus = Schema.Literal("open", "paid", "canceled")
export type CheckoutStatus = typeof CheckoutStatus.Type

/** The last state of a card dispute on the checkout's payment; null when none was opened. */
export const DisputeState = Schema.Literal("open", "won", "lost")
export type DisputeState = typeof DisputeState.Type

export class CheckoutRecord extends Schema.Class<CheckoutRecord>("CheckoutRecord")({
  id: Schema.String,
  accountId: Schema.String,
  amountMicros: Schema.Int,
  status: CheckoutStatus,
  /** `fake` or `stripe`: who was asked to take the payment. */
  provider: Schema.String,
  /** The provider's page the buyer is sent to. */
  url: Schema.String,
  /** The provider's own id of the checkout (a Stripe Checkout Session `cs_…`). */
  providerSessionId: Schema.NullOr(Schema.String),
  /** The payment (a Stripe PaymentIntent `pi_…`), known once paid: disputes and refunds name it. */
  paymentRef: Schema.NullOr(Schema.String),
  /** What the provider reported refunded so far, in total (its events carry the running total). */
  refundedMicros: Schema.Int,
  dispute: Schema.NullOr(DisputeState),
  createdAt: Schema.Int,
  paidAt: Schema.NullOr(Schema.Int)
}) {}

/** How an event names the purchase it is about: our checkout id, or the provider's payment. */
export interface PaymentTarget {
  readonly checkoutId: string | null
  readonly paymentRef: string | null
}

/** A verified provider event, mapped to what the core acts on. `eventId` is applied at most once. */
export type PaymentEvent =
  | {
    readonly _tag: "CheckoutPaid"
    readonly eventId: string
    readonly checkoutId: string
    /** What the provider says was paid, to be checked against the checkout. */
    readonly amountMicros: number
    readonly paymentRef: string | null
  }
  | { readonly _tag: "CheckoutCanceled"; readonly eventId: string; readonly checkoutId: string }
  | { readonly _tag: "DisputeOpened"; readonly eventId: string; readonly target: PaymentTarget }
  | { readonly _tag: "DisputeClosed"; readonly eventId: string; readonly target: PaymentTarget; readonly outcome: "won" | "lost" }
  | {
    readonly _tag: "Refunded"
    readonly eventId: string
    readonly target: PaymentTarget
    /** Everything refunded on this payment so far (not this refund alone). */
    readonly refundedTotalMicros: number
  }
  /** A type the service does not act on: answered 200 and ignored. */
  | { readonly _tag: "Ignored"; readonly eventId: string; readonly type: string }
