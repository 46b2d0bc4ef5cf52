/**
 * The worker loop: put lapsed leases back, claim the oldest live job, run its model under a
 * heartbeat, finish it. A job is charged only by `succeedJob`, exactly once, and only while
 * this worker still holds its lease.
 *
 * Shutdown (interrupting the loop): no new claims; a running job is interrupted (its ffmpeg
 * processes are killed) and handed back to the queue at once, that claim not counted as an
 * attempt. Should the hand-back itself fail (database down), the lease lapses and any
 * worker's `recoverLapsedLeases` requeues the job within `jobLeaseMs`.
 *
 * Scheduling: one long RNNoise job keeps every core busy by itself (its chunks share the
 * thread pool), but a short one leaves them idle during its fixed costs (two ffmpeg starts,
 * the claim and finish transactions, the first and last chunk). So a worker runs several jobs
 * at once, as many as their length allows: each built-in job weighs its duration over
 * FULL_LOAD_SECONDS (at most 1), and a new job is claimed while the running ones weigh less
 * than 1 and fewer than `concurrency` run. A 6-hour job runs alone; 13-second jobs run
 * `concurrency` at a time, their chunks interleaved on the same threads.
 */
import { Cause, Clock, Duration, Effect, Exit, FiberSet, Metric, Option, Queue, Ref } from "effect"
import { BUILTIN_RUNNER } from "../../adapters/rnnoise/provider.js"
import { findModel, ModelCatalog } from "../../core/domain/catalog.js"
import { OUTPUT_FORMATS, type OutputFormat, outputBitrateKbps } from "../../core/domain/denoise-options.js"
import { LimitsConfig } from "../../core/domain/limits.js"
import type { JobRecord } from "../../core/domain/records.js"
import * as Metrics from "../../core/observability/metrics.js"
import { DenoiseProvider, type DenoiseRequest } from "../../core/ports/denoise-provider.js"
import type { JobTransitionRefused } from "../../core/rules/jobs.js"
import { retryWhileUnavailable } from "../../core/ports/unavailable.js"
import { nextJobQueued } from "../../core/services/job-queued.js"
import {
  claimNext, failJob, finishQueuedTestJobs, handBackJob, heartbeat, recoverLapsedLeases, succeedJob
} from "../../core/services/worker.js"

export interface WorkerLoopOptions {
  /**
   * This process's name as a lease owner; unique among running workers. Each job running at
   * once holds its lease under a name of its own: the first `owner`, the others `${owner}#2`…
   */
  readonly owner: string
  /** The most jobs run at once (default DEFAULT_CONCURRENCY); fewer when they are long (see above). */
  readonly concurrency?: number
  /** Pause after finding the queue empty. Default 1 second. */
  readonly pollInterval?: Duration.DurationInput
}

export type JobOutcome = "succeeded" | "failed" | "lease_lost"

export const outputKey = (jobId: string, format: OutputFormat = "mp3") => `outputs/${jobId}.${OUTPUT_FORMATS[format].extension}`

/** Renews the lease every leaseMs / 3 with the latest progress; completes only once the lease is lost. */
const holdLease = (job: JobRecord, owner: string, progress: Ref.Ref<number>) =>
  Effect.gen(function*() {
    const { jobLeaseMs } = yield* LimitsConfig
    for (;;) {
      yield* Effect.sleep(Duration.millis(jobLeaseMs / 3))
      const lost = yield* Ref.get(progress).pipe(
        Effect.flatMap((fraction) => heartbeat(job.id, owner, fraction)),
        Effect.as(false),
        Effect.catchTag("JobTransitionRefused", () => Effect.succeed(true)),
        // A failed renewal (database down) is retried at the next beat; the lease may lapse meanwhile.
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("heartbeat failed", cause), false))
      )
      if (lost) return
    }
  })

/**
 * Finishing refused means another worker or the lease recovery took the job meanwhile. A
 * database that does not answer is tried again for as long as the lease lasts: the move checks
 * the job's status and lease under its lock first, so a retry after a commit whose answer was
 * lost is refused (the job is no longer processing) and captures or releases nothing twice.
 */
const finishing = <R>(move: Effect.Effect<unknown, JobTransitionRefused, R>, outcome: JobOutcome) =>
  Effect.flatMap(LimitsConfig, ({ jobLeaseMs }) => retryWhileUnavailable(move, { forMs: jobLeaseMs, what: "finishing the job" })).pipe(
    Effect.as(outcome),
    Effect.catchTag("JobTransitionRefused", () => Effect.succeed<JobOutcome>("lease_lost")),
    Effect.withSpan("job.finish", { attributes: { "hush.outcome": outcome } })
  )

