/**
 * Outbound webhooks over HTTP (decisions.md, Events): endpoints API, signed deliveries of
 * file.ready and job.succeeded to a receiver inside the test (checked with the
 * `standardwebhooks` verifier), the deliveries log, SSRF refusals, every error path, and
 * delivery never holding up the job that triggered it.
 */
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../../core/services/accounts.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { signUp } from "./browser.js"
import { type Receiver, startReceiver } from "../support/webhook-receiver.js"
import { call, denoise, expectIso, expectProblem, junk, pollUntil, readyFile, uploadFile, waitForFile, waitForJob } from "./helpers.js"

const createEndpoint = (server: TestServer, key: string, body: unknown, headers?: Record<string, string>) =>
  call(server, "POST", "/v1/webhook_endpoints", { key, body, ...(headers === undefined ? {} : { headers }) })

const ENDPOINT_KEYS = ["created_at", "description", "disabled_at", "events", "id", "mode", "object", "status", "url"]

describe("webhooks", () => {
  let server: TestServer
  let receiver: Receiver
  let hangingReceiver: Receiver

  beforeAll(async () => {
    // the built-in worker runs the delivery loop, as `npm start` does; the receivers are on
    // 127.0.0.1, which WEBHOOKS_ALLOW_PRIVATE allows (the describe below runs without it)
    server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" }, webhooksAllowPrivate: true })
    receiver = await startReceiver()
    hangingReceiver = await startReceiver(() => "hang")
  })
  afterAll(async () => {
    await server.close()
    await receiver.close()
    await hangingReceiver.close()
  })

  it("delivers file.ready and job.succeeded signed so that the standardwebhooks verifier accepts them", async () => {
    const account = await server.createAccount()
    const created = await createEndpoint(server, account.testKey, {
      url: receiver.url, events: ["job.succeeded", "file.ready"], description: "my receiver"
    })
    expect(created.status, created.text).toBe(201)
    expect(Object.keys(created.json).sort()).toEqual([...ENDPOINT_KEYS, "secret"].sort())
    expect(created.json).toMatchObject({
      object: "webhook_endpoint", url: receiver.url, events: ["job.succeeded", "file.ready"], description: "my receiver",
      status: "enabled", mode: "test", disabled_at: null
    })
    expect(created.json.id).toMatch(/^whe_[a-z2-7]{24}$/)
    expect(created.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expectIso(created.json.created_at)
    const secret = created.json.secret as string

    const before = receiver.received.length
    const fileId = await readyFile(server, account.testKey)
    const job = await denoise(server, account.testKey, { file: fileId })
    expect(job.status, job.text).toBe(202)
    const done = await waitForJob(server, account.testKey, job.json.id)
    expect(done.json.status).toBe("succeeded")
    await receiver.waitFor(before + 2)
    const mine = receiver.received.slice(before)

    const verifier = new Webhook(secret)
    const events = mine.map((request) => {
      const headers = {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"])
      }
      expect(request.headers["content-type"]).toBe("application/json")
      expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
      const verified = verifier.verify(request.body, headers) as { id: string; type: string; created_at: string; data: any }
      // the same body, parsed, and the header names the event
      expect(verified).toEqual(JSON.parse(request.body))
      expect(verified.id).toMatch(/^evt_/)
      expect(headers["webhook-id"]).toBe(verified.id)
      expectIso(verified.created_at)
      // another secret, or a changed body, is refused
      expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(request.body, headers)).toThrow()
      expect(() => verifier.verify(request.body.replace("}", " }"), headers)).toThrow()
      return verified
    }).sort((a, b) => a.type.localeCompare(b.type))
    expect(events.map((e) => e.type)).toEqual(["file.ready", "job.succeeded"])
    expect(Object.keys(events[0]!).sort()).toEqual(["created_at", "data", "id", "type"])
    // data is the File and the Job as GET shows them
    expect(events[0]!.data).toEqual((await call(server, "GET", `/v1/files/${fileId}`, { key: account.testKey })).json)
    expect(events[1]!.data).toEqual(done.json)

    // the deliveries log: newest first, each attempt with its status and duration
    const log = await pollUntil(
      () => call(server, "GET", `/v1/webhook_endpoints/${created.json.id}/deliveries`, { key: account.testKey }),
      (r) => r.json?.data?.length === 2 && r.json.data.every((d: any) => d.status === "succeeded"),
      10_000
    )
    expect(log.json.next_cursor).toBeNull()
    const [newest, oldest] = log.json.data
    expect(newest.event_type).toBe("job.succeeded")
    expect(oldest.event_type).toBe("file.ready")
    for (const delivery of log.json.data) {
      expect(Object.keys(delivery).sort()).toEqual(
        ["attempts", "created_at", "event_id", "event_type", "finished_at", "id", "next_attempt_at", "object", "status"]
      )
      expect(delivery.id).toMatch(/^whd_/)
      expect(delivery.object).toBe("webhook_delivery")
      expect(delivery.next_attempt_at).toBeNull()
      expectIso(delivery.finished_at)
      expect(delivery.attempts).toHaveLength(1)
      expect(delivery.attempts[0]).toMatchObject({ status_code: 200, error: null })
      expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(0)
    }
    expect(events.map((e) => e.id).sort()).toEqual(log.json.data.map((d: any) => d.event_id).sort())
    // the live mode's endpoints are apart: this test-mode endpoint is not listed there
    const liveList = await call(server, "GET", "/v1/webhook_endpoints", { key: account.liveKey })
    expect(liveList.json).toEqual({ data: [], next_cursor: null })
  })

  it("delivers file.rejected with the rejected File", async () => {
    const account = await server.createAccount()
    const created = await createEndpoint(server, account.testKey, { url: receiver.url, events: ["file.rejected"] })
    const before = receiver.received.length
    const fileId = await uploadFile(server, account.testKey, junk(4096), { filename: "noise.mp3", content_type: "audio/mpeg" })
    const file = await waitForFile(server, account.testKey, fileId)
    expect(file.json.status).toBe("rejected")
    await receiver.waitFor(before + 1)
    const request = receiver.received.slice(before).find((r) => JSON.parse(r.body).data?.id === fileId)!
    const event = new Webhook(created.json.secret).verify(request.body, {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"])
    }) as any
    expect(event.type).toBe("file.rejected")
    expect(event.data).toEqual(file.json)
  })

  it("pages the deliveries log by cursor, newest first", async () => {
    const account = await server.createAccount()
    const created = await createEndpoint(server, account.testKey, { url: receiver.url, events: ["file.ready"] })
    for (let i = 0; i < 3; i++) await readyFile(server, account.testKey)
    const path = `/v1/webhook_endpoints/${created.json.id}/deliveries`
    await pollUntil(() => call(server, "GET", path, { key: account.testKey }), (r) => r.json?.data?.length === 3, 10_000)
    const first = await call(server, "GET", `${path}?limit=2`, { key: account.testKey })
    expect(first.json.data).toHaveLength(2)
    expect(first.json.next_cursor).toEqual(expect.any(String))
    const second = await call(server, "GET", `${path}?limit=2&cursor=${encodeURIComponent(first.json.next_cursor)}`, { key: account.testKey })
    expect(second.json.data).toHaveLength(1)
    expect(second.json.next_cursor).toBeNull()
    const all = [...first.json.data, ...second.json.data]
    expect(new Set(all.map((d: any) => d.id)).size).toBe(3)
    const times = all.map((d: any) => Date.parse(d.created_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    // a cursor of another endpoint's listing is refused
    const other = await createEndpoint(server, account.testKey, { url: receiver.url, events: ["file.ready"] })
    await expectProblem(
      server,
      await call(server, "GET", `/v1/webhook_endpoints/${other.json.id}/deliveries?cursor=${encodeURIComponent(first.json.next_cursor)}`, { key: account.testKey }),
      400, "invalid_request"
    )
  })

  it("lists, reads and deletes endpoints; the secret is shown on creation only", async () => {
    const account = await server.createAccount()
    const a = await createEndpoint(server, account.testKey, { url: receiver.url, events: ["job.failed"] })
    const b = await createEndpoint(server, account.testKey, { url: `${receiver.url}/b`, events: ["job.canceled", "file.rejected"] })
    const list = await call(server, "GET", "/v1/webhook_endpoints", { key: account.testKey })
    expect(list.status).toBe(200)
    expect(list.json.data.map((e: any) => e.id)).toEqual([a.json.id, b.json.id])
    for (const endpoint of list.json.data) expect(Object.keys(endpoint).sort()).toEqual(ENDPOINT_KEYS)
    const got = await call(server, "GET", `/v1/webhook_endpoints/${b.json.id}`, { key: account.testKey })
    expect(got.status).toBe(200)
    expect(got.json.secret).toBeUndefined()
    expect(got.json).toMatchObject({ id: b.json.id, events: ["job.canceled", "file.rejected"], description: null })
    const deleted = await call(server, "DELETE", `/v1/webhook_endpoints/${a.json.id}`, { key: account.testKey })
    expect(deleted.status).toBe(204)
    await expectProblem(server, await call(server, "GET", `/v1/webhook_endpoints/${a.json.id}`, { key: account.testKey }), 404, "not_found")
    await expectProblem(server, await call(server, "DELETE", `/v1/webhook_endpoints/${a.json.id}`, { key: account.testKey }), 404, "not_found")
    await expectProblem(
      server, await call(server, "GET", `/v1/webhook_endpoints/${a.json.id}/deliveries`, { key: account.testKey }), 404, "not_found"
    )
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key: account.testKey })).json.data.map((e: any) => e.id)).toEqual([b.json.id])
  })

  it("an Idempotency-Key replays the creation instead of making a second endpoint", async () => {
    const account = await server.createAccount()
    const body = { url: receiver.url, events: ["file.ready"] }
    const first = await createEndpoint(server, account.testKey, body, { "idempotency-key": "hook-1" })
    const again = await createEndpoint(server, account.testKey, body, { "idempotency-key": "hook-1" })
    expect(again.status).toBe(201)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.json.id).toBe(first.json.id)
    await expectProblem(
      server, await createEndpoint(server, account.testKey, { ...body, events: ["job.failed"] }, { "idempotency-key": "hook-1" }),
      409, "idempotency_key_reused"
    )
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key: account.testKey })).json.data).toHaveLength(1)
  })

  it("answers every bad request with a problem and changes nothing", async () => {
    const account = await server.createAccount()
    const key = account.testKey
    const invalid = async (body: unknown, field: RegExp) => {
      const problem = await expectProblem(server, await createEndpoint(server, key, body), 422, "invalid_request")
      expect(JSON.stringify(problem)).toMatch(field)
    }
    await invalid({ url: "not a url", events: ["file.ready"] }, /url/)
    await invalid({ url: "ftp://example.com/x", events: ["file.ready"] }, /url/)
    await invalid({ url: "https://user:pw@example.com/x", events: ["file.ready"] }, /user name or password/)
    // the port rule holds with WEBHOOKS_ALLOW_PRIVATE too: it lifts the address rule only
    await invalid({ url: "http://127.0.0.1:22/hooks", events: ["file.ready"] }, /url port 22 is not allowed/)
    await invalid({ url: receiver.url, events: [] }, /events/)
    await invalid({ url: receiver.url, events: ["job.started"] }, /events/)
    await invalid({ url: receiver.url }, /events/)
    await invalid({ url: receiver.url, events: ["file.ready"], extra: 1 }, /extra/)
    await invalid({ url: `https://example.com/${"x".repeat(2100)}`, events: ["file.ready"] }, /url/)
    await invalid({ url: receiver.url, events: ["file.ready"], description: "d".repeat(501) }, /description/)
    await expectProblem(server, await call(server, "POST", "/v1/webhook_endpoints", { key, raw: "{", headers: { "content-type": "application/json" } }), 400, "invalid_request")
    await expectProblem(server, await createEndpoint(server, "hush_test_nope", { url: receiver.url, events: ["file.ready"] }), 401, "unauthorized")
    await expectProblem(server, await call(server, "GET", "/v1/webhook_endpoints/whe_unknown", { key }), 404, "not_found")
    await expectProblem(server, await call(server, "GET", "/v1/webhook_endpoints/whe_unknown/deliveries?limit=0", { key }), 400, "invalid_request")
    await expectProblem(server, await call(server, "PUT", "/v1/webhook_endpoints", { key }), 405, "method_not_allowed")
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key })).json.data).toEqual([])

    // another account's endpoint, or the other mode's, is not found
    const other = await server.createAccount()
    const theirs = await createEndpoint(server, other.testKey, { url: receiver.url, events: ["file.ready"] })
    await expectProblem(server, await call(server, "GET", `/v1/webhook_endpoints/${theirs.json.id}`, { key }), 404, "not_found")
    await expectProblem(server, await call(server, "DELETE", `/v1/webhook_endpoints/${theirs.json.id}`, { key }), 404, "not_found")
    await expectProblem(server, await call(server, "GET", `/v1/webhook_endpoints/${theirs.json.id}`, { key: other.liveKey }), 404, "not_found")
    expect((await call(server, "GET", `/v1/webhook_endpoints/${theirs.json.id}`, { key: other.testKey })).status).toBe(200)

    // a bad cursor
    const mine = await createEndpoint(server, key, { url: receiver.url, events: ["file.ready"] })
    await expectProblem(server, await call(server, "GET", `/v1/webhook_endpoints/${mine.json.id}/deliveries?cursor=forged`, { key }), 400, "invalid_request")
  })

  it("allows at most 16 endpoints per account and mode", async () => {
    const account = await server.createAccount()
    for (let i = 0; i < 16; i++) {
      expect((await createEndpoint(server, account.testKey, { url: `${receiver.url}/${i}`, events: ["file.ready"] })).status).toBe(201)
    }
    const problem = await expectProblem(
      server, await createEndpoint(server, account.testKey, { url: receiver.url, events: ["file.ready"] }), 422, "invalid_request"
    )
    expect(problem.detail).toContain("16")
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key: account.testKey })).json.data).toHaveLength(16)
  })

  it("needs the webhooks:write scope, which keys created without scopes have", async () => {
    const account = await server.createAccount()
    const me = await call(server, "GET", "/v1/me", { key: account.testKey })
    expect(me.json.scopes).toContain("webhooks:write")
    const narrow = (await server.run(createKey(account.account.id, { mode: "test", scopes: ["files:write", "jobs:read"] }))).key
    for (const [method, path] of [
      ["POST", "/v1/webhook_endpoints"], ["GET", "/v1/webhook_endpoints"], ["GET", "/v1/webhook_endpoints/whe_x"],
      ["DELETE", "/v1/webhook_endpoints/whe_x"], ["GET", "/v1/webhook_endpoints/whe_x/deliveries"],
      ["POST", "/v1/webhook_endpoints/whe_x/test"]
    ] as const) {
      const reply = await call(server, method, path, { key: narrow, ...(path === "/v1/webhook_endpoints" && method === "POST" ? { body: { url: receiver.url, events: ["file.ready"] } } : {}) })
      const problem = await expectProblem(server, reply, 403, "insufficient_scope")
      expect(problem.detail).toContain("webhooks:write")
    }
  })

  it("a deleted endpoint gets nothing more", async () => {
    const account = await server.createAccount()
    const target = await startReceiver()
    try {
      const created = await createEndpoint(server, account.testKey, { url: target.url, events: ["file.ready"] })
      expect((await call(server, "DELETE", `/v1/webhook_endpoints/${created.json.id}`, { key: account.testKey })).status).toBe(204)
      // a second endpoint on another receiver shows when the event has been sent
      await createEndpoint(server, account.testKey, { url: receiver.url, events: ["file.ready"] })
      const before = receiver.received.length
      await readyFile(server, account.testKey)
      await receiver.waitFor(before + 1)
      expect(target.received).toHaveLength(0)
    } finally {
      await target.close()
    }
  })
})

