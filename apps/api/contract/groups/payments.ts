/**
 * The payment provider's webhook (decisions.md, Payments). No key and no session: the
 * `Stripe-Signature` over the exact body is the authentication (a bad or missing one is `400`
 * and nothing changes), and it is never rate limited. No payload schema either: the body is
 * the provider's, read raw by the handler, so none of the strict-object rules of our own
 * bodies applies to it.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { RateBucket } from "../annotations.js"
import { withoutCaller } from "../declare.js"

export class PaymentWebhookReceived extends Schema.Class<PaymentWebhookReceived>("PaymentWebhookReceived")({
  received: Schema.propertySignature(Schema.Literal(true)).annotations({ description: "Always true: the event was checked and taken." })
}, { description: "The event was received." }) {}

export const PaymentWebhookGroup = withoutCaller(HttpApiGroup.make("paymentWebhooks")
  .add(
    HttpApiEndpoint.post("receivePaymentEvent", "/v1/webhooks/payments")
      .setHeaders(Schema.Struct({
        "stripe-signature": Schema.optional(Schema.String).annotations({ description: "The provider's signature over the exact body (Stripe's scheme); a bad or missing one is 400." })
      }))
      .addSuccess(PaymentWebhookReceived)
      .annotate(RateBucket, "unlimited")
      .annotate(OpenApi.Summary, "Receive a payment provider event")
      .annotate(
        OpenApi.Description,
        "For the payment provider only: a signed event (Stripe's `Stripe-Signature` scheme, 5 minutes' tolerance). " +
          "Each event id is applied at most once; unknown event types are answered 200 and ignored."
      )
  )
  .annotate(OpenApi.Description, "The payment provider's signed events (Stripe, or the embedded fake provider): credit, disputes, refunds."))