/** Runs one claimed job to its end, and records how long it ran (and its real-time factor when it succeeded). */
export const processJob = (job: JobRecord, owner: string) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeNanos
    yield* Effect.logDebug(`job claimed: ${job.model}, ${job.durationSeconds} s of audio, attempt ${job.attempts}`)
    const outcome = yield* runJob(job, owner)
    const seconds = Number((yield* Clock.currentTimeNanos) - started) / 1e9
    yield* Metrics.observe(Metrics.jobDuration, { model: job.model, outcome }, seconds)
    yield* Metrics.count(Metrics.workerBusySeconds, {}, seconds)
    if (outcome === "succeeded" && job.durationSeconds > 0) {
      yield* Metrics.observe(Metrics.jobRealtimeFactor, { model: job.model }, seconds / job.durationSeconds)
    }
    return outcome
  }).pipe(Effect.withSpan("runJob", {
    root: true,
    attributes: { "hush.job_id": job.id, "hush.account_id": job.accountId, "hush.model": job.model, "hush.worker": owner }
  }))

const runJob = (job: JobRecord, owner: string) =>
  Effect.gen(function*() {
    const provider = yield* DenoiseProvider
    const model = findModel(yield* ModelCatalog, job.model)
    if (Option.isNone(model) || !provider.providers.includes(model.value.runner)) {
      const message = `model '${job.model}' cannot run on this worker`
      yield* Effect.logError(message)
      return yield* finishing(failJob(job.id, owner, { code: "internal_error", detail: message }), "failed")
    }
    const progress = yield* Ref.make(0)
    const request: DenoiseRequest = {
      jobId: job.id,
      model: job.model,
      inputKey: job.inputStorageKey,
      outputKey: outputKey(job.id, job.options.format),
      bitrateKbps: model.value.output.bitrateKbps,
      durationSeconds: job.durationSeconds,
      strength: job.options.strength,
      format: job.options.format,
      loudness: job.options.loudness,
      onProgress: (fraction) => Ref.set(progress, fraction)
    }
    // Storage (or anything the provider needs) unreachable: the model runs again, with backoff,
    // while the lease is held, for at most dependencyOutageMs (decisions.md, Faults); then the
    // job fails with internal_error below.
    const { dependencyOutageMs } = yield* LimitsConfig
    const denoised = retryWhileUnavailable(provider.denoise(request), { forMs: dependencyOutageMs, what: "running the model" })
    // Whichever ends first wins; the other is interrupted (a lost lease stops the model).
    // The provider's step spans (job.decode, job.denoise, …, job.upload) are children of runJob.
    const ended = yield* Effect.raceFirst(
      Effect.map(Effect.exit(denoised), (exit) => Option.some(exit)),
      Effect.as(holdLease(job, owner, progress), Option.none())
    )
    if (Option.isNone(ended)) {
      yield* Effect.logWarning("lease lost: the job was stopped and is not finished here")
      return "lease_lost" as const
    }
    const exit = ended.value
    if (Exit.isSuccess(exit)) {
      const { sizeBytes, report } = exit.value
      const bitrateKbps = outputBitrateKbps(request.format, sizeBytes, job.durationSeconds, request.format === "mp3" ? request.bitrateKbps : undefined)
      const output = { storageKey: request.outputKey, sizeBytes, bitrateKbps, format: request.format, report }
      return yield* finishing(succeedJob(job.id, owner, output), "succeeded")
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) {
      return yield* finishing(failJob(job.id, owner, { code: "provider_error", detail: failure.value.message }), "failed")
    }
    yield* Effect.logError("denoising failed", exit.cause)
    return yield* finishing(failJob(job.id, owner, { code: "internal_error", detail: "a defect (logged above)" }), "failed")
  }).pipe(Effect.annotateLogs({ jobId: job.id, owner }))

/** Gives an interrupted job back; a refusal means it was finished or taken meanwhile. */
const handBack = (job: JobRecord, owner: string) =>
  handBackJob(job.id, owner).pipe(
    Effect.zipRight(Effect.logInfo("shutting down: the job is back in the queue")),
    Effect.catchTag("JobTransitionRefused", () => Effect.void),
    Effect.catchAllCause((cause) => Effect.logWarning("hand-back failed; the job returns when its lease lapses", cause)),
    Effect.annotateLogs({ jobId: job.id, owner })
  )

