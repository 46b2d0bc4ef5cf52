/**
 * What a worker does to jobs: claim under a lease, renew it, finish with capture or fail
 * with release, and put lapsed leases back. Every move runs in one transaction with the
 * wallet change that belongs to it, so a job is charged exactly once, only on success.
 */
import { Clock, Effect, Either, Option } from "effect"
import type { AudioReportRecord } from "../domain/audio-report.js"
import { TestSample } from "../domain/deployment.js"
import type { JobErrorCode, Mode } from "../domain/enums.js"
import { LimitsConfig } from "../domain/limits.js"
import { JobOutputRecord, JobRecord } from "../domain/records.js"
import { JobRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { JobRules } from "../rules/index.js"
import * as Wallet from "../wallet/wallet.js"
import type { Actor } from "../domain/caller.js"
import {
  createDenoiseJob, createSpan, type DenoiseJobRequest, insertNewJob, prepareDenoiseJob, releaseHold, storeDenoiseJob, withEarlierAttempt
} from "./jobs.js"
import * as Metrics from "../observability/metrics.js"
import { walletStep } from "./wallet.js"
import { emitJobEvent } from "./webhooks.js"

const save = (job: JobRecord) => Effect.flatMap(JobRepo, (jobs) => jobs.update(job))

const lockJob = (id: string) =>
  Effect.flatMap(JobRepo, (jobs) => jobs.lockById(id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.dieMessage(`job ${id} does not exist`),
      onSome: Effect.succeed
    }))
  )

/** Claims the oldest queued job of the mode; None when there is none. */
export const claimNext = (owner: string, mode: Mode = "live") =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    return yield* transactionally(Effect.gen(function*() {
      const next = yield* Effect.flatMap(JobRepo, (jobs) => jobs.lockNextQueued(mode))
      if (Option.isNone(next)) return Option.none<JobRecord>()
      const now = yield* Clock.currentTimeMillis
      const claimed = yield* JobRules.claim(next.value, now, owner, limits.jobLeaseMs)
      yield* save(claimed)
      return Option.some(claimed)
    }))
  }).pipe(Effect.withSpan("claimNext", { attributes: { "hush.worker": owner } }))

/** Renews the lease (and records progress); fails with JobTransitionRefused once the lease is lost. */
export const heartbeat = (jobId: string, owner: string, progress?: number) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    return yield* transactionally(Effect.gen(function*() {
      const job = yield* lockJob(jobId)
      const now = yield* Clock.currentTimeMillis
      const renewed = yield* JobRules.heartbeat(job, owner, now, limits.jobLeaseMs, progress)
      yield* save(renewed)
      return renewed
    }))
  })

export interface StoredOutput {
  readonly storageKey: string
  readonly sizeBytes: number
  readonly bitrateKbps: number
  readonly format: string
  /** What the provider measured, if it did (decisions.md, Report: live jobs only). */
  readonly report?: AudioReportRecord | null | undefined
}

/** processing → succeeded and the capture of exactly the hold, in one transaction. */
export const succeedJob = (jobId: string, owner: string, output: StoredOutput) =>
  transactionally(Effect.flatMap(lockJob(jobId), (job) => succeedLocked(job, owner, output))).pipe(Effect.tap(countSucceeded))

/** The success of a job locked in the current transaction: capture, save, event. */
const succeedLocked = (job: JobRecord, owner: string, output: StoredOutput) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    // refuse before charging: only the lease holder may finish the job
    if (job.status !== "processing" || job.leaseOwner !== owner) {
      return yield* JobRules.succeed(job, owner, { output: outputRecord(job, output), chargedMicros: 0, ledgerTxnId: null, now })
    }
    const charge = job.mode === "test"
      ? { chargedMicros: 0, ledgerTxnId: null }
      : yield* walletStep(job.accountId, (w, at, mint) => Wallet.capture(w, job.id, at, mint)).pipe(
        Effect.map((step) => ({ chargedMicros: -step.entry.balanceDelta, ledgerTxnId: step.entry.id })),
        Effect.catchTag("HoldNotOpen", () => Effect.dieMessage(`job ${job.id} is processing without an open hold`))
      )
    const succeeded = yield* JobRules.succeed(job, owner, { output: outputRecord(job, output), ...charge, now })
    yield* save(succeeded)
    yield* emitJobEvent(succeeded)
    return succeeded
  })

