/** The spec's file operations: create, complete, validate, read, delete. */
import { Clock, Effect, Either, Option } from "effect"
import { LimitsConfig, VALIDATION_WINDOW_MS } from "../domain/limits.js"
import { FileRecord, MultipartState } from "../domain/records.js"
import { excerpt, IdempotencyKeyReused, InvalidRequest, NotFound, QuotaExceeded } from "../errors.js"
import { AudioProbe } from "../ports/audio.js"
import { BlobStore, type UploadTarget } from "../ports/blob-store.js"
import { IdGenerator } from "../ports/ids.js"
import { FileRepo, JobRepo, WalletRepo } from "../ports/repositories.js"
import * as Metrics from "../observability/metrics.js"
import { transactionally } from "../ports/transactor.js"
import { checkDeletable, checkNewFile, completeUpload, markReady, markRejected, planUpload, requireScope } from "../rules/index.js"
import { audioRejectionMessage, declaredDurationVerdict } from "../rules/files.js"
import { inputKeyOf, stagingKeyOf } from "../rules/storage.js"
import type { Actor } from "../domain/caller.js"
import { dieIfIdTaken, IdTaken, idOfIdempotencyKey } from "./request-ids.js"
import { emitFileEvent } from "./webhooks.js"

export interface NewFile {
  readonly filename: string
  readonly sizeBytes: number
  readonly contentType: string
}

export interface CompletedPart {
  readonly partNumber: number
  readonly etag: string
}

const notFound = (id: string) => new NotFound({ detail: `no file '${excerpt(id)}' exists on this account` })

/** The caller's file, or `404` for another account's or the other mode's (never a hint). */
export const ownedFile = (caller: Actor, id: string) =>
  Effect.flatMap(FileRepo, (files) => files.get(id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(notFound(id)),
      onSome: (file) =>
        file.accountId === caller.accountId && file.mode === caller.mode ? Effect.succeed(file) : Effect.fail(notFound(id))
    }))
  )

const quotaExceeded = (detail: string, retryAfterSeconds?: number) =>
  new QuotaExceeded(retryAfterSeconds === undefined ? { detail } : { detail, retryAfterSeconds })

const checkUploadQuotas = (caller: Actor, sizeBytes: number, now: number) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    const files = yield* FileRepo
    const open = yield* files.countOpenUploads(caller.accountId, caller.mode, now)
    if (open >= limits.openUploads) {
      return yield* quotaExceeded(`${open} uploads are already open (limit ${limits.openUploads}): complete or delete one first`)
    }
    const retained = yield* files.retainedBytes(caller.accountId, caller.mode)
    const cap = limits.retainedInputBytes[caller.mode]
    if (retained + sizeBytes > cap) {
      return yield* quotaExceeded(`retained input would reach ${retained + sizeBytes} bytes (limit ${cap}): delete files you no longer need`)
    }
  })

/**
 * `POST /v1/files`: checks, an upload target, and the `uploading` record. With an
 * `Idempotency-Key` the file's id derives from it (request-ids.ts), and a create that fails
 * looks for its earlier attempt: a retry whose first attempt committed but never got its answer
 * gets that file with a fresh upload target, instead of a second open upload that would count
 * against the caller's quotas for 6 hours.
 */
export const createFile = (caller: Actor, request: NewFile, idempotencyKey?: string) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, ["files:write"])
    const limits = yield* LimitsConfig
    yield* checkNewFile(request, caller.mode, limits)
    if (idempotencyKey === undefined) return yield* dieIfIdTaken(createFileUnder(caller, request, (yield* IdGenerator).next("file")))
    const id = yield* idOfIdempotencyKey("file", caller, idempotencyKey)
    return yield* Effect.catchAll(createFileUnder(caller, request, id), (error) =>
      Effect.gen(function*() {
        const earlier = yield* earlierFile(caller, request, id)
        if (earlier === "expired") return yield* dieIfIdTaken(createFileUnder(caller, request, (yield* IdGenerator).next("file")))
        if (earlier !== "none") return yield* renewUpload(earlier)
        if (error instanceof IdTaken) return yield* Effect.dieMessage(`file id ${id} is taken by no file of this caller`)
        return yield* Effect.fail(error as Exclude<typeof error, IdTaken>)
      }))
  }).pipe(Effect.withSpan("createFile", { attributes: { "hush.account_id": caller.accountId } }))

