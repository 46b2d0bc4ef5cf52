/**
 * The payment provider port and the repositories of checkouts and applied events.
 * Adapters: adapters/stripe (the official SDK), adapters/fake-payments (embedded, for
 * development and tests); memory and Postgres repositories pass test/contracts/payments.ts.
 */
import { Context, Data, Effect, Option } from "effect"
import type { CheckoutRecord, PaymentEvent } from "../domain/payments.js"

/** The provider could not be reached or refused the request: nothing was created. */
export class PaymentProviderFailure extends Data.TaggedError("PaymentProviderFailure")<{ readonly message: string }> {}

/** A webhook delivery whose signature is missing, wrong, too old, or whose body is not an event. */
export class InvalidPaymentEvent extends Data.TaggedError("InvalidPaymentEvent")<{ readonly reason: string }> {}

export interface CheckoutRequest {
  readonly checkoutId: string
  readonly accountId: string
  readonly amountMicros: number
  /** Where the provider sends the buyer back. */
  readonly successUrl: string
  readonly cancelUrl: string
}

export class PaymentProvider extends Context.Tag("hush/PaymentProvider")<PaymentProvider, {
  /** `fake` or `stripe`. */
  readonly name: string
  /** Opens a hosted payment page for the amount; its address and the provider's id of it. */
  readonly createCheckout: (request: CheckoutRequest) =>
    Effect.Effect<{ readonly url: string; readonly providerSessionId: string }, PaymentProviderFailure>
  /** Checks the signature over the exact bytes received, then maps the event. */
  readonly parseEvent: (body: Uint8Array, signature: string | undefined) => Effect.Effect<PaymentEvent, InvalidPaymentEvent>
}>() {}

export class CheckoutRepo extends Context.Tag("hush/CheckoutRepo")<CheckoutRepo, {
  readonly insert: (checkout: CheckoutRecord) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Option.Option<CheckoutRecord>>
  /** The checkout locked for the current transaction. */
  readonly lock: (id: string) => Effect.Effect<Option.Option<CheckoutRecord>>
  /** The checkout whose payment is `paymentRef`, locked for the current transaction. */
  readonly lockByPaymentRef: (paymentRef: string) => Effect.Effect<Option.Option<CheckoutRecord>>
  readonly update: (checkout: CheckoutRecord) => Effect.Effect<void>
  /** Checkouts of the account whose dispute is open. */
  readonly countOpenDisputes: (accountId: string) => Effect.Effect<number>
}>() {}

export class PaymentEventRepo extends Context.Tag("hush/PaymentEventRepo")<PaymentEventRepo, {
  /**
   * Records that the event is being applied, in the current transaction: false when it was
   * already recorded (a redelivery). Concurrent claims of one id: exactly one gets true.
   */
  readonly claim: (event: { readonly id: string; readonly type: string; readonly receivedAt: number }) => Effect.Effect<boolean>
}>() {}
