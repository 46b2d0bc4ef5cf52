/**
 * Dependency faults, through layers that replace the core's services (startTestServer's
 * `override`): a rate-limit store that is down (503 service_unavailable with Retry-After),
 * repositories that die (500 internal_error), a database or a file store that does not answer
 * (503 with Retry-After, decisions.md Faults), a commit whose answer is lost (the retry with
 * the same Idempotency-Key finds the job: one job, one hold), a complete that moved the bytes
 * but could not record it, and a key whose record could not be abandoned (taken over once
 * stale); the server keeps serving, nothing half-done remains, and Idempotency-Key does not
 * record the 5xx.
 */
import { Effect, Layer, LogLevel, Option } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ServiceUnavailable } from "../../core/errors.js"
import { BlobError, BlobStore } from "../../core/ports/blob-store.js"
import { RateLimiter } from "../../core/ports/rate-limiter.js"
import { FileRepo, IdempotencyRepo, JobRepo } from "../../core/ports/repositories.js"
import type { Mode } from "../../core/domain/enums.js"
import { RUNNING_TAKEOVER_MS } from "../../apps/api/server/edge/idempotency.js"
import { makeAdjustableClock } from "../support/clock.js"
import { Transactor } from "../../core/ports/transactor.js"
import { DependencyUnavailable } from "../../core/ports/unavailable.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, complete, createFile, credits, denoise, expectProblem, readyFile, tone, waitForFile } from "./helpers.js"

const healthy = {
  limiterDown: false, jobListDies: false, jobInsertDies: false, fileInsertDies: false,
  databaseSilent: false, storageSilent: false, loseCommitAnswers: 0, loseTestInsertAnswers: 0, fileUpdatesLost: 0,
  idempotencyAbandonFails: false,
  /** The next multipart assembly: "silent" (storage does not answer) or "answer lost" (it lands, then the store's retry is refused). */
  assembly: "healthy" as "healthy" | "silent" | "answer lost"
}
const faults = { ...healthy }
const reset = () => Object.assign(faults, healthy)

/** As the Postgres adapter reports a statement unanswered within its deadline. */
const silentDatabase = () =>
  Effect.die(new DependencyUnavailable({ dependency: "database", message: "JobRepo.get failed: PostgreSQL did not answer within 10000 ms" }))

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
  get: (id: string) => (faults.databaseSilent ? silentDatabase() : jobs.get(id)),
  // a test job is stored by one statement, outside any transaction: its answer lost after it landed
  insertUnlessSubscribed: (job: Parameters<typeof jobs.insertUnlessSubscribed>[0], event: Parameters<typeof jobs.insertUnlessSubscribed>[1]) =>
    Effect.flatMap(jobs.insertUnlessSubscribed(job, event), (stored) => {
      if (faults.loseTestInsertAnswers === 0) return Effect.succeed(stored)
      faults.loseTestInsertAnswers--
      return Effect.die(new DependencyUnavailable({ dependency: "database", message: "Connection terminated unexpectedly" }))
    }),
  list: (query: Parameters<typeof jobs.list>[0]) => (faults.jobListDies ? boom("job list") : jobs.list(query)),
  insert: (job: Parameters<typeof jobs.insert>[0]) => (faults.jobInsertDies ? boom("job insert") : jobs.insert(job)),
  insertNew: (job: Parameters<typeof jobs.insertNew>[0]) => (faults.jobInsertDies ? boom("job insert") : jobs.insertNew(job))
})))

const FaultyFileRepo = Layer.effect(FileRepo, Effect.map(FileRepo, (files) => ({
  ...files,
  insert: (file: Parameters<typeof files.insert>[0]) => (faults.fileInsertDies ? boom("file insert") : files.insert(file)),
  insertNew: (file: Parameters<typeof files.insertNew>[0]) => (faults.fileInsertDies ? boom("file insert") : files.insertNew(file)),
  update: (file: Parameters<typeof files.update>[0]) => {
    if (faults.fileUpdatesLost === 0) return files.update(file)
    faults.fileUpdatesLost--
    return silentDatabase()
  }
})))