/** The create itself under `id`: quotas, the upload target, the record (IdTaken when the id is taken). */
const createFileUnder = (caller: Actor, request: NewFile, id: string) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    const now = yield* Clock.currentTimeMillis
    const storageKey = inputKeyOf(id)
    const uploadExpiresAt = now + limits.uploadWindowMs
    const plan = planUpload(request.sizeBytes, limits)
    const blobs = yield* BlobStore
    yield* checkUploadQuotas(caller, request.sizeBytes, now)
    // the client writes the staging object; only complete puts bytes under storageKey
    const target: UploadTarget = yield* blobs.createUpload({
      key: stagingKeyOf(id),
      contentType: request.contentType,
      sizeBytes: request.sizeBytes,
      expiresAt: uploadExpiresAt,
      partSize: plan._tag === "Multipart" ? plan.partSize : undefined
    }).pipe(Effect.orDie)
    const file = new FileRecord({
      id,
      accountId: caller.accountId,
      mode: caller.mode,
      filename: request.filename,
      contentType: request.contentType,
      sizeBytes: request.sizeBytes,
      status: "uploading",
      durationSeconds: null,
      error: null,
      storageKey,
      multipart: target._tag === "Multipart" && plan._tag === "Multipart"
        ? new MultipartState({ uploadId: target.uploadId, partSize: plan.partSize, partCount: plan.partCount })
        : null,
      createdAt: now,
      uploadExpiresAt,
      completedAt: null,
      readyAt: null,
      rejectedAt: null
    })
    // quotas are checked again with the insert, under the account's lock (the wallet row), so
    // concurrent creates of one account cannot overshoot together
    yield* transactionally(Effect.all([
      Effect.flatMap(WalletRepo, (wallets) => wallets.lock(caller.accountId)),
      checkUploadQuotas(caller, request.sizeBytes, now),
      Effect.flatMap(FileRepo, (files) => files.insertNew(file)).pipe(Effect.filterOrFail((inserted) => inserted, () => new IdTaken()))
    ], { discard: true })).pipe(Effect.tapError(() =>
      target._tag === "Multipart"
        ? blobs.abortMultipart({ key: stagingKeyOf(id), uploadId: target.uploadId }).pipe(Effect.ignore)
        : blobs.delete(stagingKeyOf(id)).pipe(Effect.ignore)
    ))
    return { file, upload: target, expiresAt: uploadExpiresAt }
  })

/**
 * The file an earlier attempt stored under `id`, still `uploading`; "expired" when it is older
 * than the key's 24 hours (the key used again: a new file under a random id); "none". Another
 * request's file under the key, or one no longer uploading, is the key used twice (409).
 */
const earlierFile = (caller: Actor, request: NewFile, id: string) =>
  Effect.gen(function*() {
    const stored = yield* Effect.flatMap(FileRepo, (files) => files.get(id))
    if (Option.isNone(stored) || stored.value.accountId !== caller.accountId || stored.value.mode !== caller.mode) return "none" as const
    const file = stored.value
    const limits = yield* LimitsConfig
    const now = yield* Clock.currentTimeMillis
    if (file.createdAt <= now - limits.idempotencyTtlMs) return "expired" as const
    if (file.filename !== request.filename || file.sizeBytes !== request.sizeBytes || file.contentType !== request.contentType) {
      return yield* new IdempotencyKeyReused({ detail: `Idempotency-Key was used for another request (file ${file.id} has another name, size or type)` })
    }
    if (file.status !== "uploading" || file.uploadExpiresAt <= now) {
      return yield* new IdempotencyKeyReused({ detail: `Idempotency-Key was used for file ${file.id}, which is no longer open for upload` })
    }
    return file
  })

/** A fresh upload target for an open file: a PUT signed again, or a multipart upload begun again (the old one aborted). */
const renewUpload = (file: FileRecord) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    const target: UploadTarget = yield* blobs.createUpload({
      key: stagingKeyOf(file.id),
      contentType: file.contentType,
      sizeBytes: file.sizeBytes,
      expiresAt: file.uploadExpiresAt,
      partSize: file.multipart?.partSize
    }).pipe(Effect.orDie)
    if (file.multipart === null || target._tag !== "Multipart") return { file, upload: target, expiresAt: file.uploadExpiresAt }
    const renewed = FileRecord.copy(file, { multipart: new MultipartState({ ...file.multipart, uploadId: target.uploadId }) })
    yield* Effect.flatMap(FileRepo, (files) => files.update(renewed))
    yield* blobs.abortMultipart({ key: stagingKeyOf(file.id), uploadId: file.multipart.uploadId }).pipe(Effect.ignore)
    return { file: renewed, upload: target, expiresAt: file.uploadExpiresAt }
  })

