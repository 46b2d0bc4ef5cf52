/** The payment webhook: the raw body and its signature to the core, which checks and applies it. */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { InvalidRequest } from "../../../../core/errors.js"
import { receivePaymentWebhook } from "../../../../core/services/payments.js"
import { HushApi } from "../../contract/definition.js"
import { PaymentWebhookReceived } from "../../contract/groups/payments.js"

export const PaymentWebhookHandlers = HttpApiBuilder.group(HushApi, "paymentWebhooks", (handlers) =>
  Effect.succeed(handlers.handle("receivePaymentEvent", ({ headers }) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // the edge has read the body already (its limits); this is the same text, cached. The
      // signature covers the bytes: valid UTF-8, which every provider sends, round-trips exactly.
      const text = yield* Effect.mapError(request.text, () => new InvalidRequest({ status: 400, detail: "the request body could not be read" }))
      const outcome = yield* receivePaymentWebhook(new TextEncoder().encode(text), headers["stripe-signature"])
      yield* Effect.logInfo(`payment event: ${outcome}`)
      return new PaymentWebhookReceived({ received: true })
    }))))
