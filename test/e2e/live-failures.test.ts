/**
 * Credit comes back on every way a live job can end without output, each shown over HTTP
 * (decisions.md, Jobs): the provider refuses (`provider_error`), the provider breaks
 * (`internal_error`), the job's workers keep losing it (the lease lapses 3 times:
 * `internal_error`), and a job canceled while queued (never run). In each case the job is
 * never charged: `charged_micros` null, no `capture` in its ledger, the hold released and the
 * credits back where they were.
 *
 * The providers here are stand-ins (a DenoiseProvider layer given to the test server); the
 * worker loop, the lease and the wallet are the real ones. `/metrics` is scraped around each
 * ending: hush_jobs_finished_total{state="failed"} moves by one per failed job, and
 * hush_jobs{state="processing"} shows a job while its provider runs.
 */
import { Deferred, Effect, Fiber, FiberId, Layer, LogLevel, Option, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { runWorker } from "../../apps/worker/loop.js"
import { BlobStore } from "../../core/ports/blob-store.js"
import { DenoiseProvider, type DenoiseRequest, ProviderFailure } from "../../core/ports/denoise-provider.js"
import { JobRepo, WalletRepo } from "../../core/ports/repositories.js"
import { JobRules } from "../../core/rules/index.js"
import { startTestServer, type TestServer, type TestServerOptions } from "../support/server.js"
import {
  call, credits, denoise, expectJobShape, expectProblem, pollUntil, readyFile, sleep, tone, waitForJob
} from "./helpers.js"
import { delta, metricsOn, type Scrape, scrape } from "./metrics-scrape.js"

const CREDIT = 1_000_000
/** 12 s of audio: 12 × 100 micros. */
const COST = 1_200

const servers: Array<TestServer> = []
const start = async (options: TestServerOptions) => {
  const server = await startTestServer({
    logLevel: LogLevel.None, workerOptions: { pollInterval: "50 millis" }, observability: metricsOn, ...options
  })
  servers.push(server)
  return server
}

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** A stand-in provider: `denoise` is whatever the test says. */
const provider = (denoise: (request: DenoiseRequest) => Effect.Effect<{ readonly sizeBytes: number }, ProviderFailure, BlobStore>) =>
  Layer.effect(DenoiseProvider, Effect.map(BlobStore, (store) => ({
    providers: ["builtin"],
    denoise: (request: DenoiseRequest) => Effect.provideService(denoise(request), BlobStore, store)
  })))

/** A funded live account with a ready 12-second file and a live job on it. */
const liveJob = async (server: TestServer) => {
  const { liveKey, account } = await server.createAccount(CREDIT)
  const fileId = await readyFile(server, liveKey, tone(12))
  const created = await denoise(server, liveKey, { file: fileId })
  expect(created.status, created.text).toBe(202)
  expect(created.json.cost.estimated_micros).toBe(COST)
  return { liveKey, accountId: account.id, fileId, jobId: created.json.id as string }
}

const ledgerKinds = (server: TestServer, jobId: string) =>
  server.run(Effect.map(Effect.flatMap(WalletRepo, (wallets) => wallets.ledgerForJob(jobId)), (entries) => entries.map((e) => e.kind)))

const metrics = (server: TestServer) => scrape(`${server.baseUrl}/metrics`)

/** One more failed job of `model` between the scrapes, and no other ending; its hold released. */
const expectCountedFailed = (before: Scrape, after: Scrape, model: string) => {
  expect(delta(before, after, "hush_jobs_finished_total", { state: "failed", model })).toBe(1)
  expect(delta(before, after, "hush_jobs_finished_total")).toBe(1)
  expect(delta(before, after, "hush_credit_released_micros_total")).toBe(COST)
}

const storedJob = (server: TestServer, jobId: string) =>
  server.run(Effect.flatMap(JobRepo, (jobs) => jobs.get(jobId))).then(Option.getOrThrow)

/** Failed with `code`, no charge, the hold released: over HTTP and in the ledger. */
const expectFailedUncharged = async (server: TestServer, liveKey: string, job: any, code: string) => {
  expectJobShape(job)
  expect(job.status).toBe("failed")
  expect(job.error.code).toBe(code)
  expect(job.output).toBeNull()
  expect(job.cost).toMatchObject({ estimated_micros: COST, charged_micros: null })
  expect(job.receipt).toMatchObject({ charged_micros: null, ledger_txn_id: null })
  expect(job.finished_at).not.toBeNull()
  expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT, reserved_micros: 0, available_micros: CREDIT })
  expect(await ledgerKinds(server, job.id)).toEqual(["hold", "release"])
  const output = await call(server, "GET", `/v1/jobs/${job.id}/output`, { key: liveKey })
  await expectProblem(server, output, 409, "job_not_succeeded")
}