describe("test events (POST /v1/webhook_endpoints/{id}/test)", () => {
  let server: TestServer
  let receiver: Receiver
  let failing: Receiver
  beforeAll(async () => {
    server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" }, webhooksAllowPrivate: true })
    receiver = await startReceiver()
    failing = await startReceiver(() => 500)
  })
  afterAll(async () => {
    await server.close()
    await receiver.close()
    await failing.close()
  })

  it("sends webhook.test with data {endpoint: id} to that endpoint alone, whatever it subscribes to, signed and logged", async () => {
    const account = await server.createAccount()
    const created = await createEndpoint(server, account.liveKey, { url: receiver.url, events: ["file.rejected"] })
    expect(created.status, created.text).toBe(201)
    const other = await createEndpoint(server, account.liveKey, { url: failing.url, events: ["file.ready"] })
    const before = receiver.received.length

    const sent = await call(server, "POST", `/v1/webhook_endpoints/${created.json.id}/test`, { key: account.liveKey })
    expect(sent.status, sent.text).toBe(202)
    expect(sent.json).toMatchObject({ object: "webhook_delivery", event_type: "webhook.test", status: "pending", attempts: [], finished_at: null })
    expect(sent.json.id).toMatch(/^whd_/)
    expect(sent.json.event_id).toMatch(/^evt_/)

    const [request] = (await receiver.waitFor(before + 1)).slice(before)
    const verified = new Webhook(created.json.secret).verify(request!.body, {
      "webhook-id": String(request!.headers["webhook-id"]),
      "webhook-timestamp": String(request!.headers["webhook-timestamp"]),
      "webhook-signature": String(request!.headers["webhook-signature"])
    }) as any
    expect(verified).toEqual({ id: sent.json.event_id, type: "webhook.test", created_at: verified.created_at, data: { endpoint: created.json.id } })
    expectIso(verified.created_at)

    const log = await pollUntil(
      () => call(server, "GET", `/v1/webhook_endpoints/${created.json.id}/deliveries`, { key: account.liveKey }),
      (r) => r.json?.data?.[0]?.status === "succeeded",
      10_000
    )
    expect(log.json.data).toHaveLength(1)
    expect(log.json.data[0]).toMatchObject({ id: sent.json.id, event_type: "webhook.test", status: "succeeded" })
    expect(log.json.data[0].attempts).toEqual([expect.objectContaining({ status_code: 200, error: null })])
    // the other endpoint got nothing: its log is empty
    expect((await call(server, "GET", `/v1/webhook_endpoints/${other.json.id}/deliveries`, { key: account.liveKey })).json.data).toEqual([])
  })

  it("a failing endpoint's test attempt is logged with its status and error, and retried like any delivery", async () => {
    const account = await server.createAccount()
    const created = await createEndpoint(server, account.testKey, { url: failing.url, events: ["job.succeeded"] })
    const sent = await call(server, "POST", `/v1/webhook_endpoints/${created.json.id}/test`, { key: account.testKey })
    expect(sent.status, sent.text).toBe(202)
    const log = await pollUntil(
      () => call(server, "GET", `/v1/webhook_endpoints/${created.json.id}/deliveries`, { key: account.testKey }),
      (r) => r.json?.data?.[0]?.attempts?.length === 1,
      10_000
    )
    const [delivery] = log.json.data
    expect(delivery.status).toBe("pending")
    expectIso(delivery.next_attempt_at)
    expect(delivery.attempts[0]).toMatchObject({ status_code: 500 })
    expect(delivery.attempts[0].error).toMatch(/500/)
  })

  it("another account's endpoint, the other mode's, an unknown or a deleted one: 404, and nothing is sent", async () => {
    const owner = await server.createAccount()
    const stranger = await server.createAccount()
    const created = await createEndpoint(server, owner.testKey, { url: failing.url, events: ["file.ready"] })
    const path = `/v1/webhook_endpoints/${created.json.id}/test`
    await expectProblem(server, await call(server, "POST", path, { key: stranger.testKey }), 404, "not_found")
    await expectProblem(server, await call(server, "POST", path, { key: owner.liveKey }), 404, "not_found")
    await expectProblem(server, await call(server, "POST", "/v1/webhook_endpoints/whe_unknown/test", { key: owner.testKey }), 404, "not_found")
    expect((await call(server, "DELETE", `/v1/webhook_endpoints/${created.json.id}`, { key: owner.testKey })).status).toBe(204)
    await expectProblem(server, await call(server, "POST", path, { key: owner.testKey }), 404, "not_found")
    await expectProblem(server, await call(server, "POST", path), 401, "unauthorized")
  })
})