/** The record of a failed request cannot be abandoned (the database went away meanwhile). */
const FaultyIdempotencyRepo = Layer.effect(IdempotencyRepo, Effect.map(IdempotencyRepo, (repo) => ({
  ...repo,
  abandon: (accountId: string, mode: Mode, key: string) => (faults.idempotencyAbandonFails ? silentDatabase() : repo.abandon(accountId, mode, key))
})))

/** As the S3 adapter reports a socket that stayed silent. */
const FaultyBlobStore = Layer.effect(BlobStore, Effect.map(BlobStore, (blobs) => ({
  ...blobs,
  stat: (key: string) =>
    faults.storageSilent ? Effect.fail(new BlobError({ message: `stat ${key}: TimeoutError`, unavailable: true })) : blobs.stat(key),
  completeMultipart: (request: Parameters<typeof blobs.completeMultipart>[0]) => {
    const fault = faults.assembly
    faults.assembly = "healthy"
    if (fault === "silent") return Effect.fail(new BlobError({ message: "CompleteMultipartUpload: socket hang up", unavailable: true }))
    if (fault === "answer lost") {
      return Effect.zipRight(blobs.completeMultipart(request), Effect.fail(new BlobError({ message: "NoSuchUpload: The specified upload does not exist" })))
    }
    return blobs.completeMultipart(request)
  }
})))

/** Commits, then loses the answer (the connection died after COMMIT) of the next `loseCommitAnswers` transactions. */
const LosingTransactor = Layer.effect(Transactor, Effect.map(Transactor, (inner) => ({
  withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.flatMap(inner.withTransaction(self), (result): Effect.Effect<A> => {
      if (faults.loseCommitAnswers === 0) return Effect.succeed(result)
      faults.loseCommitAnswers--
      return Effect.die(new DependencyUnavailable({ dependency: "database", message: "Connection terminated unexpectedly" }))
    })
})))

const clock = makeAdjustableClock()

