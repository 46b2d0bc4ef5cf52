/**
 * Job state machine (spec + decisions.md, Jobs):
 *   queued → processing (claim, under a lease) → succeeded | failed
 *   queued → canceled (cancel)
 *   processing → queued when the lease lapses, until `maxJobAttempts` claims; then failed.
 *   processing → queued when the lease holder hands it back (shutdown); the claim is not counted.
 * Pure functions; a wrong move is a `JobTransitionRefused`, which callers treat as a lost race.
 */
import { Data, Either } from "effect"
import { JobErrorRecord, JobOutputRecord, JobRecord } from "../domain/records.js"
import type { JobErrorCode, JobStatus } from "../domain/enums.js"
import { JobNotCancelable } from "../errors.js"

export class JobTransitionRefused extends Data.TaggedError("JobTransitionRefused")<{
  readonly jobId: string
  readonly from: JobStatus
  readonly move: string
}> {}

const refuse = (job: JobRecord, move: string) =>
  Either.left(new JobTransitionRefused({ jobId: job.id, from: job.status, move }))

export const isTerminal = (status: JobStatus): boolean =>
  status === "succeeded" || status === "failed" || status === "canceled"

export const isActive = (status: JobStatus): boolean => status === "queued" || status === "processing"

export const cancel = (job: JobRecord, now: number): Either.Either<JobRecord, JobNotCancelable> =>
  job.status === "queued"
    ? Either.right(JobRecord.copy(job, { status: "canceled", finishedAt: now, leaseOwner: null, leaseExpiresAt: null }))
    : Either.left(new JobNotCancelable({
      detail: job.status === "processing"
        ? `job ${job.id} has already started processing and can no longer be canceled`
        : `job ${job.id} is already ${job.status}`
    }))

export const claim = (
  job: JobRecord, now: number, owner: string, leaseMs: number
): Either.Either<JobRecord, JobTransitionRefused> =>
  job.status === "queued"
    ? Either.right(JobRecord.copy(job, {
      status: "processing",
      progress: 0,
      attempts: job.attempts + 1,
      startedAt: job.startedAt ?? now,
      leaseOwner: owner,
      leaseExpiresAt: now + leaseMs
    }))
    : refuse(job, "claim")

const holdsLease = (job: JobRecord, owner: string) => job.status === "processing" && job.leaseOwner === owner

export const heartbeat = (
  job: JobRecord, owner: string, now: number, leaseMs: number, progress?: number
): Either.Either<JobRecord, JobTransitionRefused> =>
  holdsLease(job, owner)
    ? Either.right(JobRecord.copy(job, {
      leaseExpiresAt: now + leaseMs,
      // progress only rises, and reaches 1 only on success
      progress: progress === undefined ? job.progress : Math.max(job.progress, Math.min(progress, 0.99))
    }))
    : refuse(job, "heartbeat")

export const succeed = (
  job: JobRecord,
  owner: string,
  result: { readonly output: JobOutputRecord; readonly chargedMicros: number; readonly ledgerTxnId: string | null; readonly now: number }
): Either.Either<JobRecord, JobTransitionRefused> =>
  holdsLease(job, owner)
    ? Either.right(JobRecord.copy(job, {
      status: "succeeded",
      progress: 1,
      output: result.output,
      chargedMicros: result.chargedMicros,
      ledgerTxnId: result.ledgerTxnId,
      finishedAt: result.now,
      leaseOwner: null,
      leaseExpiresAt: null
    }))
    : refuse(job, "succeed")

/**
 * What a failed job says publicly: one fixed message per code. What went wrong in detail
 * (ffmpeg's stderr, a GPU host's answer) goes to the logs only (docs/security.md).
 */
export const JOB_ERROR_MESSAGES: Readonly<Record<JobErrorCode, string>> = {
  provider_error: "the model could not process this audio; no credit was charged",
  internal_error: "the service failed while processing the job; no credit was charged"
}

/** Failure by the worker that holds the lease. */
export const fail = (job: JobRecord, owner: string, code: JobErrorCode, now: number): Either.Either<JobRecord, JobTransitionRefused> =>
  holdsLease(job, owner) ? Either.right(failed(job, code, now)) : refuse(job, "fail")

const failed = (job: JobRecord, code: JobErrorCode, now: number) =>
  JobRecord.copy(job, {
    status: "failed",
    error: new JobErrorRecord({ code, message: JOB_ERROR_MESSAGES[code] }),
    chargedMicros: null,
    finishedAt: now,
    leaseOwner: null,
    leaseExpiresAt: null
  })

/** A lease that ended unrenewed: back to the queue, or failed once attempts are spent. */
export const lapse = (job: JobRecord, now: number, maxAttempts: number): Either.Either<JobRecord, JobTransitionRefused> => {
  if (job.status !== "processing" || job.leaseExpiresAt === null || job.leaseExpiresAt >= now) return refuse(job, "lapse")
  return Either.right(
    job.attempts >= maxAttempts
      ? failed(job, "internal_error", now)
      : JobRecord.copy(job, { status: "queued", progress: 0, leaseOwner: null, leaseExpiresAt: null })
  )
}

/** The lease holder gives the job back unfinished (it is shutting down): queued again, that claim not counted. */
export const handBack = (job: JobRecord, owner: string): Either.Either<JobRecord, JobTransitionRefused> =>
  holdsLease(job, owner)
    ? Either.right(JobRecord.copy(job, {
      status: "queued", progress: 0, attempts: job.attempts - 1, leaseOwner: null, leaseExpiresAt: null
    }))
    : refuse(job, "hand back")
