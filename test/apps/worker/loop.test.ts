/**
 * The worker loop over the in-memory adapters and blob store, with the real RnnoiseProvider
 * (ffmpeg + RNNoise, one thread) on short generated inputs. Real time (`it.live`), short
 * leases. The audio probe is a stand-in that accepts anything (the real one is tested in
 * test/adapters/ffmpeg/probe.test.ts); the provider is what judges the audio here.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Layer, Logger, Option, Stream } from "effect"
import { MemoryBlobBackdoor, layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import { layerRnnoiseProvider } from "../../../adapters/rnnoise/provider.js"
import { outputKey, runWorker, workOnce } from "../../../apps/worker/loop.js"
import type { JobStatus } from "../../../core/domain/enums.js"
import { JobRecord } from "../../../core/domain/records.js"
import { AudioProbe } from "../../../core/ports/audio.js"
import { BlobStore } from "../../../core/ports/blob-store.js"
import { JobRepo, WalletRepo } from "../../../core/ports/repositories.js"
import { transactionally } from "../../../core/ports/transactor.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import type { Caller } from "../../../core/domain/caller.js"
import { authenticate } from "../../../core/services/caller.js"
import { getCredits } from "../../../core/services/credits.js"
import { completeFile, createFile, validateFile } from "../../../core/services/files.js"
import { createDenoiseJob, getJob } from "../../../core/services/jobs.js"
import { recoverLapsedLeases } from "../../../core/services/worker.js"
import { JobRules } from "../../../core/rules/index.js"
import { coreEnvironment } from "../../support/env.js"
import { makeNoisySpeech } from "../../support/audio-fixtures.js"

const SECONDS = 20
const LEASE_MS = 600

let dir = ""
let speech = new Uint8Array(0)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-worker-"))
  await makeNoisySpeech(join(dir, "talk.wav"), { seconds: SECONDS })
  speech = new Uint8Array(await readFile(join(dir, "talk.wav")))
}, 60_000)

afterAll(() => rm(dir, { recursive: true, force: true }))

/** Reads the whole upload and says it lasts SECONDS. */
const AcceptingProbe = Layer.succeed(AudioProbe, {
  probe: (input) => Effect.as(Stream.runDrain(input), { durationSeconds: SECONDS })
})

const environment = Layer.mergeAll(
  coreEnvironment({ limits: { jobLeaseMs: LEASE_MS } }),
  AcceptingProbe,
  layerRnnoiseProvider({ threads: 1 })
).pipe(Layer.provideMerge(layerMemoryBlobStore))

const run = <A, E>(body: Effect.Effect<A, E, Layer.Layer.Success<typeof environment>>) =>
  Effect.provide(body, environment)

/** A funded live account with a validated upload of `bytes` and a queued job on it. */
const queuedJob = (bytes: Uint8Array, email = "a@example.com") =>
  Effect.gen(function*() {
    const created = yield* createAccountWithKeys({ email, creditMicros: 10_000_000 })
    const caller = yield* authenticate(`Bearer ${created.liveKey}`)
    const { file, upload } = yield* createFile(caller, { filename: "talk.wav", sizeBytes: bytes.byteLength, contentType: "audio/wav" })
    yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putUpload(upload, bytes))
    yield* completeFile(caller, file.id, null)
    yield* validateFile(file.id)
    const job = yield* createDenoiseJob(caller, { file: file.id })
    return { caller, job }
  })

/** Polls the job every 10 ms until `done` holds (or 30 s), recording the statuses and progress seen. */
const watch = (caller: Caller, jobId: string, done: (job: JobRecord) => boolean) =>
  Effect.gen(function*() {
    const statuses: Array<JobStatus> = []
    const progress: Array<number> = []
    for (let i = 0; i < 3000; i++) {
      const job = yield* getJob(caller, jobId)
      if (statuses.at(-1) !== job.status) statuses.push(job.status)
      progress.push(job.progress)
      if (done(job)) return { job, statuses, progress }
      yield* Effect.sleep(Duration.millis(10))
    }
    return yield* Effect.dieMessage(`job ${jobId} did not get there in time`)
  })

const isFinished = (job: JobRecord) => job.status === "succeeded" || job.status === "failed"

const ledgerKinds = (jobId: string) =>
  Effect.map(Effect.flatMap(WalletRepo, (w) => w.ledgerForJob(jobId)), (entries) => entries.map((e) => e.kind))

// One job at a time: these jobs denoise in the main thread (threads: 1), which blocks the
// heartbeats of any other job; with a 600 ms lease a second job's claim would recover the first.
const startWorker = (owner: string) =>
  Effect.forkDaemon(runWorker({ owner, concurrency: 1, pollInterval: Duration.millis(20) }))

