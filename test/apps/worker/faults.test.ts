/**
 * The worker when its dependencies misbehave (decisions.md, Faults), over the in-memory
 * adapters, with a provider that writes a fixed output unless storage is "down" (it dies with a
 * BlobError marked unavailable, as the RNNoise provider does on an S3 timeout), and a Transactor
 * that can lose the answer of a commit that landed:
 *   - storage unreachable: the job is run again with backoff inside its lease, and succeeds,
 *     charged once; unreachable past dependencyOutageMs: failed with internal_error, released once;
 *   - a success whose commit answer was lost: the retry finds the job finished and charges
 *     nothing more;
 *   - a queued test job that the API never finished is finished by a worker.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, Stream } from "effect"
import { MemoryBlobBackdoor, layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import { outputKey, runWorker } from "../../../apps/worker/loop.js"
import type { Limits } from "../../../core/domain/limits.js"
import { JobRecord } from "../../../core/domain/records.js"
import { AudioProbe } from "../../../core/ports/audio.js"
import { BlobError, BlobStore } from "../../../core/ports/blob-store.js"
import { DenoiseProvider } from "../../../core/ports/denoise-provider.js"
import { JobRepo, WalletRepo } from "../../../core/ports/repositories.js"
import { Transactor } from "../../../core/ports/transactor.js"
import { DependencyUnavailable } from "../../../core/ports/unavailable.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import type { Caller } from "../../../core/domain/caller.js"
import { authenticate } from "../../../core/services/caller.js"
import { getCredits } from "../../../core/services/credits.js"
import { completeFile, createFile, validateFile } from "../../../core/services/files.js"
import { createDenoiseJob, getJob } from "../../../core/services/jobs.js"
import { finishQueuedTestJobs } from "../../../core/services/worker.js"
import { coreEnvironment } from "../../support/env.js"

const OUTPUT = new Uint8Array(4_000).fill(7)

/** What the fake provider and the transactor do; each test sets it. */
const faults = { storageDownForRuns: 0, runs: 0, loseSuccessCommitAnswers: 0, lostAnswers: 0 }

const FakeProvider = Layer.effect(DenoiseProvider, Effect.map(BlobStore, (store) => ({
  providers: ["builtin"],
  denoise: (request) =>
    Effect.suspend(() => {
      faults.runs++
      if (faults.runs <= faults.storageDownForRuns) {
        return Effect.die(new BlobError({ message: `read ${request.inputKey}: TimeoutError`, unavailable: true }))
      }
      return store.write(request.outputKey, Stream.make(OUTPUT), { contentType: "audio/mpeg" }).pipe(
        Effect.orDie,
        Effect.map(({ sizeBytes }) => ({ sizeBytes }))
      )
    })
})))

/** Commits, then loses the answer of a transaction that made a job succeed (its connection died after COMMIT). */
const LosingTransactor = Layer.effect(Transactor, Effect.map(Transactor, (inner) => ({
  withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Effect.flatMap(inner.withTransaction(self), (result): Effect.Effect<A> => {
      if (result instanceof JobRecord && result.status === "succeeded" && faults.lostAnswers < faults.loseSuccessCommitAnswers) {
        faults.lostAnswers++
        return Effect.die(new DependencyUnavailable({ dependency: "database", message: "Connection terminated unexpectedly (after COMMIT)" }))
      }
      return Effect.succeed(result)
    })
})))

const AcceptingProbe = Layer.succeed(AudioProbe, { probe: (input) => Effect.as(Stream.runDrain(input), { durationSeconds: 10 }) })

const environment = (limits: Partial<Limits> = {}) =>
  Layer.provideMerge(
    Layer.mergeAll(LosingTransactor, FakeProvider),
    Layer.mergeAll(coreEnvironment({ limits: { jobLeaseMs: 3_000, ...limits } }), AcceptingProbe).pipe(Layer.provideMerge(layerMemoryBlobStore))
  )

const reset = () => Object.assign(faults, { storageDownForRuns: 0, runs: 0, loseSuccessCommitAnswers: 0, lostAnswers: 0 })

/** A funded live account with a validated upload and a queued job (test mode: a test job). */
const queuedJob = (mode: "live" | "test" = "live") =>
  Effect.gen(function*() {
    const created = yield* createAccountWithKeys({ email: `${mode}@example.com`, creditMicros: 10_000_000 })
    const caller = yield* authenticate(`Bearer ${mode === "live" ? created.liveKey : created.testKey}`)
    const { file, upload } = yield* createFile(caller, { filename: "a.wav", sizeBytes: 100, contentType: "audio/wav" })
    yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putUpload(upload, new Uint8Array(100)))
    yield* completeFile(caller, file.id, null)
    yield* validateFile(file.id)
    return { caller, job: yield* createDenoiseJob(caller, { file: file.id }) }
  })

