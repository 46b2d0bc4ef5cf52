/** The spec's job operations on behalf of an API caller: create, read, list, cancel, output. */
import { Clock, Effect, Either, Equal, Option } from "effect"
import { findModel, isUsable, ModelCatalog } from "../domain/catalog.js"
import { DEFAULT_OUTPUT_FORMAT, JobOptionsRecord, OUTPUT_FORMATS, type OutputFormat } from "../domain/denoise-options.js"
import type { JobStatus } from "../domain/enums.js"
import { LimitsConfig } from "../domain/limits.js"
import { JobPricing, JobRecord } from "../domain/records.js"
import { DeploymentSecrets } from "../domain/deployment.js"
import { AudioTooLong, excerpt, FileTooLarge, IdempotencyKeyReused, JobNotSucceeded, ModelNotAvailable, NotFound, OutputExpired } from "../errors.js"
import { BlobStore } from "../ports/blob-store.js"
import { IdGenerator } from "../ports/ids.js"
import { FileRepo, JobRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { checkCanCreateJob, JobRules, maxFileBytes, priceAudio, requireReady, requireScope } from "../rules/index.js"
import * as Wallet from "../wallet/wallet.js"
import type { Actor } from "../domain/caller.js"
import { decodeCursor, encodeCursor } from "./cursor.js"
import { downloadStem, outputFilename } from "../rules/storage.js"
import { ownedFile } from "./files.js"
import { notifyJobQueued } from "./job-queued.js"
import * as Metrics from "../observability/metrics.js"
import { dieIfIdTaken, IdTaken, idOfIdempotencyKey } from "./request-ids.js"
import { walletStep } from "./wallet.js"
import { emitJobEvent } from "./webhooks.js"

const notFound = (id: string) => new NotFound({ detail: `no job '${excerpt(id)}' exists on this account` })

/** Whose jobs: an API key's account and mode, or the dashboard's account and chosen mode. */
export type JobOwner = Pick<Actor, "accountId" | "mode">

const isOwned = (caller: JobOwner, job: JobRecord) => job.accountId === caller.accountId && job.mode === caller.mode

export const ownedJob = (caller: JobOwner, id: string, lock = false) =>
  Effect.flatMap(JobRepo, (jobs) => (lock ? jobs.lockById(id) : jobs.get(id))).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(notFound(id)),
      onSome: (job) => (isOwned(caller, job) ? Effect.succeed(job) : Effect.fail(notFound(id)))
    }))
  )

const modelNotAvailable = (id: string, why: string) =>
  new ModelNotAvailable({ detail: `model '${excerpt(id)}' ${why}; see GET /v1/models` })

/**
 * `POST /v1/audio/denoise`, with the checks of the spec's Endpoint rule 2 in its order:
 * file ready, model usable, audio length, file size, available credit. The hold and the job
 * are written in one transaction.
 */
export interface DenoiseJobRequest {
  readonly file: string
  readonly model?: string | null | undefined
  /** Already validated by the wire schema (core/schema/job.ts): 0–1. */
  readonly strength?: number | null | undefined
  readonly output?: {
    readonly format?: OutputFormat | null | undefined
    /** Already validated by the wire schema: −31…−9 LUFS. */
    readonly loudness?: number | null | undefined
  } | null | undefined
}

/** The options a job records: absent and null mean the defaults. */
export const jobOptions = (request: DenoiseJobRequest) =>
  new JobOptionsRecord({
    strength: request.strength ?? null,
    format: request.output?.format ?? DEFAULT_OUTPUT_FORMAT,
    loudness: request.output?.loudness ?? null
  })

export const createDenoiseJob = (caller: Actor, request: DenoiseJobRequest, idempotencyKey?: string) =>
  withEarlierAttempt(caller, request, idempotencyKey, (id) =>
    Effect.gen(function*() {
      const job = yield* prepareDenoiseJob(caller, request, id)
      yield* storeDenoiseJob(job, insertNewJob(job))
      return job
    }), (job) => job).pipe(createSpan(caller, request))

/** `insertNew` as a create's store step: IdTaken (rolling its transaction back) when the id is taken. */
export const insertNewJob = (job: JobRecord) =>
  Effect.flatMap(JobRepo, (jobs) => jobs.insertNew(job)).pipe(Effect.filterOrFail((inserted) => inserted, () => new IdTaken()))

