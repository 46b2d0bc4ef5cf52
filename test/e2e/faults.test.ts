/**
 * Dependency faults, through layers that replace the core's services (startTestServer's
 * `override`): a rate-limit store that is down (503 service_unavailable with Retry-After) and
 * repositories that die (500 internal_error); the server keeps serving, nothing half-done
 * remains, and Idempotency-Key does not record the 5xx.
 */
import { Effect, Layer, LogLevel } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ServiceUnavailable } from "../../core/errors.js"
import { RateLimiter } from "../../core/ports/rate-limiter.js"
import { FileRepo, JobRepo } from "../../core/ports/repositories.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, createFile, credits, denoise, expectProblem, readyFile } from "./helpers.js"

const faults = { limiterDown: false, jobListDies: false, jobInsertDies: false, fileInsertDies: false }
const reset = () => Object.assign(faults, { limiterDown: false, jobListDies: false, jobInsertDies: false, fileInsertDies: false })

const boom = (what: string) => Effect.die(new Error(`simulated fault: ${what}`))

const FaultyRateLimiter = Layer.effect(RateLimiter, Effect.map(RateLimiter, (limiter) => ({
  ...limiter,
  take: (bucket: Parameters<typeof limiter.take>[0]) =>
    faults.limiterDown
      ? Effect.fail(new ServiceUnavailable({ detail: "the rate-limit store is unreachable", retryAfterSeconds: 2 }))
      : limiter.take(bucket)
})))

const FaultyJobRepo = Layer.effect(JobRepo, Effect.map(JobRepo, (jobs) => ({
  ...jobs,
  list: (query: Parameters<typeof jobs.list>[0]) => (faults.jobListDies ? boom("job list") : jobs.list(query)),
  insert: (job: Parameters<typeof jobs.insert>[0]) => (faults.jobInsertDies ? boom("job insert") : jobs.insert(job))
})))

const FaultyFileRepo = Layer.effect(FileRepo, Effect.map(FileRepo, (files) => ({
  ...files,
  insert: (file: Parameters<typeof files.insert>[0]) => (faults.fileInsertDies ? boom("file insert") : files.insert(file))
})))

describe("dependency faults", () => {
  let server: TestServer
  beforeAll(async () => {
    // the provoked failures are logged as errors: keep the output quiet
    server = await startTestServer({ override: Layer.mergeAll(FaultyRateLimiter, FaultyJobRepo, FaultyFileRepo), logLevel: LogLevel.None })
  })
  afterEach(reset)
  afterAll(async () => {
    await server.close()
  })

  it("answers 503 service_unavailable with Retry-After while the rate-limit store is down", async () => {
    const { liveKey } = await server.createAccount()
    faults.limiterDown = true
    for (const [method, path, key] of [
      ["GET", "/v1/me", liveKey], ["GET", "/v1/jobs", liveKey], ["POST", "/v1/jobs/job_x/cancel", liveKey], ["GET", "/v1/models", undefined]
    ] as const) {
      const reply = await call(server, method, path, { key })
      const problem = await expectProblem(server, reply, 503, "service_unavailable")
      expect(reply.headers.get("retry-after")).toBe("2")
      expect(problem.retry_after).toBe(2)
    }
    // an unlimited endpoint does not need the store
    expect((await call(server, "GET", "/v1/health")).status).toBe(200)
    faults.limiterDown = false
    expect((await call(server, "GET", "/v1/me", { key: liveKey })).status).toBe(200)
  })

  it("answers 500 internal_error when a repository dies, and keeps serving", async () => {
    const { liveKey } = await server.createAccount()
    faults.jobListDies = true
    const reply = await call(server, "GET", "/v1/jobs", { key: liveKey })
    const problem = await expectProblem(server, reply, 500, "internal_error")
    expect(problem.detail).not.toContain("simulated fault") // no internals leak
    expect(problem.detail).toContain(problem.request_id)
    // the rest of the API answers, during and after
    expect((await call(server, "GET", "/v1/me", { key: liveKey })).status).toBe(200)
    expect((await call(server, "GET", "/v1/health")).status).toBe(200)
    faults.jobListDies = false
    expect((await call(server, "GET", "/v1/jobs", { key: liveKey })).status).toBe(200)
  })

  it("leaves nothing held when a job cannot be written (500), and the retry with the same Idempotency-Key runs afresh", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const before = await credits(server, liveKey)
    faults.jobInsertDies = true
    const failed = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "job-once" })
    await expectProblem(server, failed, 500, "internal_error")
    expect(failed.headers.get("idempotent-replayed")).toBeNull()
    // the hold was in the same transaction as the job: rolled back
    expect(await credits(server, liveKey)).toEqual(before)
    faults.jobInsertDies = false
    expect((await call(server, "GET", "/v1/jobs", { key: liveKey })).json.data).toEqual([])
    const retried = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "job-once" })
    expect(retried.status).toBe(202)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
    expect((await credits(server, liveKey)).reserved_micros).toBe(1_000)
    // …and now it is recorded
    const replay = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "job-once" })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.json.id).toBe(retried.json.id)
    expect((await call(server, "GET", "/v1/jobs", { key: liveKey })).json.data).toHaveLength(1)
  })

  it("creates no file when its record cannot be written (500); the retry runs afresh", async () => {
    const { testKey } = await server.createAccount()
    faults.fileInsertDies = true
    const failed = await createFile(server, testKey, { size_bytes: 10 }, { "idempotency-key": "file-once" })
    await expectProblem(server, failed, 500, "internal_error")
    faults.fileInsertDies = false
    const retried = await createFile(server, testKey, { size_bytes: 10 }, { "idempotency-key": "file-once" })
    expect(retried.status).toBe(201)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
    // exactly one open upload came of it: nine more fit, the tenth more does not
    for (let i = 0; i < 9; i++) expect((await createFile(server, testKey, { size_bytes: 10 })).status).toBe(201)
    await expectProblem(server, await createFile(server, testKey, { size_bytes: 10 }), 429, "quota_exceeded")
  })
})
