/**
 * How many jobs a worker runs at once (apps/worker/loop.ts): as many as their length allows,
 * up to `concurrency`. A provider that finishes a job only when the test says so shows which
 * jobs run together; the probe gives each file the length of its upload in bytes, in seconds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Layer, Metric, Stream } from "effect"
import { MemoryBlobBackdoor, layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import { FULL_LOAD_SECONDS, runWorker } from "../../../apps/worker/loop.js"
import * as Metrics from "../../../core/observability/metrics.js"
import { AudioProbe } from "../../../core/ports/audio.js"
import { DenoiseProvider } from "../../../core/ports/denoise-provider.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import { authenticate } from "../../../core/services/caller.js"
import { completeFile, createFile, validateFile } from "../../../core/services/files.js"
import { layerJobQueued } from "../../../core/services/job-queued.js"
import { createDenoiseJob, getJob } from "../../../core/services/jobs.js"
import { coreEnvironment } from "../../support/env.js"

/** Every job of this file runs until its own gate opens; `running` lists the jobs inside the provider, with their lease owners. */
const makeGatedProvider = Effect.gen(function*() {
  const gates = new Map<string, Deferred.Deferred<void>>()
  const running = new Set<string>()
  let most = 0
  const gate = (jobId: string) => {
    let found = gates.get(jobId)
    if (found === undefined) {
      found = Deferred.unsafeMake<void>(undefined as never)
      gates.set(jobId, found)
    }
    return found
  }
  const layer = Layer.succeed(DenoiseProvider, {
    providers: ["builtin"],
    denoise: (request) =>
      Effect.gen(function*() {
        running.add(request.jobId)
        most = Math.max(most, running.size)
        yield* Deferred.await(gate(request.jobId))
        return { sizeBytes: 1 }
      }).pipe(Effect.ensuring(Effect.sync(() => running.delete(request.jobId))))
  })
  return {
    layer,
    running: () => [...running].sort(),
    most: () => most,
    finish: (jobId: string) => Deferred.succeed(gate(jobId), undefined)
  }
})

/** Seconds of audio = bytes of the upload. */
const LengthProbe = Layer.succeed(AudioProbe, {
  probe: (input) => Effect.map(Stream.runCollect(input), (chunks) => ({ durationSeconds: [...chunks].reduce((n, c) => n + c.length, 0) }))
})

const queuedJob = (seconds: number, email: string) =>
  Effect.gen(function*() {
    const created = yield* createAccountWithKeys({ email, creditMicros: 100_000_000 })
    const caller = yield* authenticate(`Bearer ${created.liveKey}`)
    const { file } = yield* createFile(caller, { filename: "talk.wav", sizeBytes: seconds, contentType: "audio/wav" })
    yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putObject(file.storageKey, new Uint8Array(seconds), "audio/wav"))
    yield* completeFile(caller, file.id, null)
    yield* validateFile(file.id)
    const job = yield* createDenoiseJob(caller, { file: file.id })
    return { caller, id: job.id }
  })

/** Waits (polling every 10 ms, 10 s at most) until `done` holds. */
const until = <E, R>(done: () => Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000; i++) {
      if (yield* done()) return
      yield* Effect.sleep(Duration.millis(10))
    }
    return yield* Effect.dieMessage("timed out")
  })

const withWorker = <A, E, R>(body: (provider: Effect.Effect.Success<typeof makeGatedProvider>) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const provider = yield* makeGatedProvider
    const environment = Layer.mergeAll(coreEnvironment(), LengthProbe, provider.layer).pipe(Layer.provideMerge(layerMemoryBlobStore))
    return yield* Effect.provide(body(provider), environment)
  })

/** hush_worker_slots and hush_worker_busy_slots now (the process's registry: compare two readings). */
const slotGauges = Effect.all({
  slots: Effect.map(Metric.value(Metrics.workerSlots), (state) => state.value),
  busy: Effect.map(Metric.value(Metrics.workerBusySlots), (state) => state.value)
})

const start = (concurrency: number) => Effect.forkDaemon(runWorker({ owner: "w", concurrency, pollInterval: Duration.millis(10) }))