/**
 * Runs a create under the id its `Idempotency-Key` derives (a random one without a key), and
 * only when it fails looks for an earlier attempt: the job a retry's first attempt stored is
 * answered as `found` makes it, whatever the create failed with (its id taken, or a check that
 * the earlier job itself now fails, e.g. its hold spent the credit); a job under that id for
 * another file, model or options means the key was used for another request (409); one older
 * than the key's 24 hours is a key used again after expiry, which creates under a random id.
 * The usual create reads nothing first: the insert finds the earlier attempt by its id.
 */
export const withEarlierAttempt = <A, E, R>(
  caller: Actor,
  request: DenoiseJobRequest,
  idempotencyKey: string | undefined,
  create: (id: string | undefined) => Effect.Effect<A, E, R>,
  found: (job: JobRecord) => A
): Effect.Effect<A, Exclude<E, IdTaken> | IdempotencyKeyReused, R | JobRepo | LimitsConfig | ModelCatalog | DeploymentSecrets> =>
  Effect.gen(function*() {
    // a random id is never taken
    if (idempotencyKey === undefined) return yield* dieIfIdTaken(create(undefined))
    const id = yield* idOfIdempotencyKey("job", caller, idempotencyKey)
    return yield* Effect.catchAll(create(id), (error) =>
      Effect.gen(function*() {
        const earlier = yield* earlierAttempt(caller, request, id)
        if (earlier === "expired") return yield* dieIfIdTaken(create(undefined))
        if (earlier !== "none") return found(earlier)
        // the id taken by no job of this caller: the key's derivation is broken
        if (error instanceof IdTaken) return yield* Effect.dieMessage(`job id ${id} is taken by no job of this caller`)
        return yield* Effect.fail(error as Exclude<E, IdTaken>)
      }))
  })

/** The job an earlier attempt stored under `id` (see withEarlierAttempt), "expired", or "none". */
const earlierAttempt = (caller: Actor, request: DenoiseJobRequest, id: string) =>
  Effect.gen(function*() {
    const stored = yield* Effect.flatMap(JobRepo, (jobs) => jobs.get(id))
    if (Option.isNone(stored) || !isOwned(caller, stored.value)) return "none" as const
    const job = stored.value
    const limits = yield* LimitsConfig
    const now = yield* Clock.currentTimeMillis
    if (job.createdAt <= now - limits.idempotencyTtlMs) return "expired" as const
    const model = request.model ?? (yield* ModelCatalog).defaultModel.denoise
    if (job.fileId !== request.file || job.model !== model || !Equal.equals(job.options, jobOptions(request))) {
      return yield* new IdempotencyKeyReused({
        detail: `Idempotency-Key was used for another request (job ${job.id} has another file, model or options)`
      })
    }
    return job
  })

/**
 * The span of a create, whichever way it stores the job. Without a captured stack trace: its
 * name says where it is, and the `Error` made per create for one was ~1 % of a create's CPU.
 */
export const createSpan = (caller: Actor, request: DenoiseJobRequest) =>
  Effect.withSpan("createDenoiseJob", {
    attributes: { "hush.account_id": caller.accountId, "hush.file_id": request.file },
    captureStackTrace: false
  })

