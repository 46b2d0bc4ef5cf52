/**
 * `/metrics` (issue 15): a live flow, then the scrape parsed with a Prometheus text-format
 * parser: each counter and histogram moved by exactly what the flow did. The registry is
 * the process's, so every check is a difference between two scrapes. `/metrics` answers only
 * the metrics token, and is off without one; METRICS_PORT moves it off the public port.
 * Webhook deliveries go to receivers inside the test (WEBHOOKS_ALLOW_PRIVATE).
 */
import { Effect, Layer, LogLevel, Option, Redacted, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ServiceUnavailable } from "../../core/errors.js"
import { BlobError, BlobStore } from "../../core/ports/blob-store.js"
import { RateLimiter } from "../../core/ports/rate-limiter.js"
import { inputKeyOf } from "../../core/rules/storage.js"
import { freePort, startTestServer, type TestServer } from "../support/server.js"
import { startReceiver } from "../support/webhook-receiver.js"
import {
  call, complete, createFile, denoise, expectProblem, junk, putUpload, readyFile, sleep, tone, uploadFile, waitForFile, waitForJob
} from "./helpers.js"
import { delta, METRICS_TOKEN, metricsOn, type Labels, type Scrape, scrape } from "./metrics-scrape.js"

const TOKEN = METRICS_TOKEN