describe("worker scheduling", () => {
  it.live("short jobs run together, up to `concurrency`, each under a lease owner of its own", () =>
    withWorker((provider) =>
      Effect.gen(function*() {
        const jobs = yield* Effect.forEach([1, 2, 3, 4, 5], (i) => queuedJob(10, `s${i}@example.com`))
        const idle = yield* slotGauges
        const worker = yield* start(3)
        yield* until(() => Effect.succeed(provider.running().length === 3))
        // the busy share's gauges: 3 slots, all 3 busy
        expect(yield* slotGauges).toEqual({ slots: idle.slots + 3, busy: idle.busy + 3 })
        const owners = yield* Effect.forEach(provider.running(), (id) =>
          Effect.map(getJob(jobs.find((j) => j.id === id)!.caller, id), (job) => job.leaseOwner))
        expect(owners.sort()).toEqual(["w", "w#2", "w#3"])
        // one ends: the next is claimed
        yield* provider.finish(provider.running()[0]!)
        yield* until(() => Effect.succeed(provider.running().length === 3))
        for (const job of jobs) yield* provider.finish(job.id)
        yield* until(() =>
          Effect.map(Effect.forEach(jobs, (j) => getJob(j.caller, j.id)), (all) => all.every((job) => job.status === "succeeded")))
        yield* Fiber.interrupt(worker)
        expect(provider.most()).toBe(3)
        expect(yield* slotGauges).toEqual(idle)
      })))

  it.live("a job as long as FULL_LOAD_SECONDS runs alone; shorter ones share the machine by length", () =>
    withWorker((provider) =>
      Effect.gen(function*() {
        const long = yield* queuedJob(FULL_LOAD_SECONDS, "long@example.com")
        const halves = yield* Effect.forEach([1, 2, 3], (i) => queuedJob(FULL_LOAD_SECONDS / 2, `half${i}@example.com`))
        const worker = yield* start(4)
        yield* until(() => Effect.succeed(provider.running().length === 1))
        // the long job fills the machine: nothing else is claimed while it runs
        yield* Effect.sleep(Duration.millis(200))
        expect(provider.running()).toEqual([long.id])
        yield* provider.finish(long.id)
        // two halves fill it again: the third waits for one of them
        yield* until(() => Effect.succeed(provider.running().length === 2))
        yield* Effect.sleep(Duration.millis(200))
        expect(provider.running()).toEqual([halves[0]!.id, halves[1]!.id].sort())
        yield* provider.finish(halves[0]!.id)
        yield* until(() => Effect.succeed(provider.running().includes(halves[2]!.id)))
        yield* provider.finish(halves[1]!.id)
        yield* provider.finish(halves[2]!.id)
        yield* until(() => Effect.succeed(provider.running().length === 0))
        yield* Fiber.interrupt(worker)
        expect(provider.most()).toBe(2)
      })))

  it.live("a job queued in this process wakes the idle worker at once; without the signal it waits for the next poll", () =>
    withWorker((provider) =>
      Effect.gen(function*() {
        // both workers look at the queue once an hour: only a wake can start the job within the test
        const idle = (owner: string) => Effect.forkDaemon(runWorker({ owner, concurrency: 2, pollInterval: Duration.hours(1) }))
        yield* Effect.provide(
          Effect.gen(function*() {
            const worker = yield* idle("w")
            yield* Effect.sleep(Duration.millis(200)) // it found the queue empty
            const job = yield* queuedJob(10, "wake@example.com")
            yield* until(() => Effect.succeed(provider.running().includes(job.id)))
            yield* provider.finish(job.id)
            yield* until(() => Effect.map(getJob(job.caller, job.id), (found) => found.status === "succeeded"))
            yield* Fiber.interrupt(worker)
          }),
          layerJobQueued
        )
        const worker = yield* idle("v")
        yield* Effect.sleep(Duration.millis(200))
        const job = yield* queuedJob(10, "nowake@example.com")
        yield* Effect.sleep(Duration.millis(500))
        expect((yield* getJob(job.caller, job.id)).status).toBe("queued")
        expect(provider.running()).toEqual([])
        yield* Fiber.interrupt(worker)
      })))

  it.live("shutdown hands every running job back", () =>
    withWorker((provider) =>
      Effect.gen(function*() {
        const jobs = yield* Effect.forEach([1, 2], (i) => queuedJob(10, `b${i}@example.com`))
        const worker = yield* start(3)
        yield* until(() => Effect.succeed(provider.running().length === 2))
        yield* Fiber.interrupt(worker)
        for (const job of jobs) {
          expect(yield* getJob(job.caller, job.id)).toMatchObject({ status: "queued", attempts: 0, leaseOwner: null })
        }
      })))
})
