/**
 * The worker loop: put lapsed leases back, claim the oldest live job, run its model under a
 * heartbeat, finish it. A job is charged only by `succeedJob`, exactly once, and only while
 * this worker still holds its lease.
 *
 * Shutdown (interrupting the loop): no new claims; a running job is interrupted (its ffmpeg
 * processes are killed) and handed back to the queue at once, that claim not counted as an
 * attempt. Should the hand-back itself fail (database down), the lease lapses and any
 * worker's `recoverLapsedLeases` requeues the job within `jobLeaseMs`.
 */
import { Cause, Duration, Effect, Exit, Option, Ref } from "effect"
import { findModel, ModelCatalog } from "../../core/domain/catalog.js"
import { LimitsConfig } from "../../core/domain/limits.js"
import type { JobRecord } from "../../core/domain/records.js"
import { DenoiseProvider, type DenoiseRequest } from "../../core/ports/denoise-provider.js"
import type { JobTransitionRefused } from "../../core/rules/jobs.js"
import { claimNext, failJob, handBackJob, heartbeat, recoverLapsedLeases, succeedJob } from "../../core/services/worker.js"

export interface WorkerLoopOptions {
  /** This process's name as a lease owner; unique among running workers. With `concurrency` > 1, loop i is `${owner}#i`. */
  readonly owner: string
  /** Jobs run at once. Default 1: one job already keeps every core busy. */
  readonly concurrency?: number
  /** Pause after finding the queue empty. Default 1 second. */
  readonly pollInterval?: Duration.DurationInput
}

export type JobOutcome = "succeeded" | "failed" | "lease_lost"

export const outputKey = (jobId: string) => `outputs/${jobId}.mp3`

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

/** Finishing refused means another worker or the lease recovery took the job meanwhile. */
const finishing = <R>(move: Effect.Effect<unknown, JobTransitionRefused, R>, outcome: JobOutcome) =>
  move.pipe(Effect.as(outcome), Effect.catchTag("JobTransitionRefused", () => Effect.succeed<JobOutcome>("lease_lost")))

/** Runs one claimed job to its end. */
export const processJob = (job: JobRecord, owner: string) =>
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
      outputKey: outputKey(job.id),
      bitrateKbps: model.value.output.bitrateKbps,
      durationSeconds: job.durationSeconds,
      onProgress: (fraction) => Ref.set(progress, fraction)
    }
    // Whichever ends first wins; the other is interrupted (a lost lease stops the model).
    const ended = yield* Effect.raceFirst(
      Effect.map(Effect.exit(provider.denoise(request)), (exit) => Option.some(exit)),
      Effect.as(holdLease(job, owner, progress), Option.none())
    )
    if (Option.isNone(ended)) {
      yield* Effect.logWarning("lease lost: the job was stopped and is not finished here")
      return "lease_lost" as const
    }
    const exit = ended.value
    if (Exit.isSuccess(exit)) {
      const output = { storageKey: request.outputKey, sizeBytes: exit.value.sizeBytes, bitrateKbps: request.bitrateKbps, format: "mp3" }
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

/** Runs `concurrency` loops of `workOnce` until interrupted; a failed pass is logged, then the loop goes on. */
export const runWorker = (options: WorkerLoopOptions) => {
  const pause = Duration.decode(options.pollInterval ?? Duration.seconds(1))
  // not a number (e.g. WORKER_CONCURRENCY=abc) is 1, not NaN loops: Math.max(1, NaN) is NaN, which made none
  const requested = Math.floor(options.concurrency ?? 1)
  const concurrency = Number.isFinite(requested) ? Math.max(1, requested) : 1
  // Each loop holds its leases under a name of its own: with one shared name, a loop whose
  // lease lapsed (heartbeats failing) could renew, fail or finish the job after another loop
  // of this process had claimed it again.
  const loop = (owner: string) => Effect.gen(function*() {
    for (;;) {
      const worked = yield* workOnce(owner).pipe(
        Effect.map(Option.isSome),
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("worker pass failed", cause), false))
      )
      if (!worked) yield* Effect.sleep(pause)
    }
  })
  const owners = concurrency === 1 ? [options.owner] : Array.from({ length: concurrency }, (_, i) => `${options.owner}#${i + 1}`)
  return Effect.all(owners.map(loop), { concurrency: "unbounded", discard: true }).pipe(
    Effect.andThen(Effect.never),
    Effect.annotateLogs({ worker: options.owner })
  )
}
