/**
 * The PaymentProvider on Stripe, through the official SDK (`PAYMENTS=stripe`): a Checkout
 * Session in payment mode for the amount in cents, our checkout id in `client_reference_id`
 * and in the metadata (of the session and of its PaymentIntent, so charges carry it too), and
 * events verified with the webhook signing secret (adapters/stripe/events.ts).
 */
import { Effect, Layer, Redacted } from "effect"
import Stripe from "stripe"
import { PaymentProvider, PaymentProviderFailure } from "../../core/ports/payments.js"
import { microsToCents } from "../../core/rules/payments.js"
import { verifyStripeEvent } from "./events.js"

export interface StripeOptions {
  /** `STRIPE_SECRET_KEY` (`sk_live_…` / `sk_test_…`). */
  readonly secretKey: Redacted.Redacted<string>
  /** `STRIPE_WEBHOOK_SECRET` (`whsec_…`), of the endpoint registered for /v1/webhooks/payments. */
  readonly webhookSecret: Redacted.Redacted<string>
  /** Another API address (`STRIPE_API_URL`, e.g. stripe-mock; tests' own server). */
  readonly api?: { readonly host: string; readonly port: number; readonly protocol: "http" | "https" } | undefined
  /** Per request; the SDK's default is 80 s, too long for a dashboard click. */
  readonly timeoutMs?: number | undefined
}

export const makeStripeClient = (options: StripeOptions) =>
  new Stripe(Redacted.value(options.secretKey), {
    maxNetworkRetries: 2,
    timeout: options.timeoutMs ?? 15_000,
    telemetry: false,
    appInfo: { name: "hush" },
    ...(options.api === undefined ? {} : { host: options.api.host, port: options.api.port, protocol: options.api.protocol })
  })

/** The provider as a value (apps/runtime/layers.ts loads this module on first use). */
export const stripePaymentProvider = (options: StripeOptions): PaymentProvider["Type"] => {
    const stripe = makeStripeClient(options)
    const webhookSecret = Redacted.value(options.webhookSecret)
    return {
      name: "stripe",
      createCheckout: (request) =>
        Effect.tryPromise({
          try: () =>
            stripe.checkout.sessions.create({
              mode: "payment",
              line_items: [{
                quantity: 1,
                price_data: { currency: "usd", unit_amount: microsToCents(request.amountMicros), product_data: { name: "Hush credit" } }
              }],
              client_reference_id: request.checkoutId,
              metadata: { checkout_id: request.checkoutId, account_id: request.accountId },
              payment_intent_data: { metadata: { checkout_id: request.checkoutId, account_id: request.accountId } },
              success_url: request.successUrl,
              cancel_url: request.cancelUrl
            }, { idempotencyKey: `hush-${request.checkoutId}` }),
          catch: (error) => new PaymentProviderFailure({ message: error instanceof Error ? error.message : String(error) })
        }).pipe(Effect.flatMap((session) =>
          session.url === null || session.url === undefined
            ? Effect.fail(new PaymentProviderFailure({ message: `Stripe answered checkout session ${session.id} without a url` }))
            : Effect.succeed({ url: session.url, providerSessionId: session.id }))),
      parseEvent: (body, signature) => verifyStripeEvent(body, signature, webhookSecret)
    }
}

export const layerStripePaymentProvider = (options: StripeOptions) => Layer.sync(PaymentProvider, () => stripePaymentProvider(options))