describe("/metrics after a live flow", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({
      worker: true,
      workerOptions: { pollInterval: "50 millis" },
      observability: { metricsToken: Option.some(Redacted.make(TOKEN)) },
      webhooksAllowPrivate: true
    })
  }, 60_000)
  afterAll(() => server?.close())

  it("counts requests by route template, problems by code, refusals, jobs, validations, credit and job timings", async () => {
    const { liveKey } = await server.createAccount(5_000_000)
    const poor = await server.createAccount(0)
    const before = await scrape(`${server.baseUrl}/metrics`)

    const fileId = await readyFile(server, liveKey, tone(2))
    const created = await denoise(server, liveKey, { file: fileId, model: "xiph/rnnoise" })
    expect(created.status, created.text).toBe(202)
    const job = await waitForJob(server, liveKey, created.json.id)
    expect(job.json.status, job.text).toBe("succeeded")
    const missing = await call(server, "GET", "/v1/jobs/job_doesnotexist", { key: liveKey })
    await expectProblem(server, missing, 404, "not_found")
    const poorFile = await readyFile(server, poor.liveKey, tone(1))
    const refused = await denoise(server, poor.liveKey, { file: poorFile })
    await expectProblem(server, refused, 402, "insufficient_credit")
    const noToken = await call(server, "GET", "/metrics")
    await expectProblem(server, noToken, 401, "unauthorized")
    const wrongToken = await call(server, "GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}x` } })
    await expectProblem(server, wrongToken, 401, "unauthorized")
    // the public bucket of this IP: 120 a minute (refilling 2 a second while this runs, so the
    // loop goes on until the first refusal); the two refused scrapes drew on it too
    let limited = 0
    for (let i = 0; i < 2_000 && limited === 0; i++) {
      const reply = await call(server, "GET", "/v1/models")
      if (reply.status === 429) limited++
    }
    expect(limited).toBe(1)

    const after = await scrape(`${server.baseUrl}/metrics`)
    const delta = (name: string, labels?: Labels) => after.value(name, labels) - before.value(name, labels)

    // by template, never the raw path
    expect(delta("hush_http_requests_total", { route: "/v1/jobs/:job_id", method: "GET", status: "404" })).toBe(1)
    expect(delta("hush_http_requests_total", { route: "/v1/audio/denoise", method: "POST", status: "202" })).toBe(1)
    expect(delta("hush_http_requests_total", { route: "/v1/audio/denoise", method: "POST", status: "402" })).toBe(1)
    expect(delta("hush_http_requests_total", { route: "/metrics", method: "GET", status: "401" })).toBe(2)
    expect(after.text).not.toContain("job_doesnotexist")
    expect(after.text).not.toContain(created.json.id)
    const latency = (s: Scrape) => s.histogram("hush_http_request_duration_seconds", { route: "/v1/audio/denoise", status: "202" })
    expect(latency(after).count - latency(before).count).toBe(1)
    expect(latency(after).buckets["+Inf"]! - (latency(before).buckets["+Inf"] ?? 0)).toBe(1)
    expect(latency(after).sum).toBeGreaterThan(latency(before).sum)

    expect(delta("hush_problems_total", { code: "not_found", status: "404" })).toBe(1)
    expect(delta("hush_problems_total", { code: "insufficient_credit" })).toBe(1)
    expect(delta("hush_problems_total", { code: "unauthorized" })).toBe(2)
    expect(delta("hush_problems_total", { code: "rate_limited", status: "429" })).toBe(1)
    expect(delta("hush_rate_limit_rejections_total", { bucket: "public" })).toBe(1)
    expect(delta("hush_quota_rejections_total", { code: "insufficient_credit" })).toBe(1)

    expect(delta("hush_validations_total", { outcome: "ready" })).toBe(2)
    const validation = (s: Scrape) => s.histogram("hush_validation_duration_seconds", { outcome: "ready" })
    expect(validation(after).count - validation(before).count).toBe(2)

    expect(delta("hush_jobs_created_total", { model: "xiph/rnnoise", mode: "live" })).toBe(1)
    expect(delta("hush_jobs_finished_total", { model: "xiph/rnnoise", state: "succeeded" })).toBe(1)
    expect(job.json.cost.charged_micros).toBeGreaterThan(0)
    expect(delta("hush_credit_held_micros_total")).toBe(created.json.cost.estimated_micros)
    expect(delta("hush_credit_captured_micros_total")).toBe(job.json.cost.charged_micros)
    expect(delta("hush_credit_released_micros_total")).toBe(0)
    const duration = (s: Scrape) => s.histogram("hush_job_duration_seconds", { model: "xiph/rnnoise", outcome: "succeeded" })
    expect(duration(after).count - duration(before).count).toBe(1)
    const rtf = (s: Scrape) => s.histogram("hush_job_realtime_factor", { model: "xiph/rnnoise" })
    expect(rtf(after).count - rtf(before).count).toBe(1)
    const ran = duration(after).sum - duration(before).sum
    expect(rtf(after).sum - rtf(before).sum).toBeCloseTo(ran / job.json.input.duration_seconds, 6)
    expect(delta("hush_worker_busy_seconds_total")).toBeCloseTo(ran, 6)
    expect(after.value("hush_worker_slots")).toBeGreaterThanOrEqual(1)
    expect(after.value("hush_queue_depth")).toBe(0)
    // no webhook endpoint in this flow (the next test has them)
    expect(delta("hush_webhook_deliveries_total")).toBe(0)
  }, 120_000)

  it("names requests outside the HttpApi by the router's own routes: pages, assets, storage, a checkout; `unmatched` for none", async () => {
    const before = await scrape(`${server.baseUrl}/metrics`)
    expect((await call(server, "GET", "/dashboard/keys")).status).toBe(200)
    expect((await call(server, "GET", "/errors/request_too_large")).status).toBe(200)
    expect((await call(server, "GET", "/fake-checkout/chk_nosuchcheckout")).status).toBeGreaterThanOrEqual(400)
    expect((await call(server, "GET", "/storage/inputs/nothing-here?sig=x")).status).toBeGreaterThanOrEqual(400)
    await expectProblem(server, await call(server, "GET", "/no/such/page-abc"), 404, "not_found")
    // a path the router has for GET only: 405 with Allow from the same table
    const wrongMethod = await call(server, "POST", "/dashboard/keys")
    await expectProblem(server, wrongMethod, 405, "method_not_allowed")
    expect(wrongMethod.headers.get("allow")).toBe("GET")
    const after = await scrape(`${server.baseUrl}/metrics`)
    const delta = (labels: Labels) => after.value("hush_http_requests_total", labels) - before.value("hush_http_requests_total", labels)
    expect(delta({ route: "/dashboard/keys", method: "GET", status: "200" })).toBe(1)
    expect(delta({ route: "/errors/request_too_large", method: "GET", status: "200" })).toBe(1)
    expect(delta({ route: "/fake-checkout/:checkout_id", method: "GET" })).toBe(1)
    expect(delta({ route: "/storage/*", method: "GET" })).toBe(1)
    expect(delta({ route: "unmatched", method: "GET", status: "404" })).toBe(1)
    expect(delta({ route: "/dashboard/keys", method: "POST", status: "405" })).toBe(1)
    expect(after.text).not.toContain("page-abc")
    expect(after.text).not.toContain("chk_nosuchcheckout")
  })

  it("counts webhook deliveries by outcome: delivered to an endpoint that answers 200, retrying after a 500", async () => {
    const receiver = await startReceiver(() => 200)
    const failing = await startReceiver(() => 500)
    try {
      const { liveKey } = await server.createAccount(5_000_000)
      for (const [url, events] of [[receiver.url, ["file.ready", "job.succeeded"]], [failing.url, ["file.ready"]]] as const) {
        const endpoint = await call(server, "POST", "/v1/webhook_endpoints", { key: liveKey, body: { url, events } })
        expect(endpoint.status, endpoint.text).toBe(201)
      }
      const before = await scrape(`${server.baseUrl}/metrics`)
      const fileId = await readyFile(server, liveKey, tone(1))
      const created = await denoise(server, liveKey, { file: fileId })
      expect(created.status, created.text).toBe(202)
      expect((await waitForJob(server, liveKey, created.json.id)).json.status).toBe("succeeded")
      await receiver.waitFor(2)
      await failing.waitFor(1)

      // an attempt is counted once its outcome is saved, just after the receiver answered; the
      // failing endpoint's retry comes 5 s after its first attempt (RETRY_DELAYS_MS)
      const deadline = Date.now() + 4_000
      let after = await scrape(`${server.baseUrl}/metrics`)
      const delta = (outcome: string) =>
        after.value("hush_webhook_deliveries_total", { outcome }) - before.value("hush_webhook_deliveries_total", { outcome })
      while ((delta("delivered") < 2 || delta("retrying") < 1) && Date.now() < deadline) {
        await sleep(50)
        after = await scrape(`${server.baseUrl}/metrics`)
      }
      expect(failing.received).toHaveLength(1)
      expect(receiver.received.map((r) => JSON.parse(r.body).type).sort()).toEqual(["file.ready", "job.succeeded"])
      expect(delta("delivered")).toBe(2)
      expect(delta("retrying")).toBe(1)
      expect(delta("failed")).toBe(0)
      expect(after.value("hush_webhook_deliveries_total") - before.value("hush_webhook_deliveries_total")).toBe(3)
    } finally {
      await receiver.close()
      await failing.close()
    }
  }, 60_000)

  it("/readyz is 200 with its checks; /metrics and /readyz are not in the public reference", async () => {
    const ready = await call(server, "GET", "/readyz")
    expect(ready.status, ready.text).toBe(200)
    expect(ready.json).toEqual({ status: "ready", checks: { database: "ok", storage: "ok", rate_limit_store: "ok", draining: false } })
    const spec = await call(server, "GET", "/v1/openapi.json")
    expect(Object.keys(spec.json.paths)).not.toContain("/metrics")
    expect(Object.keys(spec.json.paths)).not.toContain("/readyz")
  })
})