/** One pass: recover lapsed leases, then claim and run one job. None when the queue was empty. */
export const workOnce = (owner: string) =>
  // A claim is never left between its commit and its run: interruption reaches the job only
  // inside processJob, where it is handed back.
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      yield* restore(recoverLapsedLeases())
      const claimed = yield* claimNext(owner)
      if (Option.isNone(claimed)) return Option.none<JobOutcome>()
      const job = claimed.value
      return Option.some(yield* restore(processJob(job, owner)).pipe(Effect.onInterrupt(() => handBack(job, owner))))
    })
  )

/** Jobs at once by default: enough short ones to hide each other's fixed costs on a few cores. */
export const DEFAULT_CONCURRENCY = 4

/** A built-in job this long (or longer) keeps every core busy alone: its weight is 1. */
export const FULL_LOAD_SECONDS = 300

/** A job's share of the machine: its length over FULL_LOAD_SECONDS for the built-in runner; none for a remote one. */
const weightOf = (job: JobRecord) =>
  Effect.map(ModelCatalog, (catalog) => {
    const model = findModel(catalog, job.model)
    if (Option.isSome(model) && model.value.runner !== BUILTIN_RUNNER) return 0
    return Math.min(1, Math.max(0, job.durationSeconds) / FULL_LOAD_SECONDS)
  })

/**
 * Claims and runs jobs until interrupted, several at once as their weights allow (see the
 * module comment); a failed claim is logged and retried after the poll interval.
 */
export const runWorker = (options: WorkerLoopOptions) => {
  const pause = Duration.decode(options.pollInterval ?? Duration.seconds(1))
  // not a number (e.g. WORKER_CONCURRENCY=abc) is the default, not NaN: Math.max(1, NaN) is NaN, which ran none
  const requested = Math.floor(options.concurrency ?? DEFAULT_CONCURRENCY)
  const concurrency = Number.isFinite(requested) ? Math.max(1, requested) : DEFAULT_CONCURRENCY
  // Each running job holds its lease under a name of its own, taken from a slot freed only
  // when its job ends: with one shared name, a job whose lease lapsed (heartbeats failing)
  // could renew, fail or finish the job after another slot of this process had claimed it again.
  const ownerOf = (slot: number) => (slot === 0 ? options.owner : `${options.owner}#${slot + 1}`)
  return Effect.scoped(Effect.gen(function*() {
    // several workers in one process (tests) add up
    yield* Effect.acquireRelease(Metric.incrementBy(Metrics.workerSlots, concurrency), () => Metric.incrementBy(Metrics.workerSlots, -concurrency))
    const running = yield* FiberSet.make<unknown, never>()
    const free = Array.from({ length: concurrency }, (_, slot) => slot)
    let load = 0
    // a job's end wakes the claimer (sliding: one pending wake is enough)
    const ended = yield* Queue.sliding<void>(1)
    /** Claims one job under `slot` and starts it; false when the queue was empty. */
    const claimInto = (slot: number) =>
      // A claim is never left between its commit and its run: the job's fiber is forked while
      // uninterruptible, and interruption reaches it only inside processJob, where it is handed back.
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const owner = ownerOf(slot)
          yield* restore(recoverLapsedLeases())
          yield* restore(finishQueuedTestJobs())
          const claimed = yield* claimNext(owner)
          if (Option.isNone(claimed)) return false
          const job = claimed.value
          const weight = yield* weightOf(job)
          load += weight
          yield* Metric.increment(Metrics.workerBusySlots)
          const release = Effect.zipRight(
            Effect.sync(() => {
              load -= weight
              free.push(slot)
            }),
            Effect.zipRight(Metric.incrementBy(Metrics.workerBusySlots, -1), Queue.offer(ended, undefined))
          )
          yield* FiberSet.run(running, restore(processJob(job, owner)).pipe(
            Effect.onInterrupt(() => handBack(job, owner)),
            Effect.catchAllCause((cause) => Effect.logError("worker job failed", cause)),
            Effect.ensuring(release)
          ))
          return true
        })
      )
    for (;;) {
      if (free.length === 0 || load >= 1) {
        yield* Queue.take(ended)
        continue
      }
      free.sort((a, b) => a - b)
      const slot = free.shift()!
      const claimed = yield* claimInto(slot).pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("worker pass failed", cause), false))
      )
      if (!claimed) {
        free.push(slot)
        // the queue was empty (or the database failed): look again after the pause, when a job
        // ends, or when this process queues one (core/services/job-queued.ts)
        yield* Effect.raceAll([Effect.sleep(pause), Queue.take(ended), nextJobQueued])
      }
    }
  }).pipe(Effect.annotateLogs({ worker: options.owner })))
}
