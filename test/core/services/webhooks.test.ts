/**
 * Outbound webhooks below HTTP: signing against the Standard Webhooks vector and verifier, the
 * retry schedule and disabling driven by TestClock, at-least-once under lapsed leases, the
 * outbox (an event exists exactly when its state change committed), and the sender's SSRF
 * defences (addresses, resolution at send time, redirects not followed).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, Layer, Metric, MetricLabel, Option, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import { createServer as createNetServer, type AddressInfo } from "node:net"
import { afterAll, beforeAll } from "vitest"
import { CONNECTION_FAILED, layerWebhookSender } from "../../../adapters/webhook-http/sender.js"
import { runDeliveries } from "../../../apps/worker/webhooks.js"
import { nonPublicReason } from "../../../adapters/webhook-http/addresses.js"
import { WebhookAttemptRecord, WebhookEndpointRecord } from "../../../core/domain/records.js"
import { FileRepo, JobRepo } from "../../../core/ports/repositories.js"
import { WebhookRepo, WebhookSender } from "../../../core/ports/webhooks.js"
import {
  afterAttempt, DISABLE_AFTER_FAILING_MS, MAX_WEBHOOK_ATTEMPTS, RETRY_DELAYS_MS, signedHeaders
} from "../../../core/rules/webhooks.js"
import * as Metrics from "../../../core/observability/metrics.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import { authenticate } from "../../../core/services/caller.js"
import { claimDueDeliveries, deliver, deliverDue } from "../../../core/services/webhook-delivery.js"
import { cancelJob, createDenoiseJob } from "../../../core/services/jobs.js"
import { claimNext, failJob, finishTestJob, recoverLapsedLeases, submitDenoiseJob } from "../../../core/services/worker.js"
import { createEndpoint, emitEvent } from "../../../core/services/webhooks.js"
import { transactionally } from "../../../core/ports/transactor.js"
import { makeFile } from "../../contracts/fixtures.js"
import { DAY, HOUR, MINUTE, SECOND } from "../../../core/time.js"
import { coreEnvironment } from "../../support/env.js"
import { type Answer, type Receiver, startReceiver } from "../../support/webhook-receiver.js"

describe("Standard Webhooks signing", () => {
  it("matches the published test vector", () => {
    // the example of the Standard Webhooks specification and of the standardwebhooks package's tests
    const headers = signedHeaders("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330_000, '{"test": 2432232314}')
    expect(headers).toEqual({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    })
  })

  it("is accepted by the verifier, and refused once the body, id or time changes", () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString("base64")}`
    const body = JSON.stringify({ id: "evt_1", type: "job.succeeded" })
    const headers = signedHeaders(secret, "evt_1", Date.now(), body)
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow()
    expect(() => new Webhook(secret).verify(body, { ...headers, "webhook-id": "evt_2" })).toThrow()
    expect(() => new Webhook(secret).verify(body, { ...headers, "webhook-timestamp": String(Math.floor(Date.now() / 1000) - 3600) })).toThrow()
  })
})

describe("which addresses a live endpoint may reach", () => {
  it.each([
    ["127.0.0.1", "loopback"], ["127.255.0.9", "loopback"], ["169.254.169.254", "link-local"], ["10.0.0.1", "private"],
    ["172.16.5.5", "private"], ["192.168.1.1", "private"], ["100.64.0.1", "private (carrier-grade NAT)"], ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"], ["255.255.255.255", "reserved"], ["::1", "loopback"], ["::", "unspecified"],
    ["fe80::1", "link-local"], ["fd00::1", "private (unique local)"], ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local"], ["64:ff9b::a9fe:a9fe", "link-local"], ["2002:7f00:1::", "loopback"], ["ff02::1", "multicast"]
  ])("%s is %s", (address, kind) => {
    expect(nonPublicReason(address)).toBe(kind)
  })

  it.each(["93.184.215.14", "8.8.8.8", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("%s is public", (address) => {
    expect(nonPublicReason(address)).toBeNull()
  })
})

const sender = layerWebhookSender({ allowPrivate: false })

describe("the sender", () => {
  let receiver: Receiver
  let redirecting: Receiver
  beforeAll(async () => {
    receiver = await startReceiver()
    redirecting = await startReceiver(() => 302)
  })
  afterAll(async () => {
    await receiver.close()
    await redirecting.close()
  })

  const send = (url: string, publicOnly: boolean) =>
    Effect.runPromise(Effect.flatMap(WebhookSender, (s) => s.send({ url, headers: {}, body: "{}", timeoutMs: 5_000, publicOnly })).pipe(
      Effect.provide(sender)
    ))

  it("refuses a live attempt to a loopback address, literal or resolved, before connecting", async () => {
    const literal = await send(receiver.url, true)
    expect(literal).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: url host 127\.0\.0\.1 is a loopback address/) })
    // a name that resolves to loopback at send time (DNS rebinding after the endpoint was checked); its address is not told
    const named = await send(`http://localhost:${receiver.port}/hooks`, true)
    expect(named).toMatchObject({ statusCode: null, error: "refused: url host 'localhost' resolves to a loopback address: endpoints must be publicly reachable" })
    expect(receiver.received).toHaveLength(0)
    // the same request in test mode goes through
    expect(await send(receiver.url, false)).toMatchObject({ statusCode: 200, error: null })
    expect(receiver.received).toHaveLength(1)
  })

  it("a connection that gets no HTTP answer says only that: refused and a TLS mismatch read the same, with no error code (no port scanner)", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, "127.0.0.1", () => {
        const port = (probe.address() as AddressInfo).port
        probe.close(() => resolve(port))
      })
    })
    const before = receiver.received.length
    const refused = await send(`http://127.0.0.1:${closed}/hooks`, false)
    // https:// to a plain-HTTP port: the TLS handshake fails
    const tlsMismatch = await send(`https://127.0.0.1:${receiver.port}/hooks`, false)
    for (const reply of [refused, tlsMismatch]) expect(reply).toMatchObject({ statusCode: null, error: CONNECTION_FAILED })
    // the TLS handshake is not a request: nothing arrived
    expect(receiver.received).toHaveLength(before)
  })

  it("does not follow redirects: a 3xx is a failed attempt", async () => {
    const reply = await send(redirecting.url, false)
    expect(reply).toMatchObject({ statusCode: 302, error: expect.stringContaining("redirects are not followed") })
    expect(redirecting.received).toHaveLength(1)
  })

  it("vet resolves names and refuses non-public ones", async () => {
    const vet = (url: string) => Effect.runPromise(Effect.flatMap(WebhookSender, (s) => Effect.either(s.vet(url, true))).pipe(Effect.provide(sender)))
    expect(Either.getLeft(await vet("https://localhost/x")).pipe(Option.map((e) => e.reason))).toEqual(
      Option.some(expect.stringMatching(/localhost.*loopback/))
    )
    expect(Either.isLeft(await vet("https://[::ffff:10.0.0.1]/x"))).toBe(true)
    expect(Either.isLeft(await vet("https://name.invalid/x"))).toBe(true)
  })
})

describe("the retry schedule and disabling", () => {
  it("retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then fails", () => {
    expect(RETRY_DELAYS_MS).toEqual([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR])
    expect(MAX_WEBHOOK_ATTEMPTS).toBe(8)
  })

  it("disables an endpoint once every attempt failed for 5 days; a delivered attempt resets that", () => {
    const endpoint = new WebhookEndpointRecord({
      id: "whe_1", accountId: "acct_1", mode: "test", url: "https://example.com", events: ["file.ready"], description: null,
      secret: "whsec_x", status: "enabled", createdAt: 0, failingSince: null, disabledAt: null
    })
    const failed = (at: number) => new WebhookAttemptRecord({ at, statusCode: 500, durationMs: 1, error: "HTTP 500" })
    const ok = (at: number) => new WebhookAttemptRecord({ at, statusCode: 204, durationMs: 1, error: null })
    const first = afterAttempt(endpoint, failed(1_000))
    expect(first).toMatchObject({ failingSince: 1_000, status: "enabled" })
    expect(afterAttempt(first, failed(1_000 + DISABLE_AFTER_FAILING_MS - 1))).toMatchObject({ status: "enabled" })
    expect(afterAttempt(first, ok(3 * DAY))).toMatchObject({ failingSince: null, status: "enabled" })
    expect(afterAttempt(first, failed(1_000 + 5 * DAY))).toMatchObject({ status: "disabled", disabledAt: 1_000 + 5 * DAY })
  })
})

/** An account with a test-mode endpoint on `url`, over the memory adapters and TestClock. */
const withEndpoint = (url: string, events: ReadonlyArray<string> = ["job.canceled"]) =>
  Effect.gen(function*() {
    // signatures carry the time: start the TestClock at the real one so the verifier accepts them
    yield* TestClock.setTime(Date.now())
    const created = yield* createAccountWithKeys({ email: "hooks@example.com", creditMicros: 0 })
    const caller = yield* authenticate(`Bearer ${created.testKey}`)
    const endpoint = yield* createEndpoint(caller, { url, events })
    return { caller, endpoint, accountId: created.account.id }
  })