describe("worker loop", () => {
  it.live("a live job goes queued → processing → succeeded, with its MP3 stored, charged exactly once", () =>
    run(Effect.gen(function*() {
      const { caller, job } = yield* queuedJob(speech)
      const worker = yield* startWorker("w1")
      const { job: done, statuses, progress } = yield* watch(caller, job.id, isFinished)
      yield* Fiber.interrupt(worker)

      expect(statuses).toEqual(["queued", "processing", "succeeded"])
      // heartbeats carried progress while it ran
      expect(progress.some((p) => p > 0 && p < 1)).toBe(true)
      const stored = yield* Effect.flatMap(BlobStore, (store) => store.stat(outputKey(job.id)))
      expect(done).toMatchObject({
        status: "succeeded",
        progress: 1,
        attempts: 1,
        chargedMicros: job.pricing.estimatedMicros,
        output: { storageKey: `outputs/${job.id}.mp3`, format: "mp3", bitrateKbps: 192, sizeBytes: Option.getOrThrow(stored).sizeBytes }
      })
      expect(yield* ledgerKinds(job.id)).toEqual(["hold", "capture"])
      expect(yield* getCredits(caller)).toEqual({
        balanceMicros: 10_000_000 - job.pricing.estimatedMicros,
        reservedMicros: 0,
        availableMicros: 10_000_000 - job.pricing.estimatedMicros
      })
    })))

  it.live("a provider failure → failed with provider_error, the hold released, nothing stored; ffmpeg's words only in the log", () => {
    const logged: Array<string> = []
    const collect = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message))))
    return run(Effect.gen(function*() {
      const { caller, job } = yield* queuedJob(new TextEncoder().encode("definitely not audio"))
      const worker = yield* startWorker("w1")
      const { job: done } = yield* watch(caller, job.id, isFinished)
      yield* Fiber.interrupt(worker)

      expect(done).toMatchObject({ status: "failed", chargedMicros: null, error: { code: "provider_error" } })
      expect(done.error?.message).toBe(JobRules.JOB_ERROR_MESSAGES.provider_error)
      expect(logged.some((line) => /could not be decoded: Invalid data found/.test(line))).toBe(true)
      expect(yield* ledgerKinds(job.id)).toEqual(["hold", "release"])
      expect((yield* getCredits(caller)).reservedMicros).toBe(0)
      expect(yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.keys())).not.toContain(outputKey(job.id))
    }).pipe(Effect.provide(collect)))
  })

  it.live("a lost lease stops the work; no success is recorded and nothing is charged", () =>
    run(Effect.gen(function*() {
      const { caller, job } = yield* queuedJob(speech)
      const pass = yield* Effect.fork(workOnce("w1"))
      yield* watch(caller, job.id, (j) => j.status === "processing")
      // as if the lease had lapsed and another worker had claimed the job
      const now = yield* Clock.currentTimeMillis
      yield* transactionally(Effect.flatMap(JobRepo, (jobs) =>
        Effect.flatMap(jobs.lockById(job.id), (locked) =>
          jobs.update(new JobRecord({ ...Option.getOrThrow(locked), leaseOwner: "thief", leaseExpiresAt: now + 60_000 })))))

      expect(yield* Fiber.join(pass)).toEqual(Option.some("lease_lost"))
      expect(yield* getJob(caller, job.id)).toMatchObject({ status: "processing", leaseOwner: "thief", chargedMicros: null })
      expect(yield* ledgerKinds(job.id)).toEqual(["hold"])
    })))

  it.live("shutdown: the running job is interrupted and handed back at once, the attempt not spent; another worker finishes it", () =>
    run(Effect.gen(function*() {
      const { caller, job } = yield* queuedJob(speech)
      const first = yield* startWorker("w1")
      yield* watch(caller, job.id, (j) => j.status === "processing")
      yield* Fiber.interrupt(first)
      // back in the queue without waiting for the lease, its hold still open
      expect(yield* getJob(caller, job.id)).toMatchObject({ status: "queued", attempts: 0, leaseOwner: null, progress: 0 })
      expect(yield* ledgerKinds(job.id)).toEqual(["hold"])
      expect(yield* recoverLapsedLeases()).toBe(0)

      const second = yield* startWorker("w2")
      const { job: done } = yield* watch(caller, job.id, isFinished)
      yield* Fiber.interrupt(second)
      expect(done).toMatchObject({ status: "succeeded", attempts: 1 })
      expect(yield* ledgerKinds(job.id)).toEqual(["hold", "capture"])
    })))

  it.live("runs several jobs at once when asked to", () =>
    run(Effect.gen(function*() {
      const a = yield* queuedJob(speech, "a@example.com")
      const b = yield* queuedJob(speech, "b@example.com")
      const worker = yield* Effect.forkDaemon(runWorker({ owner: "w1", concurrency: 2, pollInterval: Duration.millis(20) }))
      const both = yield* Effect.all([
        watch(a.caller, a.job.id, (j) => j.status !== "queued"),
        watch(b.caller, b.job.id, (j) => j.status !== "queued")
      ], { concurrency: 2 })
      // the second was claimed while the first was still running
      expect(both.map(({ job }) => job.status)).toEqual(["processing", "processing"])
      const done = yield* Effect.all([watch(a.caller, a.job.id, isFinished), watch(b.caller, b.job.id, isFinished)])
      yield* Fiber.interrupt(worker)
      expect(done.map(({ job }) => job.status)).toEqual(["succeeded", "succeeded"])
    })))
})