describe("live jobs that end without output are never charged", () => {
  it("the provider fails → failed provider_error with the code's fixed message (its own words logged), hold released", async () => {
    const seen: Array<string> = []
    const logs: Array<string> = []
    const server = await start({
      logs,
      logLevel: LogLevel.Info,
      worker: provider((request) =>
        Effect.suspend(() => {
          seen.push(request.jobId)
          return Effect.fail(new ProviderFailure({ message: "the model refused this audio", retryable: false }))
        }))
    })
    const before = await metrics(server)
    const { liveKey, jobId } = await liveJob(server)
    const done = await waitForJob(server, liveKey, jobId)
    await expectFailedUncharged(server, liveKey, done.json, "provider_error")
    expectCountedFailed(before, await metrics(server), done.json.model)
    expect(done.json.error.message).toBe(JobRules.JOB_ERROR_MESSAGES.provider_error)
    expect(logs.some((line) => line.includes("the model refused this audio") && line.includes(`jobId=${jobId}`))).toBe(true)
    expect(seen).toEqual([jobId])
    expect((await storedJob(server, jobId)).attempts).toBe(1)
  })

  it("a defect in the provider → failed internal_error (its details not shown), hold released", async () => {
    const server = await start({ worker: provider(() => Effect.die(new Error("segfault-ish: secret detail"))) })
    const before = await metrics(server)
    const { liveKey, jobId } = await liveJob(server)
    const done = await waitForJob(server, liveKey, jobId)
    await expectFailedUncharged(server, liveKey, done.json, "internal_error")
    expectCountedFailed(before, await metrics(server), done.json.model)
    expect(done.json.error.message).toBe(JobRules.JOB_ERROR_MESSAGES.internal_error)
    expect((await storedJob(server, jobId)).attempts).toBe(1)
  })

  it("a lease that keeps lapsing (workers die or lose their database) → after 3 attempts failed internal_error, no charge", async () => {
    const LEASE_MS = 500
    // the test runs its own workers (none in the server), each a real worker loop with a provider
    // that never finishes; `started` resolves when a worker's provider has the job
    const server = await start({ limits: { jobLeaseMs: LEASE_MS } })
    const calls: Array<string> = []
    let started = Deferred.unsafeMake<string>(FiberId.none)
    const hangs = Layer.succeed(DenoiseProvider, {
      providers: ["builtin"],
      denoise: (request) =>
        Effect.zipRight(
          Effect.suspend(() => {
            calls.push(request.jobId)
            return Deferred.succeed(started, request.jobId)
          }),
          Effect.never
        )
    })
    /** A worker whose connection to the database can be cut: every job read or write then fails. */
    const startWorker = async (owner: string) => {
      let cut = false
      const guarded = Effect.map(JobRepo, (repo): JobRepo["Type"] => {
        const guard = <A>(effect: Effect.Effect<A>) =>
          Effect.suspend(() => (cut ? Effect.dieMessage("connection to the database lost") : effect))
        return {
          insert: (job) => guard(repo.insert(job)),
          insertNew: (job) => guard(repo.insertNew(job)),
          get: (id) => guard(repo.get(id)),
          update: (job) => guard(repo.update(job)),
          insertUnlessSubscribed: (job, event) => guard(repo.insertUnlessSubscribed(job, event)),
          list: (query) => guard(repo.list(query)),
          countActiveForFile: (fileId) => guard(repo.countActiveForFile(fileId)),
          lockNextQueued: (mode) => guard(repo.lockNextQueued(mode)),
          lockById: (id) => guard(repo.lockById(id)),
          lapsedLeases: (now, limit) => guard(repo.lapsedLeases(now, limit))
        }
      })
      const worker = runWorker({ owner, pollInterval: "50 millis" }).pipe(
        Effect.provide(Layer.merge(hangs, Layer.effect(JobRepo, guarded)))
      )
      const fiber = await server.run(Effect.forkDaemon(worker))
      return { fiber, cutDatabase: () => void (cut = true) }
    }
    const claimed = async () => {
      const jobId = await Effect.runPromise(Deferred.await(started).pipe(Effect.timeout("10 seconds")))
      started = Deferred.unsafeMake<string>(FiberId.none)
      return jobId
    }
    const workers: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
    try {
      const before = await metrics(server)
      const { liveKey, jobId } = await liveJob(server)
      const job = () => call(server, "GET", `/v1/jobs/${jobId}`, { key: liveKey })

      // attempt 1: worker 1 claims the job, then dies: cut off from the database, then stopped, it
      // can neither finish the job nor hand it back (a clean shutdown would requeue it at once)
      const w1 = await startWorker("worker-1")
      workers.push(w1.fiber)
      expect(await claimed()).toBe(jobId)
      expect((await job()).json).toMatchObject({ status: "processing", cost: { charged_micros: null } })
      w1.cutDatabase()
      await server.run(Fiber.interrupt(w1.fiber))
      expect(await storedJob(server, jobId)).toMatchObject({ status: "processing", attempts: 1, leaseOwner: "worker-1" })

      // attempt 2: worker 2 puts the lapsed lease back, claims it, then loses its database:
      // it goes on running the model, but its heartbeats fail
      const w2 = await startWorker("worker-2")
      workers.push(w2.fiber)
      expect(await claimed()).toBe(jobId)
      w2.cutDatabase()
      expect(await storedJob(server, jobId)).toMatchObject({ status: "processing", attempts: 2, leaseOwner: "worker-2" })

      // attempt 3: worker 3 takes it over once worker 2's lease has lapsed, and dies
      const w3 = await startWorker("worker-3")
      workers.push(w3.fiber)
      expect(await claimed()).toBe(jobId)
      expect(await storedJob(server, jobId)).toMatchObject({ status: "processing", attempts: 3, leaseOwner: "worker-3" })
      w3.cutDatabase()
      await server.run(Fiber.interrupt(w3.fiber))

      // worker 4 finds the third lease lapsed: the job fails, the hold is released
      const w4 = await startWorker("worker-4")
      workers.push(w4.fiber)
      const done = await pollUntil(job, (r) => r.json?.status === "failed", 10_000)
      await expectFailedUncharged(server, liveKey, done.json, "internal_error")
      expect(done.json.error.message).toBe(JobRules.JOB_ERROR_MESSAGES.internal_error)
      // counted once, by the lease recovery that failed it
      expectCountedFailed(before, await metrics(server), done.json.model)
      // and no worker ran it a 4th time
      await sleep(4 * LEASE_MS)
      expect(calls).toEqual([jobId, jobId, jobId])
      expect(await storedJob(server, jobId)).toMatchObject({ status: "failed", attempts: 3, leaseOwner: null })
      expect(await ledgerKinds(server, jobId)).toEqual(["hold", "release"])
    } finally {
      for (const fiber of workers) await server.run(Fiber.interrupt(fiber))
    }
  })

  it("a job canceled while queued is never run and never charged", async () => {
    const seen: Array<string> = []
    const release = Deferred.unsafeMake<void>(FiberId.none)
    // the worker (one job at a time) is kept busy with a first job until the test lets it finish
    const server = await start({
      workerOptions: { pollInterval: "50 millis", concurrency: 1 },
      worker: provider((request) =>
        Effect.gen(function*() {
          seen.push(request.jobId)
          yield* Deferred.await(release)
          const store = yield* BlobStore
          return yield* store.write(request.outputKey, Stream.make(new Uint8Array(4_800)), { contentType: "audio/mpeg" }).pipe(Effect.orDie)
        }))
    })
    const before = await metrics(server)
    const { liveKey, fileId, jobId: busy } = await liveJob(server)
    const running = await pollUntil(() => call(server, "GET", `/v1/jobs/${busy}`, { key: liveKey }), (r) => r.json?.status === "processing")
    const live = { model: running.json.model, mode: "live" }
    const whileRunning = await metrics(server)
    expect(whileRunning.value("hush_jobs", { state: "processing", ...live })).toBe(1)
    expect(whileRunning.value("hush_jobs", { state: "queued", ...live })).toBe(0)
    expect(whileRunning.value("hush_worker_busy_slots")).toBe(1)
    // a running job can no longer be canceled
    await expectProblem(server, await call(server, "POST", `/v1/jobs/${busy}/cancel`, { key: liveKey }), 409, "job_not_cancelable")

    const queued = await denoise(server, liveKey, { file: fileId })
    expect(queued.status, queued.text).toBe(202)
    const jobId = queued.json.id as string
    expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT, reserved_micros: 2 * COST })
    const bothLive = await metrics(server)
    expect(bothLive.value("hush_jobs", { state: "processing", ...live })).toBe(1)
    expect(bothLive.value("hush_jobs", { state: "queued", ...live })).toBe(1)
    const canceled = await call(server, "POST", `/v1/jobs/${jobId}/cancel`, { key: liveKey })
    expect(canceled.status, canceled.text).toBe(200)
    expect(canceled.json).toMatchObject({ status: "canceled", cost: { charged_micros: null }, receipt: { ledger_txn_id: null } })
    expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT, reserved_micros: COST })

    // the worker finishes the first job (charged), then has nothing to do
    await Effect.runPromise(Deferred.succeed(release, undefined))
    expect((await waitForJob(server, liveKey, busy)).json).toMatchObject({ status: "succeeded", cost: { charged_micros: COST } })
    const finished = await metrics(server)
    // the drained label sets read 0, not their last value
    expect(finished.value("hush_jobs", { state: "processing", ...live })).toBe(0)
    expect(finished.value("hush_jobs", { state: "queued", ...live })).toBe(0)
    expect(delta(before, finished, "hush_jobs_finished_total", { state: "succeeded" })).toBe(1)
    expect(delta(before, finished, "hush_jobs_finished_total", { state: "canceled" })).toBe(1)
    expect(delta(before, finished, "hush_jobs_finished_total", { state: "failed" })).toBe(0)
    await sleep(500)
    expect(seen).toEqual([busy])
    const after = await call(server, "GET", `/v1/jobs/${jobId}`, { key: liveKey })
    expectJobShape(after.json)
    expect(after.json).toMatchObject({
      status: "canceled", progress: 0, started_at: null, output: null, error: null,
      cost: { estimated_micros: COST, charged_micros: null }, receipt: { charged_micros: null, ledger_txn_id: null }
    })
    expect(await storedJob(server, jobId)).toMatchObject({ status: "canceled", attempts: 0 })
    expect(await ledgerKinds(server, jobId)).toEqual(["hold", "release"])
    expect(await ledgerKinds(server, busy)).toEqual(["hold", "capture"])
    // only the job that ran was charged
    expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT - COST, reserved_micros: 0, available_micros: CREDIT - COST })
  })
})