describe("dependency faults", () => {
  let server: TestServer
  beforeAll(async () => {
    // the provoked failures are logged as errors: keep the output quiet
    server = await startTestServer({
      override: Layer.mergeAll(FaultyRateLimiter, FaultyJobRepo, FaultyFileRepo, FaultyBlobStore, LosingTransactor, FaultyIdempotencyRepo),
      clock,
      // multipart from 20 kB, in parts of 8 KiB (the other tests' files are smaller)
      limits: { putMaxBytes: 20_000, multipartPartBytes: 8_192 },
      logLevel: LogLevel.None
    })
  })
  afterEach(() => {
    reset()
    clock.reset()
  })
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

  it("answers 503 service_unavailable with Retry-After while the database does not answer, never 500", async () => {
    const { liveKey } = await server.createAccount()
    faults.databaseSilent = true
    const reply = await call(server, "GET", "/v1/jobs/job_x", { key: liveKey })
    const problem = await expectProblem(server, reply, 503, "service_unavailable")
    expect(reply.headers.get("retry-after")).toBe("2")
    expect(problem.retry_after).toBe(2)
    // what failed stays in the logs
    expect(problem.detail).toBe("the database is briefly unavailable; retry shortly")
    faults.databaseSilent = false
    await expectProblem(server, await call(server, "GET", "/v1/jobs/job_x", { key: liveKey }), 404, "not_found")
  })

  it("answers 503 with Retry-After while file storage does not answer; the upload completes once it does", async () => {
    const { testKey } = await server.createAccount()
    const created = await createFile(server, testKey, { size_bytes: 4 })
    expect((await fetch(created.json.upload.url, { method: "PUT", headers: created.json.upload.headers, body: new Uint8Array(4) })).status).toBe(200)
    faults.storageSilent = true
    const reply = await call(server, "POST", `/v1/files/${created.json.id}/complete`, { key: testKey })
    const problem = await expectProblem(server, reply, 503, "service_unavailable")
    expect(reply.headers.get("retry-after")).toBe("2")
    expect(problem.detail).toBe("file storage is briefly unavailable; retry shortly")
    // nothing changed: the file is still uploading, and completes once storage answers
    expect((await call(server, "GET", `/v1/files/${created.json.id}`, { key: testKey })).json.status).toBe("uploading")
    faults.storageSilent = false
    expect((await call(server, "POST", `/v1/files/${created.json.id}/complete`, { key: testKey })).status).toBe(202)
  })

  it("a create whose commit landed but whose answer was lost: 503, and the retry with the same Idempotency-Key finds that job; one hold", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    faults.loseCommitAnswers = 1
    const lost = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "lost-answer" })
    await expectProblem(server, lost, 503, "service_unavailable")
    // it did land
    const listed = (await call(server, "GET", "/v1/jobs", { key: liveKey })).json.data
    expect(listed).toHaveLength(1)
    expect((await credits(server, liveKey)).reserved_micros).toBe(1_000)
    const retried = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "lost-answer" })
    expect(retried.status, retried.text).toBe(202)
    expect(retried.json.id).toBe(listed[0].id)
    expect((await call(server, "GET", "/v1/jobs", { key: liveKey })).json.data).toHaveLength(1)
    expect((await credits(server, liveKey)).reserved_micros).toBe(1_000)
    // the key is now recorded: a replay; the same key for another request is refused
    expect((await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "lost-answer" })).headers.get("idempotent-replayed")).toBe("true")
    const other = await denoise(server, liveKey, { file: fileId, strength: 0.5 }, { "idempotency-key": "lost-answer" })
    await expectProblem(server, other, 409, "idempotency_key_reused")
  })

  it("a file create whose commit landed but whose answer was lost: the retry with the same Idempotency-Key gets that file with a fresh target, not a second open upload", async () => {
    const { testKey } = await server.createAccount()
    for (const [key, size] of [["lost-put", 10], ["lost-multipart", 30_000]] as const) {
      faults.loseCommitAnswers = 1
      const lost = await createFile(server, testKey, { size_bytes: size }, { "idempotency-key": key })
      await expectProblem(server, lost, 503, "service_unavailable")
      const retried = await createFile(server, testKey, { size_bytes: size }, { "idempotency-key": key })
      expect(retried.status, retried.text).toBe(201)
      // the file the lost attempt made: its upload works with the new target
      const bytes = new Uint8Array(size).fill(7)
      let parts: Array<{ part_number: number; etag: string }> | undefined
      if (retried.json.upload.method === "multipart") {
        parts = []
        for (const part of retried.json.upload.parts as Array<{ part_number: number; url: string }>) {
          const slice = bytes.subarray((part.part_number - 1) * retried.json.upload.part_size, part.part_number * retried.json.upload.part_size)
          const put = await fetch(part.url, { method: "PUT", body: slice })
          expect(put.status).toBe(200)
          parts.push({ part_number: part.part_number, etag: put.headers.get("etag")! })
        }
      } else {
        expect((await fetch(retried.json.upload.url, { method: "PUT", headers: retried.json.upload.headers, body: bytes })).status).toBe(200)
      }
      expect((await complete(server, testKey, retried.json.id, parts === undefined ? undefined : { parts })).status).toBe(202)
      // another request under the key is refused
      await expectProblem(server, await createFile(server, testKey, { size_bytes: size + 1 }, { "idempotency-key": key }), 409, "idempotency_key_reused")
    }
    // no upload was left open by the lost attempts: ten more fit, the eleventh does not
    for (let i = 0; i < 10; i++) expect((await createFile(server, testKey, { size_bytes: 10 })).status).toBe(201)
    await expectProblem(server, await createFile(server, testKey, { size_bytes: 10 }), 429, "quota_exceeded")
  })

  it("a multipart assembly that storage does not answer is a 503, and one whose answer was lost is finished, never a 422 to a correct client", async () => {
    const { testKey } = await server.createAccount()
    for (const fault of ["silent", "answer lost"] as const) {
      const created = await createFile(server, testKey, { size_bytes: 30_000 })
      expect(created.json.upload.method).toBe("multipart")
      const bytes = new Uint8Array(30_000).fill(3)
      const parts: Array<{ part_number: number; etag: string }> = []
      for (const part of created.json.upload.parts as Array<{ part_number: number; url: string }>) {
        const put = await fetch(part.url, { method: "PUT", body: bytes.subarray((part.part_number - 1) * created.json.upload.part_size, part.part_number * created.json.upload.part_size) })
        parts.push({ part_number: part.part_number, etag: put.headers.get("etag")! })
      }
      faults.assembly = fault
      const first = await complete(server, testKey, created.json.id, { parts })
      if (fault === "silent") {
        await expectProblem(server, first, 503, "service_unavailable")
        expect((await complete(server, testKey, created.json.id, { parts })).status).toBe(202)
      } else {
        expect(first.status, first.text).toBe(202)
      }
      expect((await call(server, "GET", `/v1/files/${created.json.id}`, { key: testKey })).json.status).not.toBe("uploading")
    }
  })

  it("the same for a test job (one statement): the retry finds the job by the key alone; another request under the key is refused", async () => {
    const { testKey } = await server.createAccount()
    const fileId = await readyFile(server, testKey)
    faults.loseTestInsertAnswers = 1
    await expectProblem(server, await denoise(server, testKey, { file: fileId }, { "idempotency-key": "k2" }), 503, "service_unavailable")
    const [job] = (await call(server, "GET", "/v1/jobs", { key: testKey })).json.data
    const retried = await denoise(server, testKey, { file: fileId }, { "idempotency-key": "k2" })
    expect(retried.status, retried.text).toBe(202)
    expect(retried.json.id).toBe(job.id)
    expect(retried.json.status).toBe("succeeded")
    expect(Option.isSome(Option.fromNullable(retried.json.output))).toBe(true)
    // a different request under a key whose first attempt's answer was lost (no record kept): refused by the job itself
    faults.loseTestInsertAnswers = 1
    await expectProblem(server, await denoise(server, testKey, { file: fileId }, { "idempotency-key": "k3" }), 503, "service_unavailable")
    const other = await denoise(server, testKey, { file: fileId, model: "xiaobin-rong/gtcrn" }, { "idempotency-key": "k3" })
    const problem = await expectProblem(server, other, 409, "idempotency_key_reused")
    expect(problem.detail).toMatch(/has another file, model or options/)
    expect((await call(server, "GET", "/v1/jobs", { key: testKey })).json.data).toHaveLength(2)
  })

  it("a multipart complete that moved the bytes but could not record it: the retry finishes it, without assembling again", async () => {
    const { liveKey } = await server.createAccount()
    const audio = tone(2)
    const created = await createFile(server, liveKey, { size_bytes: audio.length })
    const upload = created.json.upload
    expect(upload.method).toBe("multipart")
    const parts: Array<{ part_number: number; etag: string }> = []
    for (const part of upload.parts) {
      const start = (part.part_number - 1) * upload.part_size
      const response = await fetch(part.url, { method: "PUT", body: audio.slice(start, start + upload.part_size) })
      expect(response.status).toBe(200)
      parts.push({ part_number: part.part_number, etag: response.headers.get("etag")! })
    }
    faults.fileUpdatesLost = 1
    await expectProblem(server, await complete(server, liveKey, created.json.id, { parts }), 503, "service_unavailable")
    // the parts were assembled and moved; the retry must not try to assemble them again
    const retried = await complete(server, liveKey, created.json.id, { parts })
    expect(retried.status, retried.text).toBe(202)
    const ready = await waitForFile(server, liveKey, created.json.id)
    expect(ready.json.status).toBe("ready")
  })

  it("a 503 whose Idempotency-Key record could not be abandoned still answers 503; the key is taken over once the record is stale", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    faults.loseCommitAnswers = 1
    faults.idempotencyAbandonFails = true
    await expectProblem(server, await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "stuck" }), 503, "service_unavailable")
    faults.idempotencyAbandonFails = false
    // the record is still running: a retry is told to wait
    const waiting = await expectProblem(server, await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "stuck" }), 409, "idempotency_key_reused")
    expect(waiting.detail).toMatch(/still running/)
    clock.advance(RUNNING_TAKEOVER_MS + 1_000)
    const retried = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "stuck" })
    expect(retried.status, retried.text).toBe(202)
    // the job the lost answer created, not a second one
    expect((await call(server, "GET", "/v1/jobs", { key: liveKey })).json.data.map((j: { id: string }) => j.id)).toEqual([retried.json.id])
    expect((await credits(server, liveKey)).reserved_micros).toBe(1_000)
  })
})