export const getFile = (caller: Actor, id: string) =>
  Effect.zipRight(requireScope(caller.scopes, ["files:write", "jobs:read"]), ownedFile(caller, id))

const sizeMismatch = (detail: string) => new InvalidRequest({ status: 422, field: "size_bytes", detail })

const checkValidationQuota = (caller: Actor, now: number) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    const recent = yield* Effect.flatMap(FileRepo, (files) => files.validationsSince(caller.accountId, caller.mode, now - VALIDATION_WINDOW_MS))
    if (recent.count >= limits.validationsPerHour) {
      const retryAfter = Math.max(1, Math.ceil(((recent.earliest ?? now) + VALIDATION_WINDOW_MS - now) / 1000))
      return yield* quotaExceeded(`${recent.count} validations in the last hour (limit ${limits.validationsPerHour})`, retryAfter)
    }
  })

/**
 * `POST /v1/files/{id}/complete`: the staged object must match `size_bytes`; it is then moved
 * to the file's input (where no upload URL reaches: docs/security.md), the file is `validating`
 * and the caller schedules `validateFile`. A file past `uploading` is returned as it is.
 */
export const completeFile = (caller: Actor, id: string, parts: ReadonlyArray<CompletedPart> | null) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, ["files:write"])
    const file = yield* ownedFile(caller, id)
    if (file.status !== "uploading") return file
    const now = yield* Clock.currentTimeMillis
    const validating = yield* completeUpload(file, now)
    yield* checkValidationQuota(caller, now)
    const blobs = yield* BlobStore
    const staging = stagingKeyOf(file.id)
    let staged = yield* blobs.stat(staging).pipe(Effect.orDie)
    if (Option.isNone(staged)) {
      // a complete that moved the bytes but stopped before recording it (the database went away,
      // the answer was lost) is finished now: a multipart upload is not assembled a second time
      const moved = yield* blobs.stat(file.storageKey).pipe(Effect.orDie)
      if (Option.isSome(moved) && moved.value.sizeBytes === file.sizeBytes) {
        yield* Effect.flatMap(FileRepo, (files) => files.update(validating))
        return validating
      }
    }
    if (file.multipart !== null && Option.isNone(staged)) {
      if (parts === null || parts.length === 0) {
        return yield* new InvalidRequest({
          status: 422, field: "parts", detail: `parts is required for a multipart upload: give the etag of each of its ${file.multipart.partCount} parts`
        })
      }
      const expected = file.multipart.partCount
      const numbers = [...parts].map((p) => p.partNumber).sort((a, b) => a - b)
      if (numbers.length !== expected || numbers.some((n, i) => n !== i + 1)) {
        return yield* new InvalidRequest({
          status: 422, field: "parts", detail: `parts must list part_number 1 to ${expected} once each`
        })
      }
      // storage that did not answer is a 503 (the edge's mapping of an unavailable BlobError); a
      // refusal is the parts' fault, unless the assembly did land and only its answer was lost
      // (the store's retry then finds the upload gone): the object is there, and is checked below
      const refused = yield* blobs.completeMultipart({ key: staging, uploadId: file.multipart.uploadId, parts }).pipe(
        Effect.as(undefined),
        Effect.catchAll((e) => (e.unavailable === true ? Effect.die(e) : Effect.succeed(e)))
      )
      staged = yield* blobs.stat(staging).pipe(Effect.orDie)
      if (refused !== undefined && Option.isNone(staged)) {
        return yield* new InvalidRequest({ status: 422, field: "parts", detail: `the parts could not be assembled: ${excerpt(refused.message)}` })
      }
    }
    if (Option.isNone(staged)) {
      return yield* sizeMismatch("uploaded size does not match size_bytes: no bytes were uploaded")
    } else {
      if (staged.value.sizeBytes !== file.sizeBytes) {
        return yield* sizeMismatch(`uploaded size does not match size_bytes: ${staged.value.sizeBytes} bytes stored, ${file.sizeBytes} declared`)
      }
      const moved = yield* blobs.move({ from: staging, to: file.storageKey }).pipe(Effect.orDie)
      // the upload URLs sign the exact size, so a concurrent PUT can only bring as many bytes
      if (moved.sizeBytes !== file.sizeBytes) {
        return yield* Effect.dieMessage(`file ${file.id}: ${moved.sizeBytes} bytes moved to its input, ${file.sizeBytes} declared`)
      }
    }
    yield* Effect.flatMap(FileRepo, (files) => files.update(validating))
    return validating
  }).pipe(Effect.withSpan("completeFile", { attributes: { "hush.account_id": caller.accountId, "hush.file_id": id } }))