/** The checks of createDenoiseJob and the job they allow, priced; nothing written. */
export const prepareDenoiseJob = (caller: Actor, request: DenoiseJobRequest, id?: string) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, ["jobs:write"])
    yield* checkCanCreateJob(caller.account)
    const file = yield* ownedFile(caller, request.file)
    yield* requireReady(file)
    const catalog = yield* ModelCatalog
    const modelId = request.model ?? catalog.defaultModel.denoise
    const model = yield* Option.match(findModel(catalog, modelId), {
      onNone: () => Either.left(modelNotAvailable(modelId, "does not exist")),
      onSome: (m) => (isUsable(m) ? Either.right(m) : Either.left(modelNotAvailable(modelId, `is ${m.status === "live" ? "not priced" : m.status}`)))
    })
    const limits = yield* LimitsConfig
    const duration = file.durationSeconds ?? 0
    const maxSeconds = Math.min(limits.maxAudioSeconds, model.limits.maxSeconds ?? Infinity)
    if (duration > maxSeconds) {
      return yield* new AudioTooLong({ detail: `the audio lasts ${duration} s; model '${model.id}' accepts at most ${maxSeconds} s` })
    }
    const maxBytes = Math.min(maxFileBytes(caller.mode, limits), model.limits.maxBytes ?? Infinity)
    if (file.sizeBytes > maxBytes) {
      return yield* new FileTooLarge({ detail: `the file has ${file.sizeBytes} bytes; model '${model.id}' accepts at most ${maxBytes} bytes` })
    }
    const price = priceAudio(model, duration)
    const now = yield* Clock.currentTimeMillis
    return new JobRecord({
      id: id ?? (yield* IdGenerator).next("job"),
      accountId: caller.accountId,
      mode: caller.mode,
      keyId: caller.keyId,
      task: model.task,
      model: model.id,
      status: "queued",
      progress: 0,
      fileId: file.id,
      inputFilename: file.filename,
      inputStorageKey: file.storageKey,
      durationSeconds: duration,
      options: jobOptions(request),
      pricing: new JobPricing({
        billableSeconds: price.billableSeconds,
        minimumApplied: price.minimumApplied,
        unitPriceMicros: price.unitPriceMicros,
        pricingVersion: price.pricingVersion,
        estimatedMicros: price.costMicros
      }),
      chargedMicros: null,
      ledgerTxnId: null,
      output: null,
      error: null,
      attempts: 0,
      leaseOwner: null,
      leaseExpiresAt: null,
      createdAt: now,
      startedAt: null,
      finishedAt: null
    })
  })

/**
 * Stores a prepared job: in live mode with the hold of its price, in one transaction. Test mode
 * never holds, never charges, never answers 402: one statement (`insert`), atomic alone. The
 * answer is `insert`'s.
 */
export const storeDenoiseJob = <A, E, R>(job: JobRecord, insert: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const cost = job.pricing.estimatedMicros
    const holds = job.mode === "live" && cost > 0
    // the insert first: a create whose id an earlier attempt took stops before touching the wallet
    const inserted = yield* holds
      ? transactionally(Effect.zipLeft(
        insert,
        walletStep(job.accountId, (w, at, mint) => Wallet.hold(w, { jobId: job.id, amountMicros: cost }, at, mint))
      ))
      : insert
    // committed: this process's worker may claim it now (it runs live jobs only; a test job is finished apart)
    if (job.mode === "live") yield* notifyJobQueued
    yield* Metrics.count(Metrics.jobsCreated, { model: job.model, mode: job.mode })
    if (holds) yield* Metrics.count(Metrics.creditHeldMicros, {}, cost)
    return inserted
  })

export const getJob = (caller: Actor, id: string) =>
  Effect.zipRight(requireScope(caller.scopes, ["jobs:read"]), ownedJob(caller, id))

/** Releases a job's hold (live mode) inside the current transaction. */
export const releaseHold = (job: JobRecord, reason: string) =>
  job.mode === "test"
    ? Effect.void
    : walletStep(job.accountId, (w, now, mint) => Wallet.release(w, job.id, now, mint, reason)).pipe(
      // the hold was the job's estimate (createDenoiseJob)
      Effect.tap(() => Metrics.count(Metrics.creditReleasedMicros, {}, job.pricing.estimatedMicros)),
      // a hold already resolved is a lost race, never a second release
      Effect.catchTag("HoldNotOpen", () => Effect.void),
      Effect.asVoid
    )

/** `POST /v1/jobs/{id}/cancel`: only while queued; the hold is released with it. */
export const cancelJob = (caller: Actor, id: string) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, ["jobs:write"])
    return yield* transactionally(Effect.gen(function*() {
      const job = yield* ownedJob(caller, id, true)
      const now = yield* Clock.currentTimeMillis
      const canceled = yield* JobRules.cancel(job, now)
      yield* Effect.flatMap(JobRepo, (jobs) => jobs.update(canceled))
      yield* releaseHold(canceled, `job ${job.id} canceled`)
      yield* emitJobEvent(canceled)
      return canceled
    })).pipe(Effect.tap((canceled) => Metrics.count(Metrics.jobsFinished, { state: "canceled", model: canceled.model })))
  }).pipe(Effect.withSpan("cancelJob", { attributes: { "hush.account_id": caller.accountId, "hush.job_id": id } }))