const countSucceeded = (succeeded: JobRecord) =>
  Effect.zipRight(
    Metrics.count(Metrics.jobsFinished, { state: "succeeded", model: succeeded.model }),
    Metrics.count(Metrics.creditCapturedMicros, {}, succeeded.chargedMicros ?? 0)
  )

/** A test job's output is the sample clip: it has no report (decisions.md, Report). */
const outputRecord = (job: JobRecord, output: StoredOutput) =>
  new JobOutputRecord({ ...output, report: job.mode === "live" ? output.report ?? null : null, deletedAt: null })

/**
 * processing → failed and the release of the hold, in one transaction. No charge. The job shows
 * its code's fixed message; `detail` (what went wrong) is logged, never shown.
 */
export const failJob = (jobId: string, owner: string, error: { readonly code: JobErrorCode; readonly detail: string }) =>
  transactionally(Effect.gen(function*() {
    const job = yield* lockJob(jobId)
    const now = yield* Clock.currentTimeMillis
    const failed = yield* JobRules.fail(job, owner, error.code, now)
    yield* save(failed)
    yield* releaseHold(failed, `job ${job.id} failed: ${error.code}`)
    yield* emitJobEvent(failed)
    return failed
  })).pipe(
    Effect.tap((failed) => Metrics.count(Metrics.jobsFinished, { state: "failed", model: failed.model })),
    Effect.tap(() => Effect.logWarning(`job failed: ${error.code}: ${error.detail}`).pipe(Effect.annotateLogs({ jobId })))
  )

/** The lease holder puts the job back in the queue unfinished; its hold stays open for the next claim. */
export const handBackJob = (jobId: string, owner: string) =>
  transactionally(Effect.gen(function*() {
    const job = yield* lockJob(jobId)
    const queued = yield* JobRules.handBack(job, owner)
    yield* save(queued)
    return queued
  }))

/** Puts every lapsed lease back in the queue, or fails the job after its last attempt. */
export const recoverLapsedLeases = (limit = 100) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    const now = yield* Clock.currentTimeMillis
    const lapsed = yield* Effect.flatMap(JobRepo, (jobs) => jobs.lapsedLeases(now, limit))
    let recovered = 0
    for (const candidate of lapsed) {
      const moved = yield* transactionally(Effect.gen(function*() {
        const job = yield* lockJob(candidate.id)
        const next = JobRules.lapse(job, now, limits.maxJobAttempts)
        if (Either.isLeft(next)) return false // renewed or finished meanwhile
        yield* save(next.right)
        if (next.right.status === "failed") {
          yield* Metrics.count(Metrics.jobsFinished, { state: "failed", model: job.model })
          yield* releaseHold(next.right, `job ${job.id} failed: worker lost`)
          yield* emitJobEvent(next.right)
          yield* Effect.logWarning(`job failed: internal_error: its worker stopped responding ${job.attempts} times`).pipe(
            Effect.annotateLogs({ jobId: job.id })
          )
        }
        return true
      }))
      if (moved) recovered++
    }
    return recovered
  })

/** A queued test job claimed by its test-mode owner, with the sample in the format it asked for. */
const claimAsTest = (job: JobRecord) =>
  Effect.gen(function*() {
    const sample = yield* TestSample
    const limits = yield* LimitsConfig
    const owner = `test-mode:${job.id}`
    const now = yield* Clock.currentTimeMillis
    const processing = yield* JobRules.claim(job, now, owner, limits.jobLeaseMs)
    return { processing, owner, output: sample[job.options.format], now }
  })

