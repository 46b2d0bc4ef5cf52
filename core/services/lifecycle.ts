/**
 * The lifecycle sweeper (decisions.md, Files and Jobs): inputs are deleted 7 days after
 * ready, rejected files 24 hours after rejection, outputs 7 days after success; a lapsed
 * upload loses its multipart upload and stray bytes; a staging object whose file is no longer
 * `uploading` (bytes sent to an upload URL after complete or delete, which S3 cannot refuse)
 * is deleted; `Idempotency-Key` records past their 24 hours are deleted. Idempotent: a
 * second pass finds nothing.
 * Afterwards the API answers `404` for a purged file and `410 output_expired` for an output.
 */
import { Clock, Effect, Option, Stream } from "effect"
import { TestSample } from "../domain/deployment.js"
import { LimitsConfig } from "../domain/limits.js"
import { JobOutputRecord, JobRecord } from "../domain/records.js"
import { BlobStore } from "../ports/blob-store.js"
import { LifecycleRepo } from "../ports/lifecycle.js"
import { FileRepo, IdempotencyRepo, JobRepo } from "../ports/repositories.js"
import { fileIdOfStagingKey, STAGING_PREFIX, stagingKeyOf } from "../rules/storage.js"

const BATCH = 200

export const sweepLifecycle = Effect.gen(function*() {
  const limits = yield* LimitsConfig
  const repo = yield* LifecycleRepo
  const files = yield* FileRepo
  const jobs = yield* JobRepo
  const blobs = yield* BlobStore
  const sample = yield* TestSample
  const now = yield* Clock.currentTimeMillis
  let purgedFiles = 0
  let expiredOutputs = 0
  let sweptStaging = 0

  const dueFiles = yield* repo.sweepableFiles({
    // a lapsed upload keeps its record a while, so complete answers 409 upload_expired, not 404
    uploadClosedBefore: now - limits.rejectedRetentionMs,
    readyBefore: now - limits.readyRetentionMs,
    rejectedBefore: now - limits.rejectedRetentionMs,
    limit: BATCH
  })
  for (const file of dueFiles) {
    if ((yield* jobs.countActiveForFile(file.id)) > 0) continue
    if (file.multipart !== null) {
      yield* blobs.abortMultipart({ key: stagingKeyOf(file.id), uploadId: file.multipart.uploadId })
    }
    yield* blobs.delete(stagingKeyOf(file.id))
    yield* blobs.delete(file.storageKey)
    yield* files.delete(file.id)
    purgedFiles++
  }

  const dueOutputs = yield* repo.expiredOutputs({ finishedBefore: now - limits.outputRetentionMs, limit: BATCH })
  for (const job of dueOutputs) {
    if (job.output === null) continue
    // every test-mode job shares the shipped sample: it is never deleted
    if (!Object.values(sample).some((stored) => stored.storageKey === job.output!.storageKey)) yield* blobs.delete(job.output.storageKey)
    yield* jobs.update(JobRecord.copy(job, { output: new JobOutputRecord({ ...job.output, deletedAt: now }) }))
    expiredOutputs++
  }
  // staging objects are read only while their file is uploading: any other is never read again
  yield* Stream.runForEach(blobs.list(STAGING_PREFIX), (object) =>
    Effect.gen(function*() {
      const fileId = fileIdOfStagingKey(object.key)
      const file = fileId === undefined ? Option.none() : yield* files.get(fileId)
      if (Option.isSome(file) && file.value.status === "uploading") return
      yield* blobs.delete(object.key)
      sweptStaging++
    }))
  // a replay is owed for 24 hours only: past that the record is never read again
  const idempotency = yield* IdempotencyRepo
  let purgedIdempotencyKeys = 0
  for (let purged = BATCH; purged === BATCH;) {
    purged = yield* idempotency.purgeExpired(now, BATCH)
    purgedIdempotencyKeys += purged
  }
  if (purgedIdempotencyKeys > 0) yield* Effect.logDebug(`purged ${purgedIdempotencyKeys} expired Idempotency-Key records`)
  return { purgedFiles, expiredOutputs, sweptStaging }
})
