/**
 * The Stripe adapter with the real SDK: checkout creation against a small Stripe-compatible
 * HTTP server started here (the SDK's host/port/protocol point at it), and webhooks signed by
 * the SDK's own test-header helper, end to end through a Hush server with PAYMENTS=stripe.
 */
import { Redacted } from "effect"
import { createServer, type IncomingMessage, type Server } from "node:http"
import Stripe from "stripe"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, startTestServer, type TestServer } from "../../support/server.js"
import { type Browser, verifiedUser } from "../../e2e/browser.js"
import { call, expectProblem } from "../../e2e/helpers.js"

const SECRET_KEY = "sk_test_hush_adapter_0123456789"
const WEBHOOK_SECRET = "whsec_hush_adapter_test_secret"

interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly form: URLSearchParams
}

/** Just enough of Stripe's API: POST /v1/checkout/sessions (form-encoded), answered like Stripe. */
const startStripeLike = async () => {
  const received: Array<Received> = []
  let failNext: { status: number; body: unknown } | null = null
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"))
      received.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, form })
      const reply = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json", "request-id": `req_${received.length}` })
        response.end(JSON.stringify(body))
      }
      if (request.headers.authorization !== `Bearer ${SECRET_KEY}`) return reply(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } })
      if (failNext !== null) {
        const failure = failNext
        failNext = null
        return reply(failure.status, failure.body)
      }
      if (request.method === "POST" && request.url === "/v1/checkout/sessions") {
        const id = `cs_test_${received.length}`
        return reply(200, {
          id, object: "checkout.session", mode: form.get("mode"), client_reference_id: form.get("client_reference_id"),
          amount_total: Number(form.get("line_items[0][price_data][unit_amount]")), currency: "usd", payment_status: "unpaid",
          status: "open", url: `https://checkout.stripe.com/c/pay/${id}`, metadata: { checkout_id: form.get("metadata[checkout_id]") }
        })
      }
      return reply(404, { error: { type: "invalid_request_error", message: `Unrecognized request URL (${request.method}: ${request.url})` } })
    })
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return {
    port,
    received,
    failNextWith: (status: number, body: unknown) => {
      failNext = { status, body }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("Stripe adapter (real SDK)", () => {
  let stripeLike: Awaited<ReturnType<typeof startStripeLike>>
  let server: TestServer
  beforeAll(async () => {
    stripeLike = await startStripeLike()
    server = await startTestServer({
      accountSettings: { signupsPerHourPerIp: 1_000 },
      payments: {
        provider: "stripe",
        stripe: {
          secretKey: Redacted.make(SECRET_KEY),
          webhookSecret: Redacted.make(WEBHOOK_SECRET),
          api: { host: "127.0.0.1", port: stripeLike.port, protocol: "http" }
        }
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await stripeLike?.close()
  })

  const deliver = (event: unknown, secret = WEBHOOK_SECRET) => {
    const body = JSON.stringify(event)
    const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret })
    return call(server, "POST", "/v1/webhooks/payments", { raw: body, headers: { "content-type": "application/json", "stripe-signature": signature } })
  }

  const startCheckout = async (browser: Browser, amount: number) => {
    const reply = await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: amount } })
    expect(reply.status, reply.text).toBe(201)
    return reply.json as { checkout_id: string; url: string }
  }

  it("creates a Checkout Session in payment mode for the amount in cents, with the checkout id and the dashboard's URLs", async () => {
    const { browser } = await verifiedUser(server)
    const before = stripeLike.received.length
    const checkout = await startCheckout(browser, 12_340_000)
    expect(checkout.url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_\d+$/)
    const sent = stripeLike.received.slice(before)
    expect(sent).toHaveLength(1)
    const { form, headers, path, method } = sent[0]!
    expect({ method, path }).toEqual({ method: "POST", path: "/v1/checkout/sessions" })
    expect(headers["idempotency-key"]).toBe(`hush-${checkout.checkout_id}`)
    expect(Object.fromEntries(form)).toMatchObject({
      "mode": "payment",
      "client_reference_id": checkout.checkout_id,
      "metadata[checkout_id]": checkout.checkout_id,
      "payment_intent_data[metadata][checkout_id]": checkout.checkout_id,
      "line_items[0][quantity]": "1",
      "line_items[0][price_data][currency]": "usd",
      "line_items[0][price_data][unit_amount]": "1234",
      "success_url": `${server.baseUrl}/dashboard/credits?checkout=paid`,
      "cancel_url": `${server.baseUrl}/dashboard/credits?checkout=canceled`
    })
    // no fake page with Stripe
    expect((await fetch(`${server.baseUrl}/fake-checkout/${checkout.checkout_id}`)).status).toBe(404)
  })

  it("Stripe refusing the session: 502 provider_error, not recorded: the retry with the same key runs afresh", async () => {
    const { browser } = await verifiedUser(server)
    stripeLike.failNextWith(400, { error: { type: "invalid_request_error", message: "Amount must convert to at least 50 cents." } })
    const refused = await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: 10_000_000 }, headers: { "idempotency-key": "k1" } })
    await expectProblem(server, refused, 502, "provider_error")
    const retried = await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: 10_000_000 }, headers: { "idempotency-key": "k1" } })
    expect(retried.status, retried.text).toBe(201)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
  })

  it("webhooks signed by the SDK: completed → purchase; dispute created/closed lost by payment intent → frozen, suspended, refund", async () => {
    const { browser } = await verifiedUser(server)
    const checkout = await startCheckout(browser, 20_000_000)
    const session = {
      id: "cs_test_paid", object: "checkout.session", mode: "payment", client_reference_id: checkout.checkout_id,
      metadata: { checkout_id: checkout.checkout_id }, amount_total: 2000, currency: "usd", payment_status: "paid",
      status: "complete", payment_intent: "pi_test_123"
    }
    // unpaid (e.g. a delayed payment method) credits nothing
    expect((await deliver({ id: "evt_s0", object: "event", type: "checkout.session.completed", data: { object: { ...session, payment_status: "unpaid" } } })).status).toBe(200)
    expect((await browser.request("GET", "/v1/dashboard/credits")).json.balance_micros).toBe(0)
    // a wrong secret is refused
    await expectProblem(server, await deliver({ id: "evt_s1", object: "event", type: "checkout.session.completed", data: { object: session } }, "whsec_other"), 400, "invalid_request")
    expect((await deliver({ id: "evt_s1", object: "event", type: "checkout.session.completed", data: { object: session } })).status).toBe(200)
    expect((await browser.request("GET", "/v1/dashboard/credits")).json).toMatchObject({ balance_micros: 20_000_000, has_purchased: true })

    const dispute = { id: "dp_1", object: "dispute", charge: "ch_1", payment_intent: "pi_test_123", amount: 2000, status: "needs_response", metadata: {} }
    expect((await deliver({ id: "evt_d1", object: "event", type: "charge.dispute.created", data: { object: dispute } })).status).toBe(200)
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("frozen")
    // warning_closed moves nothing
    expect((await deliver({ id: "evt_d2", object: "event", type: "charge.dispute.closed", data: { object: { ...dispute, status: "warning_closed" } } })).status).toBe(200)
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("frozen")
    expect((await deliver({ id: "evt_d3", object: "event", type: "charge.dispute.closed", data: { object: { ...dispute, status: "lost" } } })).status).toBe(200)
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("suspended")
    const ledger = (await browser.request("GET", "/v1/dashboard/ledger")).json.data
    expect(ledger.map((e: any) => [e.kind, e.balance_delta, e.checkout])).toEqual([
      ["refund", -20_000_000, checkout.checkout_id], ["purchase", 20_000_000, checkout.checkout_id]
    ])
  })

  it("charge.refunded carries the running total: each refund removes only the new part", async () => {
    const { browser } = await verifiedUser(server)
    const checkout = await startCheckout(browser, 50_000_000)
    const session = {
      id: "cs_test_r", object: "checkout.session", client_reference_id: checkout.checkout_id, metadata: {},
      amount_total: 5000, currency: "usd", payment_status: "paid", payment_intent: { id: "pi_test_refunds" }
    }
    expect((await deliver({ id: "evt_r0", object: "event", type: "checkout.session.completed", data: { object: session } })).status).toBe(200)
    const charge = (refunded: number) => ({ id: "ch_r", object: "charge", payment_intent: "pi_test_refunds", amount: 5000, amount_refunded: refunded, currency: "usd", metadata: {} })
    expect((await deliver({ id: "evt_r1", object: "event", type: "charge.refunded", data: { object: charge(1000) } })).status).toBe(200)
    expect((await deliver({ id: "evt_r2", object: "event", type: "charge.refunded", data: { object: charge(1500) } })).status).toBe(200)
    // an older total arriving late changes nothing
    expect((await deliver({ id: "evt_r3", object: "event", type: "charge.refunded", data: { object: charge(1000) } })).status).toBe(200)
    const credits = (await browser.request("GET", "/v1/dashboard/credits")).json
    expect(credits.balance_micros).toBe(50_000_000 - 15_000_000)
    const refunds = (await browser.request("GET", "/v1/dashboard/ledger")).json.data.filter((e: any) => e.kind === "refund")
    expect(refunds.map((e: any) => e.balance_delta)).toEqual([-5_000_000, -10_000_000])
  })
})
