/**
 * The typed client (apps/client): against a small scripted HTTP server, what it sends and how
 * it retries. Retry waits run on Effect's Clock, so `TestClock` shows that `Retry-After` is
 * honoured without waiting for real.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, Random, TestClock } from "effect"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { HushApiError, makeHushClient, retrying, withIdempotencyKey } from "../../../apps/client/index.js"

interface Seen {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly idempotencyKey: string | undefined
}

interface Answer {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: unknown
  /** Sent as it is instead of `body` as JSON (what a proxy in front of the API may answer). */
  readonly raw?: string
}

const seen: Array<Seen> = []
let answers: Array<Answer> = []
let baseUrl = ""
const server = createServer((req: IncomingMessage, res) => {
  seen.push({ method: req.method!, path: req.url!, authorization: req.headers.authorization, idempotencyKey: req.headers["idempotency-key"] as string | undefined })
  req.resume()
  const answer = answers.shift() ?? { status: 500, body: { code: "internal_error" } }
  const problem = answer.status >= 400
  res.writeHead(answer.status, { "content-type": problem ? "application/problem+json" : "application/json", "x-request-id": `req_${seen.length}`, ...answer.headers })
  res.end(answer.raw ?? (answer.body === undefined ? "" : JSON.stringify(answer.body)))
})

beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => {
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  resolve()
})))
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => {
  seen.length = 0
  answers = []
})

const CREATED = { status: 201, body: { id: "file_1", status: "uploading", upload: null } }
const problem = (status: number, code: string, headers?: Record<string, string>): Answer => ({
  status, headers, body: { type: `x/${code}`, title: `Title of ${code}`, status, detail: `Detail of ${code}`, code, request_id: "req_from_body" }
})
const createFile = Effect.gen(function*() {
  const hush = yield* makeHushClient({ apiKey: "hush_test_secret", baseUrl, retry: { baseDelayMs: 1, maxAttempts: 4 } })
  return yield* hush.files.createFile({ payload: { filename: "a.wav", size_bytes: 10, content_type: "audio/wav" } })
})
const realWait = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

