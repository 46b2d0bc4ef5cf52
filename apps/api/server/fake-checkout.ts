/**
 * The embedded fake provider's payment page (decisions.md, Payments): `GET
 * /fake-checkout/{checkout_id}` shows the amount with Pay and Cancel; `POST` with form field
 * `action=pay` or `action=cancel` delivers a signed `checkout.session.completed` (or
 * `checkout.session.expired`) event to the service's own `POST /v1/webhooks/payments`, the
 * path Stripe uses, then answers `303` to `/dashboard/credits?checkout=paid` (or `canceled`).
 * Absent (404) when Stripe takes the payments.
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse, UrlParams } from "@effect/platform"
import { Effect, Option } from "effect"
import { FakePayments } from "../../../adapters/fake-payments/service.js"
import { AccountSettingsConfig } from "../../../core/domain/account-settings.js"
import type { CheckoutRecord } from "../../../core/domain/payments.js"
import { InvalidRequest, NotFound, ProviderError, ServiceUnavailable } from "../../../core/errors.js"
import { formatMicros } from "../../../core/money.js"
import type { CheckoutRepo } from "../../../core/ports/payments.js"
import { findCheckout } from "../../../core/services/payments.js"
import { exceedsMaxBodySize, tooLarge, underBodyCap } from "./edge/body.js"

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Only successes are pages: the edge answers every failure as an RFC 9457 problem. */
const page = (title: string, body: string) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<title>${escapeHtml(title)} · Hush test payments</title></head><body><main>` +
      `<p role="note"><strong>Test payment page: no money moves.</strong> No card is asked for or charged; Pay adds the credit ` +
      `for free. This page exists only while the server runs its embedded fake provider (PAYMENTS=fake), which a production ` +
      `deployment (HUSH_ENV=production) refuses to start with.</p>${body}</main></body></html>`,
    { contentType: "text/html; charset=utf-8", headers: { "cache-control": "no-store", "x-frame-options": "DENY" } }
  )

const checkoutPage = (checkout: CheckoutRecord) => {
  const amount = escapeHtml(formatMicros(checkout.amountMicros))
  const action = `/fake-checkout/${encodeURIComponent(checkout.id)}`
  if (checkout.status !== "open") {
    return page("Checkout closed", `<h1>Checkout ${escapeHtml(checkout.id)}</h1><p>This checkout is ${escapeHtml(checkout.status)}.</p>` +
      `<p><a href="/dashboard/credits">Back to credits</a></p>`)
  }
  return page(`Pay ${amount}`, `<h1>Buy ${amount} of Hush credit</h1>` +
    `<p>Checkout <code>${escapeHtml(checkout.id)}</code></p>` +
    `<form method="post" action="${escapeHtml(action)}">` +
    `<button type="submit" name="action" value="pay">Pay ${amount}</button> ` +
    `<button type="submit" name="action" value="cancel">Cancel</button></form>`)
}

const notFound = () => Effect.fail(new NotFound({ detail: "no such checkout" }))

/** The checkout of the path, when the fake provider runs and the checkout exists. */
const currentCheckout = Effect.gen(function*() {
  const fake = yield* Effect.serviceOption(FakePayments)
  if (Option.isNone(fake)) return Option.none()
  const { checkout_id } = yield* HttpRouter.params
  if (checkout_id === undefined) return Option.none()
  return Option.map(yield* findCheckout(checkout_id), (checkout) => ({ checkout, fake: fake.value }))
})

const showPage = Effect.flatMap(currentCheckout, Option.match({ onNone: notFound, onSome: ({ checkout }) => Effect.succeed(checkoutPage(checkout)) }))

const submit = Effect.gen(function*() {
  const found = yield* currentCheckout
  if (Option.isNone(found)) return yield* notFound()
  const { checkout, fake } = found.value
  const request = yield* HttpServerRequest.HttpServerRequest
  // under the API's cap on any server (the platform's own allows 10 MB); an unreadable form has no action
  const form = yield* underBodyCap(request.urlParamsBody).pipe(
    Effect.catchAll((error) => exceedsMaxBodySize(error) ? Effect.fail(tooLarge()) : Effect.succeed(UrlParams.empty))
  )
  const action = Option.getOrUndefined(UrlParams.getFirst(form, "action"))
  if (action !== "pay" && action !== "cancel") {
    return yield* new InvalidRequest({ status: 400, field: "action", detail: "the form field action must be pay or cancel" })
  }
  const outcome = action === "pay" ? "paid" : "canceled"
  if (checkout.status === "paid" && action === "pay") return HttpServerResponse.redirect("/dashboard/credits?checkout=paid", { status: 303 })
  if (checkout.status !== "open") {
    return yield* new InvalidRequest({ status: 422, field: "action", detail: `checkout ${checkout.id} is ${checkout.status}` })
  }
  const delivery = yield* fake.signedEvent(checkout, outcome)
  const { publicBaseUrl } = yield* AccountSettingsConfig
  // over HTTP to our own webhook path, exactly as Stripe delivers
  const status = yield* Effect.tryPromise(() =>
    fetch(`${publicBaseUrl}/v1/webhooks/payments`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": delivery.signature },
      body: delivery.body,
      signal: AbortSignal.timeout(15_000)
    }).then(async (response) => {
      await response.arrayBuffer()
      return response.status
    })
  ).pipe(Effect.orElseSucceed(() => 0))
  if (status !== 200) {
    yield* Effect.logError(`the fake provider could not deliver event ${delivery.eventId} to ${publicBaseUrl}/v1/webhooks/payments (status ${status})`)
    // this service unreachable or briefly unavailable (its database): the payer tries again, and the
    // event, delivered again under its id, credits once (decisions.md, Faults)
    if (status === 0 || status === 503) {
      return yield* new ServiceUnavailable({ detail: "the payment could not be confirmed to this service yet; try again shortly", retryAfterSeconds: 2 })
    }
    return yield* new ProviderError({ detail: "the fake provider could not deliver the payment event to this service; try again" })
  }
  return HttpServerResponse.redirect(`/dashboard/credits?checkout=${outcome}`, { status: 303 })
})

export const FakeCheckoutRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    // the core's services as this layer was built with them (FakePayments among them or not)
    const services = yield* Effect.context<CheckoutRepo | AccountSettingsConfig>()
    yield* router.get("/fake-checkout/:checkout_id", Effect.provide(showPage, services))
    yield* router.post("/fake-checkout/:checkout_id", Effect.provide(submit, services))
  }))
