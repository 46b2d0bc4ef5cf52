/**
 * Stripe's webhook events → the core's PaymentEvent. The signature (`Stripe-Signature`, 5
 * minutes' tolerance) is checked by the official SDK over the exact bytes received; both the
 * Stripe adapter and the embedded fake provider (whose events are signed the same way) use
 * this one function, so everything after the signature is shared.
 *
 * Events: `checkout.session.completed` and `…async_payment_succeeded` (paid only),
 * `checkout.session.expired`, `charge.dispute.created`, `charge.dispute.closed` (won/lost),
 * `charge.refunded` (the charge's running `amount_refunded`). Anything else is Ignored.
 */
import { Effect, Either, Schema } from "effect"
import Stripe from "stripe"
import type { PaymentEvent, PaymentTarget } from "../../core/domain/payments.js"
import { InvalidPaymentEvent } from "../../core/ports/payments.js"
import { centsToMicros } from "../../core/rules/payments.js"

/** decisions.md: a signature older than 5 minutes is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300

const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))
/** An expandable reference: the id, or the object carrying it. */
const Ref = Schema.NullishOr(Schema.Union(Id, Schema.Struct({ id: Id })))
const refId = (ref: typeof Ref.Type): string | null => (ref == null ? null : typeof ref === "string" ? ref : ref.id)
const Metadata = Schema.NullishOr(Schema.Record({ key: Schema.String, value: Schema.String }))
const Cents = Schema.Int.pipe(Schema.nonNegative())

const Envelope = Schema.Struct({
  id: Id,
  type: Schema.String,
  data: Schema.Struct({ object: Schema.Unknown })
})

const Session = Schema.Struct({
  client_reference_id: Schema.NullishOr(Schema.String),
  metadata: Metadata,
  amount_total: Schema.NullishOr(Cents),
  currency: Schema.NullishOr(Schema.String),
  payment_status: Schema.optional(Schema.String),
  payment_intent: Ref
})

const Dispute = Schema.Struct({
  status: Schema.String,
  payment_intent: Ref,
  charge: Ref,
  metadata: Metadata
})

const Charge = Schema.Struct({
  payment_intent: Ref,
  amount_refunded: Cents,
  currency: Schema.NullishOr(Schema.String),
  metadata: Metadata
})

const CHECKOUT_ID = /^chk_[a-z2-7]{20,64}$/

const checkoutIdOf = (reference: string | null | undefined, metadata: typeof Metadata.Type): string | null => {
  const candidate = reference ?? metadata?.["checkout_id"] ?? null
  return candidate !== null && CHECKOUT_ID.test(candidate) ? candidate : null
}

const targetOf = (paymentIntent: typeof Ref.Type, metadata: typeof Metadata.Type): PaymentTarget => ({
  checkoutId: checkoutIdOf(null, metadata),
  paymentRef: refId(paymentIntent)
})

const decode = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string) =>
  Either.mapLeft(Schema.decodeUnknownEither(schema)(value), () => new InvalidPaymentEvent({ reason: `the event's ${what} is not what Stripe sends` }))

/** Maps a verified event's JSON. */
export const toPaymentEvent = (json: unknown): Either.Either<PaymentEvent, InvalidPaymentEvent> =>
  Either.gen(function*() {
    const event = yield* decode(Envelope, json, "envelope")
    const eventId = event.id
    const ignored: PaymentEvent = { _tag: "Ignored", eventId, type: event.type }
    switch (event.type) {
      case "checkout.session.completed":
      case "checkout.session.async_payment_succeeded": {
        const session = yield* decode(Session, event.data.object, "checkout session")
        const checkoutId = checkoutIdOf(session.client_reference_id, session.metadata)
        if (checkoutId === null || session.payment_status !== "paid") return ignored
        if (session.amount_total == null || session.currency?.toLowerCase() !== "usd") return ignored
        return {
          _tag: "CheckoutPaid", eventId, checkoutId, amountMicros: centsToMicros(session.amount_total),
          paymentRef: refId(session.payment_intent)
        }
      }
      case "checkout.session.expired": {
        const session = yield* decode(Session, event.data.object, "checkout session")
        const checkoutId = checkoutIdOf(session.client_reference_id, session.metadata)
        return checkoutId === null ? ignored : { _tag: "CheckoutCanceled", eventId, checkoutId }
      }
      case "charge.dispute.created": {
        const dispute = yield* decode(Dispute, event.data.object, "dispute")
        return { _tag: "DisputeOpened", eventId, target: targetOf(dispute.payment_intent, dispute.metadata) }
      }
      case "charge.dispute.closed": {
        const dispute = yield* decode(Dispute, event.data.object, "dispute")
        // `warning_closed` (an inquiry that never became a dispute) moves nothing
        if (dispute.status !== "won" && dispute.status !== "lost") return ignored
        return { _tag: "DisputeClosed", eventId, target: targetOf(dispute.payment_intent, dispute.metadata), outcome: dispute.status }
      }
      case "charge.refunded": {
        const charge = yield* decode(Charge, event.data.object, "charge")
        if (charge.currency != null && charge.currency.toLowerCase() !== "usd") return ignored
        return {
          _tag: "Refunded", eventId, target: targetOf(charge.payment_intent, charge.metadata),
          refundedTotalMicros: centsToMicros(charge.amount_refunded)
        }
      }
      default:
        return ignored
    }
  })

/**
 * Checks `Stripe-Signature` over the exact bytes with the SDK (at `nowMs`, so the 5-minute
 * tolerance follows the service's clock), then maps the event.
 */
export const verifyStripeEvent = (body: Uint8Array, signature: string | undefined, secret: string) =>
  Effect.gen(function*() {
    if (signature === undefined || signature.trim() === "") {
      return yield* new InvalidPaymentEvent({ reason: "the Stripe-Signature header is missing" })
    }
    // the SDK takes the time of receipt in milliseconds
    const nowMs = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const event = yield* Effect.try({
      try: () => Stripe.webhooks.constructEvent(Buffer.from(body), signature, secret, SIGNATURE_TOLERANCE_SECONDS, undefined, nowMs),
      catch: (error) => new InvalidPaymentEvent({ reason: error instanceof Error ? error.message : "the signature does not match" })
    })
    return yield* toPaymentEvent(event)
  })
