/**
 * The fake provider's own service (beside PaymentProvider), without the Stripe SDK, so that
 * processes that never send an event do not load it.
 */
import { Context, type Effect } from "effect"
import { createHmac } from "node:crypto"
import type { CheckoutRecord } from "../../core/domain/payments.js"

/** The fake's webhook signing secret, derived from the deployment's signing secret: the server and the CLI agree on it. */
export const fakeWebhookSecret = (deploymentSecret: string) =>
  `whsec_${createHmac("sha256", deploymentSecret).update("hush fake payments webhook").digest("hex")}`

export const FAKE_EVENT_KINDS = ["paid", "canceled", "dispute.opened", "dispute.won", "dispute.lost", "refund"] as const
export type FakeEventKind = typeof FAKE_EVENT_KINDS[number]

/** What the fake's page and the operator CLI use to send its events. */
export class FakePayments extends Context.Tag("hush/adapters/FakePayments")<FakePayments, {
  /** A signed delivery of one event about the checkout: the body and its `Stripe-Signature`. */
  readonly signedEvent: (checkout: CheckoutRecord, kind: FakeEventKind, refundMicros?: number) =>
    Effect.Effect<{ readonly body: string; readonly signature: string; readonly eventId: string }>
}>() {}

export interface FakePaymentsOptions {
  readonly publicBaseUrl: string
  readonly webhookSecret: string
}