/**
 * Decodes the whole upload; the file becomes `ready` or `rejected`. Runs off the request path.
 * A header declaring over the longest accepted audio is rejected without decoding, and a declared
 * length shortens the time limit (`declaredDurationVerdict`).
 */
export const validateFile = (id: string) =>
  Effect.gen(function*() {
    const files = yield* FileRepo
    const found = yield* files.get(id)
    if (Option.isNone(found) || found.value.status !== "validating") return found
    const file = found.value
    const blobs = yield* BlobStore
    const probe = yield* AudioProbe
    const limits = yield* LimitsConfig
    // a storage fault (BlobError) stays in the error channel and leaves the file validating for
    // a retry: it says nothing about the audio, so it must not reject the upload
    const started = yield* Clock.currentTimeNanos
    const measured = (outcome: "ready" | "rejected" | "error") =>
      Effect.flatMap(Clock.currentTimeNanos, (ended) =>
        Effect.zipRight(
          Metrics.count(Metrics.validations, { outcome }),
          Metrics.observe(Metrics.validationDuration, { outcome }, Number(ended - started) / 1e9)
        ))
    const outcome = yield* probe.probe(blobs.read(file.storageKey), {
      timeLimitMs: limits.validationTimeLimitMs[file.mode],
      onDeclaredDuration: declaredDurationVerdict(file, limits)
    }).pipe(
      Effect.map((result) => Either.right(result)),
      Effect.catchTag("AudioRejected", (rejected) =>
        Effect.as(
          Effect.logInfo(`file rejected (${rejected.reason}): ${rejected.message}`).pipe(Effect.annotateLogs({ fileId: file.id })),
          Either.left(rejected)
        )),
      // after the verdicts: only a storage fault is left here (a rejection is counted once, as rejected)
      Effect.tapError(() => measured("error"))
    )
    const now = yield* Clock.currentTimeMillis
    const next = Either.match(outcome, {
      onRight: (result) => markReady(file, result.durationSeconds, now),
      onLeft: (error) => markRejected(file, audioRejectionMessage(error.reason, limits), now)
    })
    // the file.ready / file.rejected event commits with the verdict (an outbox)
    yield* transactionally(Effect.zipRight(files.update(next), emitFileEvent(next)))
    yield* measured(next.status === "ready" ? "ready" : "rejected")
    return Option.some(next)
  }).pipe(Effect.withSpan("validateFile", { attributes: { "hush.file_id": id } }))

/** `DELETE /v1/files/{id}`: refused while a queued or processing job uses the file. */
export const deleteFile = (caller: Actor, id: string) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, ["files:write"])
    const file = yield* transactionally(Effect.gen(function*() {
      const file = yield* ownedFile(caller, id)
      const active = yield* Effect.flatMap(JobRepo, (jobs) => jobs.countActiveForFile(file.id))
      yield* checkDeletable(file, active)
      yield* Effect.flatMap(FileRepo, (files) => files.delete(file.id))
      return file
    }))
    const blobs = yield* BlobStore
    // the record is gone; a storage fault here leaves only a stray object for the sweeper. The
    // staging object goes too, which closes the upload URLs where the store can (local disk).
    if (file.multipart !== null && file.status === "uploading") {
      yield* blobs.abortMultipart({ key: stagingKeyOf(file.id), uploadId: file.multipart.uploadId }).pipe(Effect.ignore)
    }
    yield* blobs.delete(stagingKeyOf(file.id)).pipe(Effect.ignore)
    yield* blobs.delete(file.storageKey).pipe(Effect.ignore)
  })