/**
 * Test mode: every job returns the shipped sample at once, in the format it asked for, free of
 * charge. Claim and success are one transaction (nothing runs between them), so the job is
 * never seen processing.
 */
export const finishTestJob = (jobId: string) =>
  Effect.gen(function*() {
    const finished = yield* transactionally(Effect.gen(function*() {
      const job = yield* lockJob(jobId)
      if (job.mode !== "test" || job.status !== "queued") return Option.none<JobRecord>()
      const { output, owner, processing } = yield* claimAsTest(job)
      return Option.some(yield* succeedLocked(processing, owner, output))
    }))
    if (Option.isSome(finished)) yield* countSucceeded(finished.value)
    return finished
  })

/**
 * Finishes up to `limit` queued test jobs, oldest first: the API stores a test job queued when
 * an endpoint subscribes to its event and finishes it right after, off the request path; should
 * that never happen (its process stopped, the database went away meanwhile), a worker does it
 * here, so that every acknowledged job ends. Racing the API's own finishing is harmless: each
 * job is locked (SKIP LOCKED) and finished only while queued. How many it finished.
 */
export const finishQueuedTestJobs = (limit = 20) =>
  Effect.gen(function*() {
    let finished = 0
    for (; finished < limit; finished++) {
      const done = yield* transactionally(Effect.gen(function*() {
        const next = yield* Effect.flatMap(JobRepo, (jobs) => jobs.lockNextQueued("test"))
        if (Option.isNone(next)) return Option.none<JobRecord>()
        const { output, owner, processing } = yield* claimAsTest(next.value)
        return Option.some(yield* succeedLocked(processing, owner, output))
      }))
      if (Option.isNone(done)) break
      yield* countSucceeded(done.value)
    }
    return finished
  })

/**
 * `POST /v1/audio/denoise` as the API serves it. A test job runs no model, so it is stored
 * already succeeded with the sample, in one INSERT, while no webhook endpoint subscribes to
 * `job.succeeded` (there is no event to write with it). When one does, the job is stored
 * queued and `finishLater` is true: the caller finishes it with its event (finishTestJob) off
 * the request path. The job returned is the job as created, which the answer shows.
 */
export const submitDenoiseJob = (caller: Actor, request: DenoiseJobRequest, idempotencyKey?: string) =>
  caller.mode === "test"
    ? submitTestJob(caller, request, idempotencyKey)
    : Effect.map(createDenoiseJob(caller, request, idempotencyKey), (job) => ({ job, finishLater: false }))

const submitTestJob = (caller: Actor, request: DenoiseJobRequest, idempotencyKey: string | undefined) =>
  withEarlierAttempt(caller, request, idempotencyKey, (id) =>
    Effect.gen(function*() {
      const job = yield* prepareDenoiseJob(caller, request, id)
      // a job just prepared is queued, and its claimer holds the lease: the rules cannot refuse
      const succeeded = yield* Effect.orDie(Effect.flatMap(claimAsTest(job), ({ now, output, owner, processing }) =>
        JobRules.succeed(processing, owner, { output: outputRecord(job, output), chargedMicros: 0, ledgerTxnId: null, now })))
      const jobs = yield* JobRepo
      // not stored finished: subscribed (stored queued, finished later) or the id taken (IdTaken)
      const storedFinished = yield* storeDenoiseJob(job, Effect.flatMap(
        jobs.insertUnlessSubscribed(succeeded, "job.succeeded"),
        (stored) => (stored ? Effect.succeed(true) : Effect.as(insertNewJob(job), false))
      ))
      if (storedFinished) yield* countSucceeded(succeeded)
      return { job, finishLater: !storedFinished }
    }),
    // found: created by an attempt whose answer was lost; finished already, or to be finished now
    (job) => ({ job, finishLater: job.status === "queued" })).pipe(createSpan(caller, request))
