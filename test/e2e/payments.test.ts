/**
 * Buying credit end to end over HTTP with the embedded fake provider: the checkout endpoint
 * (validation, 403, idempotency), the fake's page and form, and signed events delivered to
 * POST /v1/webhooks/payments: paid once however often, bad signatures refused with nothing
 * changed, disputes freezing / unfreezing / suspending, refunds never below zero.
 */
import { Option } from "effect"
import Stripe from "stripe"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fakeEvent, type FakeEventKind } from "../../adapters/fake-payments/index.js"
import { parseArgs, runAdminCommand, UsageError } from "../../apps/cli/commands.js"
import { findCheckout } from "../../core/services/payments.js"
import { claimNext, succeedJob } from "../../core/services/worker.js"
import { startTestServer, testHttpServer, type TestServer } from "../support/server.js"
import { type Browser, signUp, verifiedUser } from "./browser.js"
import { call, credits, denoise, expectProblem, readyFile } from "./helpers.js"

const TEN_DOLLARS = 10_000_000

describe("payments (fake provider)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ accountSettings: { signupsPerHourPerIp: 1_000 } })
  })
  afterAll(async () => {
    await server.close()
  })

  const checkout = async (browser: Browser, amount = TEN_DOLLARS, headers: Record<string, string> = {}) => {
    const reply = await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: amount }, headers })
    expect(reply.status, reply.text).toBe(201)
    return reply
  }

  const checkoutRecord = async (id: string) => Option.getOrThrow(await server.run(findCheckout(id)))

  /** A signed delivery of the fake's event about the checkout, as the fake sends it. */
  const signed = async (checkoutId: string, kind: FakeEventKind, options: { refundMicros?: number; secret?: string; ageSeconds?: number } = {}) => {
    const now = Math.floor(Date.now() / 1000) - (options.ageSeconds ?? 0)
    const body = JSON.stringify(fakeEvent(await checkoutRecord(checkoutId), kind, now, options.refundMicros))
    const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: options.secret ?? server.paymentsWebhookSecret, timestamp: now })
    return { body, signature }
  }

  const deliver = (delivery: { body: string; signature?: string | undefined }) =>
    call(server, "POST", "/v1/webhooks/payments", {
      raw: delivery.body,
      headers: { "content-type": "application/json; charset=utf-8", ...(delivery.signature === undefined ? {} : { "stripe-signature": delivery.signature }) }
    })

  const ledger = async (browser: Browser) => {
    const reply = await browser.request("GET", "/v1/dashboard/ledger?limit=100")
    expect(reply.status, reply.text).toBe(200)
    return reply.json.data as Array<any>
  }

  const dashboardCredits = async (browser: Browser) => (await browser.request("GET", "/v1/dashboard/credits")).json

  const liveKey = async (browser: Browser) => {
    const reply = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live", name: "k" } })
    expect(reply.status, reply.text).toBe(201)
    return reply.json.secret as string
  }

  /** A verified user who paid `amount` through the fake's page. */
  const paidUser = async (amount = TEN_DOLLARS) => {
    const { browser } = await verifiedUser(server)
    const started = await checkout(browser, amount)
    const paid = await fetch(started.json.url, {
      method: "POST", body: new URLSearchParams({ action: "pay" }), redirect: "manual"
    })
    expect(paid.status).toBe(303)
    return { browser, checkoutId: started.json.checkout_id as string }
  }

  it("checkout: 201 {checkout_id, url} on the fake's page; the page offers Pay and Cancel", async () => {
    const { browser } = await verifiedUser(server)
    const reply = await checkout(browser, 12_340_000)
    expect(Object.keys(reply.json).sort()).toEqual(["checkout_id", "url"])
    expect(reply.json.checkout_id).toMatch(/^chk_[a-z2-7]{20,}$/)
    expect(reply.json.url).toBe(`${server.baseUrl}/fake-checkout/${reply.json.checkout_id}`)
    const record = await checkoutRecord(reply.json.checkout_id)
    expect(record).toMatchObject({ status: "open", amountMicros: 12_340_000, provider: "fake", refundedMicros: 0, dispute: null, paidAt: null })
    const page = await fetch(reply.json.url)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain("$12.34")
    // it says plainly that no money moves (decisions.md, Deployment settings)
    expect(html).toMatch(/<strong>Test payment page: no money moves\.<\/strong> No card is asked for or charged; Pay adds the credit for free\./)
    expect(html).toMatch(/name="action" value="pay"/)
    expect(html).toMatch(/name="action" value="cancel"/)
    expect((await fetch(`${server.baseUrl}/fake-checkout/chk_doesnotexist`)).status).toBe(404)
  })

  it("checkout validation: 422 below $10, above $1,000, not whole cents, not an integer, unknown field; nothing created", async () => {
    const { browser } = await verifiedUser(server)
    for (const body of [
      { amount_micros: 9_990_000 }, { amount_micros: 1_000_010_000 }, { amount_micros: 10_000_001 }, { amount_micros: 10_005_000 },
      { amount_micros: 10_000_000.5 }, { amount_micros: "10000000" }, {}, { amount_micros: TEN_DOLLARS, currency: "usd" }
    ]) {
      const reply = await browser.request("POST", "/v1/dashboard/checkout", { body })
      await expectProblem(server, reply, 422, "invalid_request")
    }
    const edge = await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: 1_000_000_000 } })
    expect(edge.status, edge.text).toBe(201)
    await expectProblem(server, await browser.request("POST", "/v1/dashboard/checkout", { body: [TEN_DOLLARS] }), 400, "invalid_request")
  })

  it("checkout needs a verified address (403), a session (401) and the CSRF token (403)", async () => {
    const { browser } = await signUp(server)
    await expectProblem(server, await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: TEN_DOLLARS } }), 403, "forbidden")
    const verified = await verifiedUser(server)
    await expectProblem(server, await verified.browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: TEN_DOLLARS }, csrf: false }), 403, "forbidden")
    await expectProblem(server, await call(server, "POST", "/v1/dashboard/checkout", { body: { amount_micros: TEN_DOLLARS } }), 401, "unauthorized")
  })

  it("checkout with Idempotency-Key: a replay answers the same checkout; another amount is 409; a bad key 400", async () => {
    const { browser } = await verifiedUser(server)
    const first = await checkout(browser, TEN_DOLLARS, { "idempotency-key": "buy-1" })
    const again = await checkout(browser, TEN_DOLLARS, { "idempotency-key": "buy-1" })
    expect(again.json).toEqual(first.json)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const other = await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: 20_000_000 }, headers: { "idempotency-key": "buy-1" } })
    await expectProblem(server, other, 409, "idempotency_key_reused")
    const fresh = await checkout(browser, TEN_DOLLARS, { "idempotency-key": "buy-2" })
    expect(fresh.json.checkout_id).not.toBe(first.json.checkout_id)
    const bad = await browser.request("POST", "/v1/dashboard/checkout", { body: { amount_micros: TEN_DOLLARS }, headers: { "idempotency-key": "" } })
    await expectProblem(server, bad, 400, "invalid_request")
  })

  it("pay on the fake's page: 303 to the credits page; one purchase lot (365 days) and one purchase entry with the checkout", async () => {
    const { browser } = await verifiedUser(server)
    expect((await dashboardCredits(browser)).has_purchased).toBe(false)
    const started = await checkout(browser, 25_000_000)
    const paid = await fetch(started.json.url, { method: "POST", body: new URLSearchParams({ action: "pay" }), redirect: "manual" })
    expect(paid.status).toBe(303)
    expect(paid.headers.get("location")).toBe("/dashboard/credits?checkout=paid")
    const view = await dashboardCredits(browser)
    expect(view).toMatchObject({ balance_micros: 25_000_000, available_micros: 25_000_000, has_purchased: true })
    expect(view.lots).toHaveLength(1)
    expect(view.lots[0]).toMatchObject({ amount_micros: 25_000_000, remaining_micros: 25_000_000, source: "purchase" })
    expect(Date.parse(view.lots[0].expires_at) - Date.parse(view.lots[0].purchased_at)).toBe(365 * 86_400_000)
    const entries = await ledger(browser)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({
      kind: "purchase", balance_delta: 25_000_000, balance_after: 25_000_000, reserved_after: 0, checkout: started.json.checkout_id, job: null
    })
    expect((await browser.request("GET", "/v1/dashboard/account")).json.has_purchased).toBe(true)
    expect((await checkoutRecord(started.json.checkout_id)).status).toBe("paid")
    // paying again changes nothing
    const twice = await fetch(started.json.url, { method: "POST", body: new URLSearchParams({ action: "pay" }), redirect: "manual" })
    expect(twice.status).toBe(303)
    expect(await ledger(browser)).toHaveLength(1)
  })

  it("a form over 1 MiB on the fake's page: 413 request_too_large, unread, and nothing is paid", async () => {
    const { browser } = await verifiedUser(server)
    const started = await checkout(browser)
    const sent = fetch(started.json.url, {
      method: "POST", body: new URLSearchParams({ action: "pay", pad: "x".repeat(1024 * 1024) }), redirect: "manual"
    })
    // the platform's server ends the connection of a body over its cap (docs/architecture.md)
    if (testHttpServer() === "platform") await sent.catch(() => undefined)
    else {
      const refused = await sent
      expect(refused.status).toBe(413)
      expect(((await refused.json()) as { code: string }).code).toBe("request_too_large")
    }
    expect((await checkoutRecord(started.json.checkout_id)).status).toBe("open")
    expect(await ledger(browser)).toHaveLength(0)
  })

  it("cancel on the fake's page: 303 ?checkout=canceled, no credit; a bad action is 400", async () => {
    const { browser } = await verifiedUser(server)
    const started = await checkout(browser)
    const bad = await fetch(started.json.url, { method: "POST", body: new URLSearchParams({ action: "steal" }), redirect: "manual" })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { code: string }).code).toBe("invalid_request")
    const canceled = await fetch(started.json.url, { method: "POST", body: new URLSearchParams({ action: "cancel" }), redirect: "manual" })
    expect(canceled.status).toBe(303)
    expect(canceled.headers.get("location")).toBe("/dashboard/credits?checkout=canceled")
    expect((await checkoutRecord(started.json.checkout_id)).status).toBe("canceled")
    expect(await ledger(browser)).toHaveLength(0)
    expect((await dashboardCredits(browser)).has_purchased).toBe(false)
  })

  it("the same paid event 5 times, then 5 times at once: credited once", async () => {
    const { browser } = await verifiedUser(server)
    const started = await checkout(browser)
    const delivery = await signed(started.json.checkout_id, "paid")
    for (let i = 0; i < 5; i++) expect((await deliver(delivery)).status).toBe(200)
    const replies = await Promise.all(Array.from({ length: 5 }, () => deliver(delivery)))
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    // another event id for the same payment (Stripe may send completed and async_payment_succeeded), at once too
    const others = await Promise.all(Array.from({ length: 5 }, () => signed(started.json.checkout_id, "paid")))
    expect((await Promise.all(others.map(deliver))).map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    const entries = await ledger(browser)
    expect(entries.map((e) => e.kind)).toEqual(["purchase"])
    expect((await dashboardCredits(browser)).balance_micros).toBe(TEN_DOLLARS)
  })

  it("a bad, missing, stale or foreign signature, or an altered body: 400 invalid_request and nothing changes", async () => {
    const { browser } = await verifiedUser(server)
    const started = await checkout(browser)
    const good = await signed(started.json.checkout_id, "paid")
    const refused = [
      { body: good.body },
      { body: good.body, signature: "t=1,v1=00" },
      { body: good.body, signature: "" },
      { body: good.body.replace(`"amount_total":1000`, `"amount_total":100000`), signature: good.signature },
      await signed(started.json.checkout_id, "paid", { secret: "whsec_not_ours" }),
      await signed(started.json.checkout_id, "paid", { ageSeconds: 301 })
    ]
    for (const delivery of refused) {
      const reply = await deliver(delivery)
      await expectProblem(server, reply, 400, "invalid_request")
    }
    await expectProblem(server, await deliver({ body: "not json", signature: good.signature }), 400, "invalid_request")
    expect(await ledger(browser)).toHaveLength(0)
    expect((await checkoutRecord(started.json.checkout_id)).status).toBe("open")
    // the good one still applies afterwards (the refused ones did not use up its id)
    expect((await deliver(good)).status).toBe(200)
    expect((await dashboardCredits(browser)).balance_micros).toBe(TEN_DOLLARS)
  })

  it("a signed paid event for another amount or currency than the checkout's: 200, not credited, the checkout stays open", async () => {
    const { browser } = await verifiedUser(server)
    const started = await checkout(browser)
    const now = Math.floor(Date.now() / 1000)
    const event = fakeEvent(await checkoutRecord(started.json.checkout_id), "paid", now) as any
    for (const object of [{ ...event.data.object, amount_total: 1 }, { ...event.data.object, currency: "eur" }]) {
      const body = JSON.stringify({ ...event, id: `${event.id}_${object.currency}_${object.amount_total}`, data: { object } })
      const reply = await deliver({ body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: server.paymentsWebhookSecret, timestamp: now }) })
      expect(reply.status, reply.text).toBe(200)
    }
    expect(await ledger(browser)).toHaveLength(0)
    expect((await checkoutRecord(started.json.checkout_id)).status).toBe("open")
  })

  it("an event type the service does not know: 200 and ignored", async () => {
    const now = Math.floor(Date.now() / 1000)
    const body = JSON.stringify({ id: "evt_unknown_1", object: "event", type: "customer.created", created: now, data: { object: { id: "cus_1" } } })
    const reply = await deliver({ body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: server.paymentsWebhookSecret, timestamp: now }) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.json).toEqual({ received: true })
  })

  it("dispute opened: every keyed request 403 account_frozen; closed won: active again", async () => {
    const { browser, checkoutId } = await paidUser()
    const key = await liveKey(browser)
    expect((await call(server, "GET", "/v1/credits", { key })).status).toBe(200)
    expect((await deliver(await signed(checkoutId, "dispute.opened"))).status).toBe(200)
    await expectProblem(server, await call(server, "GET", "/v1/credits", { key }), 403, "account_frozen")
    await expectProblem(server, await call(server, "GET", "/v1/jobs", { key }), 403, "account_frozen")
    await expectProblem(server, await call(server, "POST", "/v1/files", { key, body: { filename: "a.wav", size_bytes: 10, content_type: "audio/wav" } }), 403, "account_frozen")
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("frozen")
    expect((await deliver(await signed(checkoutId, "dispute.won"))).status).toBe(200)
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("active")
    expect((await call(server, "GET", "/v1/credits", { key })).status).toBe(200)
    expect((await ledger(browser)).map((e) => e.kind)).toEqual(["purchase"])
  })

  it("dispute lost: suspended, and what remains of the purchase removed with a refund entry", async () => {
    const { browser, checkoutId } = await paidUser(30_000_000)
    const key = await liveKey(browser)
    expect((await deliver(await signed(checkoutId, "dispute.opened"))).status).toBe(200)
    expect((await deliver(await signed(checkoutId, "dispute.lost"))).status).toBe(200)
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("suspended")
    const entries = await ledger(browser)
    expect(entries[0]).toMatchObject({ kind: "refund", balance_delta: -30_000_000, balance_after: 0, checkout: checkoutId })
    expect(await credits(server, key)).toMatchObject({ balance_micros: 0, available_micros: 0 })
    await expectProblem(server, await denoise(server, key, { file: "file_x" }), 403, "account_suspended")
    // a repeated close changes nothing
    expect((await deliver(await signed(checkoutId, "dispute.lost"))).status).toBe(200)
    expect(await ledger(browser)).toHaveLength(entries.length)
  })

  it("refunds after some was spent or is held: at most what remains unheld; never a negative balance", async () => {
    const { browser, checkoutId } = await paidUser(TEN_DOLLARS)
    const key = await liveKey(browser)
    // spend: a job held and charged (the worker's own steps), and another one held
    const spentFile = await readyFile(server, key)
    const spent = await denoise(server, key, { file: spentFile })
    expect(spent.status, spent.text).toBe(202)
    const claimed = await server.run(claimNext("test-worker"))
    expect(Option.isSome(claimed)).toBe(true)
    await server.run(succeedJob(spent.json.id, "test-worker", { storageKey: "outputs/x", sizeBytes: 1, bitrateKbps: 192, format: "mp3" }))
    const cost = spent.json.cost.estimated_micros as number
    expect(cost).toBeGreaterThan(0)
    const heldFile = await readyFile(server, key)
    const held = await denoise(server, key, { file: heldFile })
    expect(held.status, held.text).toBe(202)
    const before = await credits(server, key)
    expect(before.balance_micros).toBe(TEN_DOLLARS - cost)
    expect(before.reserved_micros).toBeGreaterThan(0)

    // a $2 refund: removed
    expect((await deliver(await signed(checkoutId, "refund", { refundMicros: 2_000_000 }))).status).toBe(200)
    const partial = await credits(server, key)
    expect(partial.balance_micros).toBe(before.balance_micros - 2_000_000)
    // the rest refunded: only what is not held goes; available never negative
    expect((await deliver(await signed(checkoutId, "refund"))).status).toBe(200)
    const after = await credits(server, key)
    expect(after.balance_micros).toBe(before.reserved_micros)
    expect(after.available_micros).toBe(0)
    const refunds = (await ledger(browser)).filter((e) => e.kind === "refund")
    expect(refunds.map((e) => e.balance_delta)).toEqual([-(before.available_micros - 2_000_000), -2_000_000])
    for (const entry of await ledger(browser)) expect(entry.balance_after - entry.reserved_after).toBeGreaterThanOrEqual(0)
    // the same refund total again: nothing more
    expect((await deliver(await signed(checkoutId, "refund", { refundMicros: 0 }))).status).toBe(200)
    expect((await ledger(browser)).filter((e) => e.kind === "refund")).toHaveLength(2)
  })

  it("admin payments event: the fake's dispute and refund events, signed and checked like Stripe's, on the server's data", async () => {
    const { browser, checkoutId } = await paidUser(40_000_000)
    const send = (argv: ReadonlyArray<string>) => server.run(runAdminCommand(parseArgs(["admin", "payments", "event", ...argv]).command as never))
    const opened = await send(["--checkout", checkoutId, "--type", "dispute.opened"])
    expect(opened).toMatchObject({ checkout_id: checkoutId, type: "dispute.opened", outcome: "frozen" })
    expect(opened.event_id).toMatch(/^evt_fake_/)
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("frozen")
    expect(await send(["--checkout", checkoutId, "--type", "dispute.won"])).toMatchObject({ outcome: "dispute_won" })
    expect((await browser.request("GET", "/v1/dashboard/account")).json.status).toBe("active")
    expect(await send(["--checkout", checkoutId, "--type", "refund", "--micros", "15000000"])).toMatchObject({ outcome: "refunded" })
    expect(await send(["--checkout", checkoutId, "--type", "refund"])).toMatchObject({ outcome: "refunded" })
    expect(await send(["--checkout", checkoutId, "--type", "refund"])).toMatchObject({ outcome: "no_change" })
    const refunds = (await ledger(browser)).filter((e) => e.kind === "refund").map((e) => e.balance_delta)
    expect(refunds).toEqual([-25_000_000, -15_000_000])

    await expect(send(["--checkout", "chk_nothere", "--type", "refund"])).rejects.toThrow(/no checkout/)
    const open = await checkout((await verifiedUser(server)).browser)
    await expect(send(["--checkout", open.json.checkout_id, "--type", "dispute.opened"])).rejects.toThrow(/open, not paid/)
    await expect(send(["--checkout", checkoutId, "--type", "refund", "--micros", "1"])).rejects.toThrow(/whole number of cents/)
    expect(() => parseArgs(["admin", "payments", "event", "--checkout", checkoutId, "--type", "paid"])).toThrow(UsageError)
    expect(() => parseArgs(["admin", "payments", "event", "--checkout", checkoutId, "--type", "dispute.won", "--micros", "10000"])).toThrow(UsageError)
    expect(() => parseArgs(["admin", "payments", "event", "--type", "refund"])).toThrow(/--checkout is required/)
  })
})