// the receivers of these tests are on 127.0.0.1: WEBHOOKS_ALLOW_PRIVATE
const environment = Layer.merge(coreEnvironment(), layerWebhookSender({ allowPrivate: true }))

/** An event for the endpoint, emitted as the services do (inside a transaction). */
const emitTestEvent = (accountId: string) =>
  transactionally(emitEvent({ accountId, mode: "test", type: "job.canceled", data: { id: "job_x" } }))

/** hush_webhook_deliveries_total{outcome} now (the process's registry: compare two readings). */
const deliveriesCounted = (outcome: string) =>
  Effect.map(Metric.value(Metric.taggedWithLabels(Metrics.webhookDeliveries, [MetricLabel.make("outcome", outcome)])), (state) => state.count)

describe("deliveries, driven by TestClock", () => {
  const withReceiver = <A, E, R>(answer: (index: number) => Answer, body: (receiver: Receiver) => Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(Effect.promise(() => startReceiver((_, i) => answer(i))), body, (r) => Effect.promise(() => r.close()))

  it.effect("a receiver that fails twice gets the third attempt, 5 s then 5 min later, with the same id and a valid signature", () =>
    withReceiver((i) => (i < 2 ? 503 : 200), (receiver) =>
      Effect.gen(function*() {
        const { endpoint, accountId } = yield* withEndpoint(receiver.url)
        yield* emitTestEvent(accountId)
        expect(yield* deliverDue("w1")).toEqual(["retrying"])
        expect(receiver.received).toHaveLength(1)
        // not due before 5 s
        yield* TestClock.adjust(Duration.millis(5 * SECOND - 1))
        expect(yield* deliverDue("w1")).toEqual([])
        yield* TestClock.adjust(Duration.millis(1))
        expect(yield* deliverDue("w1")).toEqual(["retrying"])
        expect(receiver.received).toHaveLength(2)
        yield* TestClock.adjust(Duration.millis(5 * MINUTE - 1))
        expect(yield* deliverDue("w1")).toEqual([])
        yield* TestClock.adjust(Duration.millis(1))
        expect(yield* deliverDue("w1")).toEqual(["delivered"])
        expect(receiver.received).toHaveLength(3)
        const ids = receiver.received.map((r) => r.headers["webhook-id"])
        expect(new Set(ids).size).toBe(1)
        const stamps = receiver.received.map((r) => Number(r.headers["webhook-timestamp"]))
        expect(stamps[1]! - stamps[0]!).toBe(5)
        expect(stamps[2]! - stamps[1]!).toBe(300)
        // the first attempt (at real time) passes the verifier; each later one is signed for its own time
        const headersOf = (i: number) => ({
          "webhook-id": String(receiver.received[i]!.headers["webhook-id"]),
          "webhook-timestamp": String(receiver.received[i]!.headers["webhook-timestamp"]),
          "webhook-signature": String(receiver.received[i]!.headers["webhook-signature"])
        })
        expect(new Webhook(endpoint.secret).verify(receiver.received[0]!.body, headersOf(0))).toMatchObject({
          type: "job.canceled", data: { id: "job_x" }
        })
        for (const i of [1, 2]) {
          expect(receiver.received[i]!.body).toBe(receiver.received[0]!.body)
          expect(headersOf(i)).toEqual(signedHeaders(endpoint.secret, ids[0] as string, stamps[i]! * 1000, receiver.received[i]!.body))
        }
        const [delivery] = yield* Effect.flatMap(WebhookRepo, (r) => r.listDeliveries({ endpointId: endpoint.id, limit: 10 }))
        expect(delivery!.status).toBe("succeeded")
        expect(delivery!.attempts.map((a) => [a.statusCode, a.error])).toEqual([[503, "HTTP 503"], [503, "HTTP 503"], [200, null]])
        // nothing more is due, ever
        yield* TestClock.adjust(Duration.days(2))
        expect(yield* deliverDue("w1")).toEqual([])
      }).pipe(Effect.provide(environment))))

  it.effect("a delivery that never succeeds fails after 8 attempts; 5 days of failures disable the endpoint", () =>
    withReceiver(() => 500, (receiver) =>
      Effect.gen(function*() {
        const { endpoint, accountId } = yield* withEndpoint(receiver.url)
        yield* emitTestEvent(accountId)
        const retryingBefore = yield* deliveriesCounted("retrying")
        const failedBefore = yield* deliveriesCounted("failed")
        const outcomes: Array<string> = [...yield* deliverDue("w1")]
        for (const delay of RETRY_DELAYS_MS) {
          yield* TestClock.adjust(Duration.millis(delay))
          outcomes.push(...yield* deliverDue("w1"))
        }
        expect(outcomes).toEqual([...Array(7).fill("retrying"), "failed"])
        // the metric counts each attempt by its outcome
        expect((yield* deliveriesCounted("retrying")) - retryingBefore).toBe(7)
        expect((yield* deliveriesCounted("failed")) - failedBefore).toBe(1)
        expect(receiver.received).toHaveLength(8)
        const repo = yield* WebhookRepo
        const [delivery] = yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10 })
        expect(delivery).toMatchObject({ status: "failed", nextAttemptAt: null })
        expect(Option.getOrThrow(yield* repo.getEndpoint(endpoint.id)).status).toBe("enabled")
        // the failures go on for 5 days: the endpoint is disabled, and its pending deliveries end unsent
        for (let day = 0; day < 5; day++) {
          yield* TestClock.adjust(Duration.days(1))
          yield* emitTestEvent(accountId)
          yield* deliverDue("w1")
        }
        const disabled = Option.getOrThrow(yield* repo.getEndpoint(endpoint.id))
        expect(disabled.status).toBe("disabled")
        expect(disabled.disabledAt).not.toBeNull()
        const sent = receiver.received.length
        yield* emitTestEvent(accountId)
        yield* TestClock.adjust(Duration.days(2))
        yield* deliverDue("w1")
        expect(receiver.received).toHaveLength(sent)
        const log = yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 20 })
        expect(log.every((d) => d.status !== "pending")).toBe(true)
      }).pipe(Effect.provide(environment))))

  it.effect("an endpoint stored with a port outside 80, 443, 1024–65535 (before the rule) is never sent to: its delivery fails unsent", () =>
    Effect.gen(function*() {
      const { endpoint, accountId } = yield* withEndpoint("http://127.0.0.1:8080/hooks")
      const repo = yield* WebhookRepo
      yield* repo.updateEndpoint(new WebhookEndpointRecord({ ...endpoint, url: "http://127.0.0.1:22/hooks" }))
      yield* emitTestEvent(accountId)
      expect(yield* deliverDue("w1")).toEqual(["failed"])
      const [delivery] = yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10 })
      expect(delivery!.attempts.map((a) => [a.statusCode, a.error])).toEqual([
        [null, "not sent: url port 22 is not allowed: webhook endpoints use port 80, 443 or 1024–65535"]
      ])
    }).pipe(Effect.provide(environment)))

  it.effect("a lapsed lease (a worker lost mid-attempt) is claimed again by another worker", () =>
    withReceiver(() => 200, (receiver) =>
      Effect.gen(function*() {
        const { endpoint, accountId } = yield* withEndpoint(receiver.url)
        yield* emitTestEvent(accountId)
        // worker A claims and is lost before sending
        const [claimedByA] = yield* claimDueDeliveries("worker-a", 10)
        expect(claimedByA).toBeDefined()
        expect(yield* claimDueDeliveries("worker-b", 10)).toEqual([])
        yield* TestClock.adjust(Duration.seconds(31))
        const [claimedByB] = yield* claimDueDeliveries("worker-b", 10)
        expect(claimedByB!.id).toBe(claimedByA!.id)
        const deliveredBefore = yield* deliveriesCounted("delivered")
        const lostBefore = yield* deliveriesCounted("lease_lost")
        expect(yield* deliver(claimedByB!, "worker-b")).toBe("delivered")
        // A, come back, cannot record anything over it
        expect(yield* deliver(claimedByA!, "worker-a")).toBe("lease_lost")
        expect((yield* deliveriesCounted("delivered")) - deliveredBefore).toBe(1)
        expect((yield* deliveriesCounted("lease_lost")) - lostBefore).toBe(1)
        const [delivery] = yield* Effect.flatMap(WebhookRepo, (r) => r.listDeliveries({ endpointId: endpoint.id, limit: 10 }))
        expect(delivery!.attempts).toHaveLength(1)
        expect(delivery!.status).toBe("succeeded")
      }).pipe(Effect.provide(environment))))
})