describe("webhooks to internal addresses (SSRF)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("refuses live endpoints on loopback, link-local or private addresses, and plain http", async () => {
    const account = await server.createAccount()
    const refused = async (url: string, detail: RegExp, key = account.liveKey) => {
      const reply = await createEndpoint(server, key, { url, events: ["job.succeeded"] })
      const problem = await expectProblem(server, reply, 422, "invalid_request")
      expect(problem.detail).toMatch(detail)
      expect(problem.field).toBe("url")
    }
    await refused("https://127.0.0.1/hooks", /127\.0\.0\.1 is a loopback address/)
    await refused("https://169.254.169.254/latest/meta-data", /169\.254\.169\.254 is a link-local address/)
    await refused("https://10.1.2.3/hooks", /private/)
    await refused("https://192.168.0.10:8443/hooks", /private/)
    await refused("https://[::1]/hooks", /loopback/)
    await refused("https://[::ffff:169.254.169.254]/hooks", /link-local/)
    await refused("https://[fe80::1]/hooks", /link-local/)
    // a name is resolved first: localhost is loopback (its address is not told)
    await refused("https://localhost:9999/hooks", /^url host 'localhost' resolves to a loopback address: /)
    await refused("http://example.com/hooks", /https/)
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key: account.liveKey })).json.data).toEqual([])
  })

  it("names the caller's mode and the setting that lifts the address rule (decisions.md, Events)", async () => {
    const account = await server.createAccount()
    const live = await expectProblem(server, await createEndpoint(server, account.liveKey, { url: "https://127.0.0.1:8443/hooks", events: ["file.ready"] }), 422, "invalid_request")
    expect(live.detail).toBe(
      "url host 127.0.0.1 is a loopback address: live-mode endpoints must be publicly reachable; " +
        "for local development, WEBHOOKS_ALLOW_PRIVATE=true on the server lifts this rule"
    )
    const test = await expectProblem(server, await createEndpoint(server, account.testKey, { url: "http://127.0.0.1:8787/hooks", events: ["file.ready"] }), 422, "invalid_request")
    expect(test.detail).toBe(
      "url host 127.0.0.1 is a loopback address: test-mode endpoints must be publicly reachable too (anyone who signs up holds a test key); " +
        "for local development, WEBHOOKS_ALLOW_PRIVATE=true on the server lifts this rule"
    )
    // the dashboard acts in live mode, and says so
    const { browser } = await signUp(server)
    const dashboard = await browser.request("POST", "/v1/dashboard/webhook_endpoints", { body: { url: "https://10.0.0.7/hooks", events: ["file.ready"] } })
    expect((await expectProblem(server, dashboard, 422, "invalid_request")).detail).toMatch(/^url host 10\.0\.0\.7 is a private address: live-mode endpoints .*WEBHOOKS_ALLOW_PRIVATE=true/)
  })

  it("allows only ports 80, 443 and 1024–65535 on public addresses, in both modes (https://8.8.8.8:22/ is 422)", async () => {
    const account = await server.createAccount()
    for (const key of [account.liveKey, account.testKey]) {
      for (const url of ["https://8.8.8.8:22/", "https://8.8.8.8:25/x", "https://8.8.8.8:1023/x", "https://8.8.8.8:0/x", "https://8.8.8.8:111/x"]) {
        const problem = await expectProblem(server, await createEndpoint(server, key, { url, events: ["file.ready"] }), 422, "invalid_request")
        expect(problem.field).toBe("url")
        expect(problem.detail).toMatch(/^url port \d+ is not allowed: webhook endpoints use port 80, 443 or 1024–65535$/)
      }
      for (const url of ["https://8.8.8.8/a", "https://8.8.8.8:443/b", "https://8.8.8.8:80/c", "https://8.8.8.8:1024/d", "https://8.8.8.8:65535/e"]) {
        const created = await createEndpoint(server, key, { url, events: ["file.ready"] })
        expect(created.status, `${url}: ${created.text}`).toBe(201)
      }
    }
  })

  it("refuses test-mode endpoints on internal addresses too (anyone with a test key could scan the network); plain http is fine there", async () => {
    const account = await server.createAccount()
    for (const url of ["http://127.0.0.1:8787/hooks", "http://169.254.169.254/latest/meta-data", "http://localhost/x", "http://[::1]/x"]) {
      const problem = await expectProblem(server, await createEndpoint(server, account.testKey, { url, events: ["file.ready"] }), 422, "invalid_request")
      expect(problem.field).toBe("url")
      expect(problem.detail).toMatch(/(loopback|link-local) address: test-mode endpoints must be publicly reachable too/)
    }
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key: account.testKey })).json.data).toEqual([])
  })
})