/** Input keys whose next read fails (a storage outage during validation); each fails once. */
const failingReads = new Set<string>()
const FlakyReads = Layer.effect(BlobStore, Effect.map(BlobStore, (store) => ({
  ...store,
  read: (key: string) => (failingReads.delete(key) ? Stream.fail(new BlobError({ message: "simulated storage fault" })) : store.read(key))
})))

describe("/metrics: the outcomes a plain flow does not reach", () => {
  let server: TestServer
  beforeAll(async () => {
    // its own server: the first one's webhook retry (5 s after its 500) would land in these deltas
    server = await startTestServer({
      worker: true,
      workerOptions: { pollInterval: "50 millis" },
      observability: metricsOn,
      webhooksAllowPrivate: true,
      override: FlakyReads,
      // the storage fault below is logged as an error on purpose
      logLevel: LogLevel.None
    })
  }, 60_000)
  afterAll(() => server?.close())

  it("counts validations by outcome: ready, rejected (not audio), error (a storage fault, then ready on the retry)", async () => {
    const { testKey } = await server.createAccount()
    const before = await scrape(`${server.baseUrl}/metrics`)

    await readyFile(server, testKey, tone(1))
    const rejected = await waitForFile(server, testKey, await uploadFile(server, testKey, junk(4_096)))
    expect(rejected.json.status, rejected.text).toBe("rejected")
    // the first read of this upload's input fails: counted as an error, retried, then ready
    const bytes = tone(2)
    const created = await createFile(server, testKey, { size_bytes: bytes.length })
    expect(created.status, created.text).toBe(201)
    failingReads.add(inputKeyOf(created.json.id))
    expect((await putUpload(created.json.upload, bytes)).status).toBe(200)
    expect((await complete(server, testKey, created.json.id)).status).toBe(202)
    expect((await waitForFile(server, testKey, created.json.id)).json.status).toBe("ready")
    expect(failingReads.size).toBe(0)

    const after = await scrape(`${server.baseUrl}/metrics`)
    expect(delta(before, after, "hush_validations_total", { outcome: "ready" })).toBe(2)
    expect(delta(before, after, "hush_validations_total", { outcome: "rejected" })).toBe(1)
    expect(delta(before, after, "hush_validations_total", { outcome: "error" })).toBe(1)
    expect(delta(before, after, "hush_validations_total")).toBe(4)
    for (const [outcome, count] of [["ready", 2], ["rejected", 1], ["error", 1]] as const) {
      const timed = (s: Scrape) => s.histogram("hush_validation_duration_seconds", { outcome }).count
      expect(timed(after) - timed(before), outcome).toBe(count)
    }
  })

  it("counts quota refusals by code: quota_exceeded for the 11th open upload", async () => {
    const { testKey } = await server.createAccount()
    for (let i = 0; i < 10; i++) expect((await createFile(server, testKey, { size_bytes: 100 })).status).toBe(201)
    const before = await scrape(`${server.baseUrl}/metrics`)
    await expectProblem(server, await createFile(server, testKey, { size_bytes: 100 }), 429, "quota_exceeded")
    const after = await scrape(`${server.baseUrl}/metrics`)
    expect(delta(before, after, "hush_quota_rejections_total", { code: "quota_exceeded" })).toBe(1)
    expect(delta(before, after, "hush_quota_rejections_total")).toBe(1)
    expect(delta(before, after, "hush_problems_total", { code: "quota_exceeded", status: "429" })).toBe(1)
    // a quota is not a rate limit
    expect(delta(before, after, "hush_rate_limit_rejections_total")).toBe(0)
  })

  it("counts a webhook attempt whose endpoint was deleted while it was in flight as gone", async () => {
    const receiver = await startReceiver(() => "hang")
    try {
      const { testKey } = await server.createAccount()
      const endpoint = await call(server, "POST", "/v1/webhook_endpoints", { key: testKey, body: { url: receiver.url, events: ["file.ready"] } })
      expect(endpoint.status, endpoint.text).toBe(201)
      const before = await scrape(`${server.baseUrl}/metrics`)
      await readyFile(server, testKey)
      // the attempt is on the wire; the endpoint and its deliveries go before it is answered
      await receiver.waitFor(1)
      expect((await call(server, "DELETE", `/v1/webhook_endpoints/${endpoint.json.id}`, { key: testKey })).status).toBe(204)
      receiver.release(200)

      const counted = (s: Scrape, outcome?: string) => s.value("hush_webhook_deliveries_total", outcome === undefined ? {} : { outcome })
      const after = await pollScrape(server, (s) => counted(s) > counted(before))
      expect(counted(after, "gone") - counted(before, "gone")).toBe(1)
      expect(counted(after) - counted(before)).toBe(1)
      expect(receiver.received).toHaveLength(1)
    } finally {
      await receiver.close()
    }
  })
})