describe("the typed client", () => {
  it.effect("retries 503 and 500 with the same Idempotency-Key, sending the key as a bearer token", () =>
    Effect.gen(function*() {
      answers = [problem(503, "service_unavailable", { "retry-after": "0" }), problem(500, "internal_error", { "retry-after": "0" }), CREATED]
      const file = yield* createFile
      expect(file.id).toBe("file_1")
      expect(seen).toHaveLength(3)
      const keys = new Set(seen.map((s) => s.idempotencyKey))
      expect(keys.size).toBe(1)
      expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/)
      expect(seen.every((s) => s.authorization === "Bearer hush_test_secret" && s.method === "POST" && s.path === "/v1/files")).toBe(true)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("waits Retry-After seconds on a 429 before the next attempt", () =>
    Effect.gen(function*() {
      answers = [problem(429, "rate_limited", { "retry-after": "2" }), CREATED]
      const fiber = yield* Effect.fork(createFile)
      while (seen.length < 1) yield* realWait(10)
      yield* TestClock.adjust("1999 millis")
      yield* realWait(150)
      expect(seen).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      const file = yield* Fiber.join(fiber)
      expect(file.id).toBe("file_1")
      expect(seen).toHaveLength(2)
      expect(seen[0]!.idempotencyKey).toBe(seen[1]!.idempotencyKey)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("fails with the problem's code, title, detail and request_id, without retrying a 4xx", () =>
    Effect.gen(function*() {
      answers = [problem(402, "insufficient_credit")]
      const error = yield* Effect.flip(createFile)
      expect(error).toBeInstanceOf(HushApiError)
      expect(error).toMatchObject({ status: 402, code: "insufficient_credit", title: "Title of insufficient_credit", detail: "Detail of insufficient_credit", requestId: "req_from_body" })
      expect(seen).toHaveLength(1)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("an answer that is not a problem (a proxy's HTML) fails as http_<status> with the X-Request-Id, after its retries", () =>
    Effect.gen(function*() {
      const proxyPage: Answer = { status: 502, headers: { "content-type": "text/html", "retry-after": "0" }, raw: "<html><h1>502 Bad Gateway</h1></html>" }
      answers = Array.from({ length: 4 }, () => proxyPage)
      const error = yield* Effect.flip(createFile)
      expect(error).toMatchObject({ status: 502, code: "http_502", title: "HTTP 502", detail: "The server answered 502.", requestId: "req_4", retryAfterSeconds: 0 })
      expect(seen).toHaveLength(4)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("gives up after maxAttempts with the last problem", () =>
    Effect.gen(function*() {
      answers = Array.from({ length: 5 }, () => problem(503, "service_unavailable", { "retry-after": "0" }))
      const error = yield* Effect.flip(createFile)
      expect(error).toMatchObject({ status: 503, code: "service_unavailable" })
      expect(seen).toHaveLength(4)
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.effect("a fresh key for each POST, the given one under withIdempotencyKey, none on GET", () =>
    Effect.gen(function*() {
      answers = [CREATED, CREATED, CREATED, { status: 200, body: { balance_micros: 0, reserved_micros: 0, available_micros: 0, currency: "usd", display: "$0.00" } }]
      yield* createFile
      yield* createFile
      yield* createFile.pipe(withIdempotencyKey("my-key-1"))
      const hush = yield* makeHushClient({ apiKey: "k", baseUrl })
      yield* hush.account.getCredits()
      expect(seen[0]!.idempotencyKey).not.toBe(seen[1]!.idempotencyKey)
      expect(seen[2]!.idempotencyKey).toBe("my-key-1")
      expect(seen[3]).toMatchObject({ method: "GET", path: "/v1/credits", idempotencyKey: undefined })
    }).pipe(Effect.provide(FetchHttpClient.layer)))

  it.live("a refused connection is retried, then reported as network_error", () =>
    Effect.gen(function*() {
      const hush = yield* makeHushClient({ baseUrl: "http://127.0.0.1:1", retry: { baseDelayMs: 1, maxAttempts: 2 } })
      const result = yield* Effect.either(hush.public.health())
      expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "HushApiError", status: 0, code: "network_error" })
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})

describe("retrying: which failures, how often, how long between", () => {
  const failure = (status: number, retryAfterSeconds?: number) =>
    new HushApiError({ status, code: `c${status}`, title: "t", detail: "d", requestId: undefined, retryAfterSeconds, field: undefined })
  /** An attempt that fails with `error` and counts its runs. */
  const failing = (error: HushApiError) => {
    const runs = { count: 0 }
    return { runs, attempt: Effect.suspend(() => { runs.count += 1; return Effect.fail(error) }) }
  }
  const settle = realWait(20)

  it.effect("a 4xx other than 429 is not retried; a dropped connection is", () =>
    Effect.gen(function*() {
      const conflict = failing(failure(409))
      expect(yield* Effect.flip(retrying(conflict.attempt, { baseDelayMs: 0 }))).toMatchObject({ status: 409 })
      expect(conflict.runs.count).toBe(1)
      const dropped = failing(failure(0))
      const fiber = yield* Effect.fork(retrying(dropped.attempt, { baseDelayMs: 1, maxAttempts: 3 }))
      yield* TestClock.adjust("1 second")
      expect(yield* Effect.flip(Fiber.join(fiber))).toMatchObject({ status: 0 })
      expect(dropped.runs.count).toBe(3)
    }))

  it.effect("without Retry-After, waits between half and all of a step that doubles, capped at maxDelayMs", () =>
    Effect.gen(function*() {
      const busy = failing(failure(503))
      // the jitter of each wait, in turn: the least (half the step), nearly the most (all of it),
      // and one whose wait (3,500 ms) is over the cap
      const jitters = Random.fixed([0, 0.999, 0.75])
      const fiber = yield* Effect.fork(
        retrying(busy.attempt, { baseDelayMs: 1000, maxDelayMs: 3000, maxAttempts: 4 }).pipe(Effect.withRandom(jitters))
      )
      const runsAfter = (millis: number) =>
        TestClock.adjust(Duration.millis(millis)).pipe(Effect.zipRight(settle), Effect.map(() => busy.runs.count))
      yield* settle
      expect(busy.runs.count).toBe(1)
      expect(yield* runsAfter(499)).toBe(1) // the first wait: half of 1,000 ms
      expect(yield* runsAfter(1)).toBe(2)
      expect(yield* runsAfter(1998)).toBe(2) // the second: 1,999 of 2,000 ms
      expect(yield* runsAfter(1)).toBe(3)
      expect(yield* runsAfter(2999)).toBe(3) // the third: 3,500 of 4,000 ms, capped at 3,000
      yield* TestClock.adjust("1 millis")
      expect(yield* Effect.flip(Fiber.join(fiber))).toMatchObject({ status: 503 })
      expect(busy.runs.count).toBe(4)
    }))

  it.effect("Retry-After is waited as given, capped at maxDelayMs", () =>
    Effect.gen(function*() {
      const limited = failing(failure(429, 60))
      const fiber = yield* Effect.fork(retrying(limited.attempt, { baseDelayMs: 1, maxDelayMs: 10_000, maxAttempts: 2 }))
      yield* TestClock.adjust("9999 millis")
      yield* settle
      expect(limited.runs.count).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Effect.flip(Fiber.join(fiber))).toMatchObject({ status: 429 })
      expect(limited.runs.count).toBe(2)
    }))
})