describe("webhooks never hold up a job", () => {
  let server: TestServer
  let hanging: Receiver

  beforeAll(async () => {
    // live endpoints on 127.0.0.1 need WEBHOOKS_ALLOW_PRIVATE; the timeout is long so the attempt stays open
    server = await startTestServer({
      worker: true, workerOptions: { pollInterval: "100 millis" }, webhooksAllowPrivate: true,
      limits: { webhookTimeoutMs: 120_000, webhookLeaseMs: 180_000 }
    })
    hanging = await startReceiver(() => "hang")
  })
  afterAll(async () => {
    await server.close()
    await hanging.close()
  })

  it("a live job finishes while its file's event is still being delivered to an endpoint that does not answer", async () => {
    const account = await server.createAccount(5_000_000)
    const created = await createEndpoint(server, account.liveKey, { url: hanging.url, events: ["file.ready", "job.succeeded"] })
    expect(created.status, created.text).toBe(201)
    const fileId = await readyFile(server, account.liveKey)
    // file.ready is out, and its attempt hangs in the worker's delivery loop
    await hanging.waitFor(1)
    const job = await denoise(server, account.liveKey, { file: fileId })
    expect(job.status, job.text).toBe(202)
    const done = await waitForJob(server, account.liveKey, job.json.id)
    expect(done.json.status).toBe("succeeded")
    // the job ran and finished while the first attempt was still unanswered
    expect(hanging.hangingCount()).toBeGreaterThanOrEqual(1)
    expect(hanging.received.map((r) => JSON.parse(r.body).type)[0]).toBe("file.ready")
    // and its own event goes out beside it
    await hanging.waitFor(2)
    expect(JSON.parse(hanging.received[1]!.body)).toMatchObject({ type: "job.succeeded", data: { id: job.json.id, status: "succeeded" } })
    hanging.release(200)
    const log = await pollUntil(
      () => call(server, "GET", `/v1/webhook_endpoints/${created.json.id}/deliveries`, { key: account.liveKey }),
      (r) => r.json?.data?.length === 2 && r.json.data.every((d: any) => d.status === "succeeded"),
      10_000
    )
    expect(log.json.data.map((d: any) => d.event_type)).toEqual(["job.succeeded", "file.ready"])
  })
})