/** Scrapes until `done` holds (an attempt is counted just after its answer), for 10 s at most. */
const pollScrape = async (server: TestServer, done: (s: Scrape) => boolean) => {
  const deadline = Date.now() + 10_000
  for (;;) {
    const s = await scrape(`${server.baseUrl}/metrics`)
    if (done(s) || Date.now() > deadline) return s
    await sleep(50)
  }
}

describe("/metrics off, or on its own port; /readyz when a store is down", () => {
  const servers: Array<TestServer> = []
  afterAll(() => Promise.all(servers.map((s) => s.close())))

  it("without METRICS_TOKEN /metrics does not exist", async () => {
    const server = await startTestServer()
    servers.push(server)
    await expectProblem(server, await call(server, "GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }), 404, "not_found")
  })

  it("with METRICS_PORT the public port refuses it; the metrics port answers the token only; queue gauges and a release", async () => {
    const metricsPort = await freePort()
    const server = await startTestServer({
      observability: { metricsToken: Option.some(Redacted.make(TOKEN)), metricsPort: Option.some(metricsPort) }
    })
    servers.push(server)
    await expectProblem(server, await call(server, "GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }), 404, "not_found")
    const url = `http://127.0.0.1:${metricsPort}/metrics`
    expect((await fetch(url)).status).toBe(401)
    expect((await fetch(url, { headers: { authorization: "Bearer nope" } })).status).toBe(401)

    // no worker here: the job waits in the queue
    const { liveKey } = await server.createAccount(5_000_000)
    const fileId = await readyFile(server, liveKey, tone(1))
    const before = await scrape(url)
    expect(before.value("hush_queue_depth")).toBe(0)
    const creating = Date.now()
    const created = await denoise(server, liveKey, { file: fileId })
    expect(created.status, created.text).toBe(202)
    await sleep(1_000)
    const waiting = await scrape(url)
    const waited = (Date.now() - creating) / 1000
    expect(waiting.value("hush_queue_depth")).toBe(1)
    expect(waiting.value("hush_jobs", { state: "queued", model: created.json.model, mode: "live" })).toBe(1)
    expect(waiting.value("hush_queue_oldest_age_seconds")).toBeGreaterThanOrEqual(1)
    expect(waiting.value("hush_queue_oldest_age_seconds")).toBeLessThanOrEqual(waited)
    const canceled = await call(server, "POST", `/v1/jobs/${created.json.id}/cancel`, { key: liveKey })
    expect(canceled.status, canceled.text).toBe(200)
    const after = await scrape(url)
    expect(after.value("hush_queue_depth")).toBe(0)
    // the drained label set reads 0, not its last value
    expect(after.value("hush_jobs", { state: "queued", model: created.json.model, mode: "live" })).toBe(0)
    expect(after.value("hush_credit_released_micros_total") - waiting.value("hush_credit_released_micros_total")).toBe(
      waiting.value("hush_credit_held_micros_total") - before.value("hush_credit_held_micros_total")
    )
    expect(after.value("hush_jobs_finished_total", { state: "canceled" }) - before.value("hush_jobs_finished_total", { state: "canceled" })).toBe(1)
  })

  it("/readyz is 503 service_unavailable when the rate-limit store does not answer", async () => {
    const down = Layer.effect(RateLimiter, Effect.map(RateLimiter, (limiter) => ({
      ...limiter,
      peek: () => Effect.fail(new ServiceUnavailable({ detail: "rate-limit store unreachable" }))
    })))
    const server = await startTestServer({ override: down })
    servers.push(server)
    const reply = await call(server, "GET", "/readyz")
    await expectProblem(server, reply, 503, "service_unavailable")
    expect(reply.json.detail).toContain("rate_limit_store")
    // liveness stays pure
    expect((await call(server, "GET", "/v1/health")).status).toBe(200)
  })
})