export interface JobListRequest {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
  readonly status?: JobStatus | undefined
  readonly model?: string | undefined
}

const DEFAULT_PAGE = 20

/** `GET /v1/jobs`: newest first, keyset pages (stable while new jobs arrive). */
export const listJobs = (caller: Actor, request: JobListRequest) =>
  Effect.zipRight(requireScope(caller.scopes, ["jobs:read"]), jobsPage(caller, request))

/** A page of the owner's jobs, newest first (the API's and the dashboard's listing). */
export const jobsPage = (caller: JobOwner, request: JobListRequest) =>
  Effect.gen(function*() {
    const scope = `jobs:${caller.accountId}:${caller.mode}:${request.status ?? ""}:${request.model ?? ""}`
    const after = request.cursor === undefined ? undefined : yield* decodeCursor(scope, request.cursor)
    const limit = request.limit ?? DEFAULT_PAGE
    const rows = yield* Effect.flatMap(JobRepo, (jobs) =>
      jobs.list({ accountId: caller.accountId, mode: caller.mode, status: request.status, model: request.model, limit: limit + 1, after }))
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    const nextCursor = rows.length > limit && last !== undefined
      ? yield* encodeCursor(scope, { createdAt: last.createdAt, id: last.id })
      : null
    return { data: page, nextCursor }
  })

/** `GET /v1/jobs/{id}/output`: a fresh signed link valid for one hour. */
export const getOutputLink = (caller: Actor, id: string) =>
  Effect.zipRight(requireScope(caller.scopes, ["jobs:read"]), outputLinkOf(caller, id))

/**
 * A fresh signed link (as long as an output's) to the input of the owner's job, while the
 * service keeps it: until its file is deleted, at the latest 7 days after it was ready. The
 * dashboard plays it beside the output. Named as uploaded (made safe: downloadStem).
 */
export const inputLinkOf = (owner: JobOwner, id: string) =>
  Effect.gen(function*() {
    const job = yield* ownedJob(owner, id)
    const limits = yield* LimitsConfig
    const now = yield* Clock.currentTimeMillis
    const found = yield* Effect.flatMap(FileRepo, (files) => files.get(job.fileId))
    const file = Option.getOrUndefined(found)
    if (file === undefined || file.status !== "ready" || file.readyAt === null || now >= file.readyAt + limits.readyRetentionMs) {
      return yield* new NotFound({
        detail: `the input of job ${job.id} is no longer kept: an input is deleted with its file, at the latest 7 days after upload`
      })
    }
    const expiresAt = now + limits.outputLinkTtlMs
    const extension = /\.[A-Za-z0-9]{1,10}$/.exec(file.filename)?.[0] ?? ""
    const filename = `${downloadStem(file.filename)}${extension}`
    const url = yield* Effect.flatMap(BlobStore, (blobs) =>
      blobs.signDownload({ key: file.storageKey, filename, contentType: file.contentType, expiresAt })).pipe(Effect.orDie)
    return { url, expiresAt, filename }
  })

/** A fresh signed link to the output of the owner's job (the API's and the dashboard's download). */
export const outputLinkOf = (owner: JobOwner, id: string) =>
  Effect.gen(function*() {
    const job = yield* ownedJob(owner, id)
    if (job.status !== "succeeded" || job.output === null) {
      return yield* new JobNotSucceeded({ detail: `job ${job.id} is ${job.status}; its output exists only once it has succeeded` })
    }
    const limits = yield* LimitsConfig
    const now = yield* Clock.currentTimeMillis
    const keptUntil = (job.finishedAt ?? now) + limits.outputRetentionMs
    if (job.output.deletedAt !== null || now >= keptUntil) {
      return yield* new OutputExpired({ detail: `the output of job ${job.id} was kept 7 days after success and has been deleted` })
    }
    const expiresAt = now + limits.outputLinkTtlMs
    const format = job.options.format
    const filename = outputFilename(job.inputFilename, format)
    const contentType = OUTPUT_FORMATS[format].contentType
    const url = yield* Effect.flatMap(BlobStore, (blobs) =>
      blobs.signDownload({ key: job.output!.storageKey, filename, contentType, expiresAt })).pipe(Effect.orDie)
    return { url, expiresAt, filename }
  })