describe("the delivery loop", () => {
  it.effect("a worker stopped mid-attempt hands the delivery back at once, unsent attempts not counted", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => startReceiver(() => "hang")),
      (receiver) =>
        Effect.gen(function*() {
          const { endpoint, accountId } = yield* withEndpoint(receiver.url)
          yield* emitTestEvent(accountId)
          const loop = yield* Effect.fork(runDeliveries({ owner: "w1" }))
          yield* Effect.promise(() => receiver.waitFor(1))
          const repo = yield* WebhookRepo
          const [inFlight] = yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 1 })
          expect(inFlight!.leaseOwner).toMatch(/^w1\/webhooks\/\d+$/)
          yield* Fiber.interrupt(loop)
          const [handedBack] = yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 1 })
          expect(handedBack).toMatchObject({ status: "pending", leaseOwner: null, leaseExpiresAt: null, attempts: [] })
          // due at once for another worker, without waiting for the lease
          expect((yield* claimDueDeliveries("w2", 10)).map((d) => d.id)).toEqual([handedBack!.id])
        }).pipe(Effect.provide(environment)),
      (receiver) => Effect.promise(() => receiver.close())
    ))
})

describe("events are written with their state change (outbox)", () => {
  it.effect("a live job failed by its worker, or by lapsed leases, emits job.failed with the failed Job", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const created = yield* createAccountWithKeys({ email: "failing@example.com", creditMicros: 10_000_000 })
      const caller = yield* authenticate(`Bearer ${created.liveKey}`)
      // live endpoints must be https://; the address rule is lifted (allowPrivate) in this environment
      const endpoint = yield* createEndpoint(caller, { url: "https://127.0.0.1:9999/hooks", events: ["job.failed"] })
      const newJob = Effect.gen(function*() {
        const file = makeFile({ accountId: caller.accountId, mode: "live", status: "ready", durationSeconds: 3, readyAt: Date.now() })
        yield* Effect.flatMap(FileRepo, (files) => files.insert(file))
        return yield* createDenoiseJob(caller, { file: file.id, model: null })
      })
      const first = yield* newJob
      yield* claimNext("w1")
      yield* failJob(first.id, "w1", { code: "provider_error", detail: "the model crashed" })
      const second = yield* newJob
      for (let attempt = 0; attempt < 3; attempt++) {
        yield* claimNext("w1")
        yield* TestClock.adjust(Duration.minutes(1))
        yield* recoverLapsedLeases()
      }
      const log = yield* Effect.flatMap(WebhookRepo, (r) => r.listDeliveries({ endpointId: endpoint.id, limit: 10 }))
      const bodies = log.map((d) => JSON.parse(d.body)).reverse()
      expect(bodies.map((b) => [b.type, b.data.id, b.data.status, b.data.error.code])).toEqual([
        ["job.failed", first.id, "failed", "provider_error"],
        ["job.failed", second.id, "failed", "internal_error"]
      ])
      // the wire shape: no detail of what went wrong, the fixed message only
      expect(JSON.stringify(bodies)).not.toContain("the model crashed")
    }).pipe(Effect.provide(environment)))

  it.effect("a submitted test job is stored finished in one INSERT when nobody subscribes to job.succeeded; with a subscriber it waits for finishTestJob and its event; a cancel first stands", () =>
    Effect.gen(function*() {
      const { caller, endpoint } = yield* withEndpoint("http://127.0.0.1:9999/unused", ["job.succeeded"])
      const repo = yield* WebhookRepo
      const jobs = yield* JobRepo
      const file = makeFile({ accountId: caller.accountId, mode: "test", status: "ready", durationSeconds: 3, readyAt: Date.now() })
      yield* Effect.flatMap(FileRepo, (files) => files.insert(file))
      const subscribed = yield* submitDenoiseJob(caller, { file: file.id, model: null })
      expect(subscribed.finishLater).toBe(true)
      expect(subscribed.job.status).toBe("queued")
      expect(Option.getOrThrow(yield* jobs.get(subscribed.job.id))).toEqual(subscribed.job)
      expect(Option.getOrThrow(yield* finishTestJob(subscribed.job.id))).toMatchObject({ status: "succeeded", chargedMicros: 0 })
      const [delivery] = yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10 })
      expect(JSON.parse(delivery!.body)).toMatchObject({ type: "job.succeeded", data: { id: subscribed.job.id, status: "succeeded" } })

      // nobody subscribes: the job is stored finished at once, its answer shows it as created, no event is written
      const stored = Option.getOrThrow(yield* repo.getEndpoint(endpoint.id))
      yield* repo.updateEndpoint(new WebhookEndpointRecord({ ...stored, events: ["job.canceled"] }))
      const quiet = yield* submitDenoiseJob(caller, { file: file.id, model: null })
      expect(quiet.finishLater).toBe(false)
      expect(quiet.job.status).toBe("queued")
      const done = Option.getOrThrow(yield* jobs.get(quiet.job.id))
      expect(done).toMatchObject({ status: "succeeded", progress: 1, chargedMicros: 0, ledgerTxnId: null, attempts: 1, createdAt: quiet.job.createdAt })
      expect(done.output).toMatchObject({ format: "mp3" })
      expect(yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10 })).toHaveLength(1)
      // finishing it again writes nothing
      expect(Option.isNone(yield* finishTestJob(quiet.job.id))).toBe(true)

      // subscribed again, and canceled before it is finished: the cancel stands
      yield* repo.updateEndpoint(new WebhookEndpointRecord({ ...stored, events: ["job.succeeded", "job.canceled"] }))
      const canceled = yield* submitDenoiseJob(caller, { file: file.id, model: null })
      expect(canceled.finishLater).toBe(true)
      yield* cancelJob(caller, canceled.job.id)
      expect(Option.isNone(yield* finishTestJob(canceled.job.id))).toBe(true)
      expect(Option.getOrThrow(yield* jobs.get(canceled.job.id)).status).toBe("canceled")
    }).pipe(Effect.provide(environment)))

  it.effect("a cancel emits job.canceled; a failed transaction emits nothing", () =>
    Effect.gen(function*() {
      const { caller, endpoint } = yield* withEndpoint("http://127.0.0.1:9999/unused", ["job.canceled", "job.succeeded"])
      const file = makeFile({ accountId: caller.accountId, mode: "test", status: "ready", durationSeconds: 3, readyAt: Date.now() })
      yield* Effect.flatMap(FileRepo, (files) => files.insert(file))
      const job = yield* createDenoiseJob(caller, { file: file.id, model: null })
      // the cancel commits with its event, or not at all with it
      const rolledBack = yield* Effect.either(transactionally(Effect.zipRight(cancelJob(caller, job.id), Effect.fail("boom" as const))))
      expect(Either.isLeft(rolledBack)).toBe(true)
      const repo = yield* WebhookRepo
      expect(yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10 })).toEqual([])
      expect(Option.getOrThrow(yield* Effect.flatMap(JobRepo, (j) => j.get(job.id))).status).toBe("queued")
      yield* cancelJob(caller, job.id)
      const [delivery] = yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10 })
      expect(delivery).toMatchObject({ eventType: "job.canceled", status: "pending" })
      expect(JSON.parse(delivery!.body)).toMatchObject({ type: "job.canceled", data: { id: job.id, status: "canceled", object: "job" } })
    }).pipe(Effect.provide(environment)))
})
