/**
 * The embedded fake payment provider (the default without `PAYMENTS=stripe`; never in
 * production). Its checkout `url` is `{PUBLIC_BASE_URL}/fake-checkout/{checkout_id}`, a page
 * with Pay and Cancel (apps/api/server/fake-checkout.ts). Its events have Stripe's shapes and are
 * signed exactly as Stripe signs them (the SDK's own test-header helper), so they go through
 * the same `POST /v1/webhooks/payments`, the same signature check and the same mapping
 * (adapters/stripe/events.ts) as Stripe's.
 */
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import Stripe from "stripe"
import type { CheckoutRecord } from "../../core/domain/payments.js"
import { PaymentProvider } from "../../core/ports/payments.js"
import { microsToCents } from "../../core/rules/payments.js"
import { verifyStripeEvent } from "../stripe/events.js"
import { type FakeEventKind, FakePayments, type FakePaymentsOptions } from "./service.js"

export * from "./service.js"

/** The provider's own ids of a checkout's objects (Stripe's prefixes). */
const refsOf = (checkout: CheckoutRecord) => {
  const tail = checkout.id.slice("chk_".length)
  return { session: `cs_fake_${tail}`, paymentIntent: `pi_fake_${tail}`, charge: `ch_fake_${tail}`, dispute: `dp_fake_${tail}` }
}

/**
 * A Stripe-shaped event about the checkout. `refundMicros` is this refund's amount; the
 * charge carries the running total, as Stripe's does.
 */
export const fakeEvent = (checkout: CheckoutRecord, kind: FakeEventKind, nowSeconds: number, refundMicros?: number) => {
  const refs = refsOf(checkout)
  const cents = microsToCents(checkout.amountMicros)
  const metadata = { checkout_id: checkout.id, account_id: checkout.accountId }
  const session = (paid: boolean) => ({
    id: refs.session, object: "checkout.session", mode: "payment", client_reference_id: checkout.id, metadata,
    amount_total: cents, currency: "usd", payment_status: paid ? "paid" : "unpaid", status: paid ? "complete" : "expired",
    payment_intent: paid ? refs.paymentIntent : null
  })
  const dispute = (status: string) => ({
    id: refs.dispute, object: "dispute", amount: cents, currency: "usd", charge: refs.charge,
    payment_intent: refs.paymentIntent, reason: "fraudulent", status, metadata: {}
  })
  const [type, object] = ((): readonly [string, unknown] => {
    switch (kind) {
      case "paid":
        return ["checkout.session.completed", session(true)]
      case "canceled":
        return ["checkout.session.expired", session(false)]
      case "dispute.opened":
        return ["charge.dispute.created", dispute("needs_response")]
      case "dispute.won":
        return ["charge.dispute.closed", dispute("won")]
      case "dispute.lost":
        return ["charge.dispute.closed", dispute("lost")]
      case "refund": {
        const total = Math.min(checkout.amountMicros, checkout.refundedMicros + (refundMicros ?? checkout.amountMicros))
        return ["charge.refunded", {
          id: refs.charge, object: "charge", amount: cents, currency: "usd", payment_intent: refs.paymentIntent, metadata,
          amount_refunded: microsToCents(total), refunded: total === checkout.amountMicros
        }]
      }
    }
  })()
  return {
    id: `evt_fake_${randomBytes(12).toString("hex")}`, object: "event", api_version: Stripe.API_VERSION, created: nowSeconds,
    livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, type, data: { object }
  }
}

/** Signs a body as Stripe does (`Stripe-Signature: t=…,v1=…`). */
export const signAsStripe = (body: string, secret: string, nowSeconds: number) =>
  Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: nowSeconds })

/** The fake's two services as values (apps/runtime/layers.ts loads this module on first use). */
export const fakePaymentServices = (options: FakePaymentsOptions) => {
  const base = options.publicBaseUrl.replace(/\/+$/, "")
  const provider: PaymentProvider["Type"] = {
    name: "fake",
    createCheckout: (request) =>
      Effect.succeed({
        url: `${base}/fake-checkout/${request.checkoutId}`,
        providerSessionId: `cs_fake_${request.checkoutId.slice("chk_".length)}`
      }),
    parseEvent: (body, signature) => verifyStripeEvent(body, signature, options.webhookSecret)
  }
  const fake: FakePayments["Type"] = {
    signedEvent: (checkout, kind, refundMicros) =>
      Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => {
        const seconds = Math.floor(now / 1000)
        const event = fakeEvent(checkout, kind, seconds, refundMicros)
        const body = JSON.stringify(event)
        return { body, signature: signAsStripe(body, options.webhookSecret, seconds), eventId: event.id }
      })
  }
  return { provider, fake }
}

export const layerFakePayments = (options: FakePaymentsOptions) => {
  const { fake, provider } = fakePaymentServices(options)
  return Layer.merge(Layer.succeed(PaymentProvider, provider), Layer.succeed(FakePayments, fake))
}