const finished = (caller: Caller, jobId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2_000; i++) {
      const job = yield* getJob(caller, jobId)
      if (job.status === "succeeded" || job.status === "failed") return job
      yield* Effect.sleep(Duration.millis(10))
    }
    return yield* Effect.dieMessage(`job ${jobId} did not finish`)
  })

const ledgerKinds = (jobId: string) =>
  Effect.map(Effect.flatMap(WalletRepo, (w) => w.ledgerForJob(jobId)), (entries) => entries.map((e) => e.kind))

const worker = () => Effect.forkDaemon(runWorker({ owner: "w1", concurrency: 1, pollInterval: Duration.millis(20) }))

describe("worker faults", () => {
  it.live("storage unreachable: the model runs again with backoff inside the lease; the job succeeds, charged once", () =>
    Effect.gen(function*() {
      reset()
      faults.storageDownForRuns = 2
      const { caller, job } = yield* queuedJob()
      const running = yield* worker()
      const done = yield* finished(caller, job.id)
      yield* Fiber.interrupt(running)
      expect(faults.runs).toBe(3)
      expect(done).toMatchObject({ status: "succeeded", attempts: 1, chargedMicros: job.pricing.estimatedMicros, error: null })
      expect(yield* ledgerKinds(job.id)).toEqual(["hold", "capture"])
      expect((yield* getCredits(caller)).reservedMicros).toBe(0)
    }).pipe(Effect.provide(environment())))

  it.live("storage unreachable past dependencyOutageMs: failed with internal_error, the hold released once, nothing charged", () =>
    Effect.gen(function*() {
      reset()
      faults.storageDownForRuns = 1_000
      const { caller, job } = yield* queuedJob()
      const running = yield* worker()
      const done = yield* finished(caller, job.id)
      yield* Fiber.interrupt(running)
      // 0.5 s, then 1 s, then 2 s apart: the outage outlasts the 1.2 s after the third run
      expect(faults.runs).toBeGreaterThanOrEqual(3)
      expect(done).toMatchObject({ status: "failed", chargedMicros: null, error: { code: "internal_error" } })
      expect(yield* ledgerKinds(job.id)).toEqual(["hold", "release"])
      expect(yield* getCredits(caller)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
    }).pipe(Effect.provide(environment({ dependencyOutageMs: 1_200 }))))

  it.live("a success whose commit answer was lost: the retry finds the job succeeded and captures nothing more", () =>
    Effect.gen(function*() {
      reset()
      faults.loseSuccessCommitAnswers = 1
      const { caller, job } = yield* queuedJob()
      const running = yield* worker()
      const done = yield* finished(caller, job.id)
      // the worker retries the move after the lost answer, then stops trying
      yield* Effect.sleep(Duration.millis(1_500))
      yield* Fiber.interrupt(running)
      expect(faults.lostAnswers).toBe(1)
      expect(done).toMatchObject({ status: "succeeded", attempts: 1, chargedMicros: job.pricing.estimatedMicros })
      expect(yield* ledgerKinds(job.id)).toEqual(["hold", "capture"])
      expect(yield* getCredits(caller)).toEqual({
        balanceMicros: 10_000_000 - job.pricing.estimatedMicros, reservedMicros: 0, availableMicros: 10_000_000 - job.pricing.estimatedMicros
      })
      const stored = yield* Effect.flatMap(BlobStore, (store) => store.stat(outputKey(job.id)))
      expect(Option.map(stored, (s) => s.sizeBytes)).toEqual(Option.some(OUTPUT.byteLength))
    }).pipe(Effect.provide(environment())))

  it.live("a queued test job the API never finished is finished by a worker, with the sample, free", () =>
    Effect.gen(function*() {
      reset()
      const { caller, job } = yield* queuedJob("test")
      // createDenoiseJob stores a test job queued (as the API does when an endpoint subscribes)
      expect(job.status).toBe("queued")
      expect(yield* finishQueuedTestJobs()).toBe(1)
      expect(yield* getJob(caller, job.id)).toMatchObject({ status: "succeeded", chargedMicros: 0, output: { storageKey: "samples/test-mode.mp3" } })
      // nothing left to finish; a finished job is not finished twice
      expect(yield* finishQueuedTestJobs()).toBe(0)
      const queued = yield* Effect.flatMap(JobRepo, (jobs) => jobs.lockNextQueued("test"))
      expect(Option.isNone(queued)).toBe(true)
    }).pipe(Effect.provide(environment())))
})
