/**
 * The lifecycle sweeper on the memory adapters, driven by TestClock: what it deletes, when,
 * what the API answers afterwards, and that a second pass finds nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { MemoryBlobBackdoor, layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import { DEFAULT_LIMITS } from "../../../core/domain/limits.js"
import { BlobStore } from "../../../core/ports/blob-store.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import type { Caller } from "../../../core/domain/caller.js"
import { authenticate } from "../../../core/services/caller.js"
import { completeFile, createFile, deleteFile, getFile, validateFile } from "../../../core/services/files.js"
import { createDenoiseJob, getOutputLink } from "../../../core/services/jobs.js"
import { sweepLifecycle } from "../../../core/services/lifecycle.js"
import { claimNext, finishTestJob, succeedJob } from "../../../core/services/worker.js"
import { HOUR } from "../../../core/time.js"
import { stagingKeyOf } from "../../../core/rules/storage.js"
import { coreEnvironment, TEST_SAMPLE } from "../../support/env.js"
import { riff, RiffProbe } from "../../support/riff-probe.js"

const environment = () => Layer.mergeAll(coreEnvironment(), layerMemoryBlobStore, RiffProbe)
const run = <A, E>(body: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof environment>>>) =>
  Effect.provide(body, environment())

const callers = Effect.gen(function*() {
  const created = yield* createAccountWithKeys({ email: "sweep@example.com", creditMicros: 10_000_000 })
  return { live: yield* authenticate(`Bearer ${created.liveKey}`), test: yield* authenticate(`Bearer ${created.testKey}`) }
})

const upload = (caller: Caller, bytes: Uint8Array) =>
  Effect.gen(function*() {
    const created = yield* createFile(caller, { filename: "talk.wav", sizeBytes: bytes.byteLength, contentType: "audio/wav" })
    yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putUpload(created.upload, bytes))
    return created.file
  })

const readyFile = (caller: Caller, bytes = riff(12)) =>
  Effect.gen(function*() {
    const file = yield* upload(caller, bytes)
    yield* completeFile(caller, file.id, null)
    return Option.getOrThrow(yield* validateFile(file.id))
  })

const stored = (key: string) => Effect.flatMap(BlobStore, (blobs) => blobs.stat(key)).pipe(Effect.map(Option.isSome))

describe("lifecycle sweeper", () => {
  it.effect("deletes an input 7 days after ready, then the file is 404", () =>
    run(Effect.gen(function*() {
      const { live } = yield* callers
      const file = yield* readyFile(live)
      yield* TestClock.adjust(DEFAULT_LIMITS.readyRetentionMs - 1)
      expect(yield* sweepLifecycle).toEqual({ purgedFiles: 0, expiredOutputs: 0, sweptStaging: 0 })
      expect(yield* stored(file.storageKey)).toBe(true)
      yield* TestClock.adjust(2)
      expect(yield* sweepLifecycle).toEqual({ purgedFiles: 1, expiredOutputs: 0, sweptStaging: 0 })
      expect(yield* stored(file.storageKey)).toBe(false)
      expect((yield* Effect.flip(getFile(live, file.id)))._tag).toBe("NotFound")
      expect(yield* sweepLifecycle).toEqual({ purgedFiles: 0, expiredOutputs: 0, sweptStaging: 0 })
    })))

  it.effect("deletes a rejected file 24 hours after rejection", () =>
    run(Effect.gen(function*() {
      const { test } = yield* callers
      const rejected = yield* readyFile(test, new TextEncoder().encode("not audio at all"))
      expect(rejected.status).toBe("rejected")
      yield* TestClock.adjust(DEFAULT_LIMITS.rejectedRetentionMs + 1)
      expect((yield* sweepLifecycle).purgedFiles).toBe(1)
      expect(yield* stored(rejected.storageKey)).toBe(false)
    })))

  it.effect("a lapsed upload keeps answering upload_expired for a day, then loses its multipart upload and record", () =>
    run(Effect.gen(function*() {
      const { live } = yield* callers
      const size = DEFAULT_LIMITS.putMaxBytes + 1
      const created = yield* createFile(live, { filename: "big.wav", sizeBytes: size, contentType: "audio/wav" })
      const uploadId = created.file.multipart!.uploadId
      const door = yield* MemoryBlobBackdoor
      // the last part: exactly its share of the size
      yield* door.putPart(uploadId, 2, new Uint8Array(size - DEFAULT_LIMITS.multipartPartBytes))
      yield* TestClock.adjust(DEFAULT_LIMITS.uploadWindowMs + HOUR)
      expect(yield* sweepLifecycle).toEqual({ purgedFiles: 0, expiredOutputs: 0, sweptStaging: 0 })
      expect((yield* Effect.flip(completeFile(live, created.file.id, null)))._tag).toBe("UploadExpired")
      yield* TestClock.adjust(DEFAULT_LIMITS.rejectedRetentionMs)
      expect((yield* sweepLifecycle).purgedFiles).toBe(1)
      // the multipart upload is gone: a part sent now is refused
      expect(Option.isNone(yield* Effect.option(door.putPart(uploadId, 2, new Uint8Array(size - DEFAULT_LIMITS.multipartPartBytes))))).toBe(true)
      expect((yield* Effect.flip(getFile(live, created.file.id)))._tag).toBe("NotFound")
    })))

  it.effect("expires outputs 7 days after success: 410 output_expired, live bytes deleted, the shared sample kept", () =>
    run(Effect.gen(function*() {
      const { live, test } = yield* callers
      yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putObject(TEST_SAMPLE.mp3.storageKey, riff(1)))
      const testFile = yield* readyFile(test)
      const testJob = yield* createDenoiseJob(test, { file: testFile.id })
      yield* finishTestJob(testJob.id)
      const liveFile = yield* readyFile(live)
      const liveJob = yield* createDenoiseJob(live, { file: liveFile.id })
      yield* claimNext("w")
      const outputKey = `outputs/${liveJob.id}.mp3`
      yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putObject(outputKey, riff(2)))
      yield* succeedJob(liveJob.id, "w", { storageKey: outputKey, sizeBytes: 2000, bitrateKbps: 192, format: "mp3" })
      expect((yield* getOutputLink(live, liveJob.id)).filename).toBe("talk.denoised.mp3")

      yield* TestClock.adjust(DEFAULT_LIMITS.outputRetentionMs + 1)
      const swept = yield* sweepLifecycle
      expect(swept.expiredOutputs).toBe(2)
      expect(yield* stored(outputKey)).toBe(false)
      expect(yield* stored(TEST_SAMPLE.mp3.storageKey)).toBe(true)
      for (const [caller, id] of [[live, liveJob.id], [test, testJob.id]] as const) {
        expect((yield* Effect.flip(getOutputLink(caller, id)))._tag).toBe("OutputExpired")
      }
      expect((yield* sweepLifecycle).expiredOutputs).toBe(0)
    })))

  it.effect("deletes staging objects whose file is no longer uploading (late bytes S3 could not refuse); keeps an open upload's", () =>
    run(Effect.gen(function*() {
      const { live } = yield* callers
      const door = yield* MemoryBlobBackdoor
      const open = yield* upload(live, riff(1))
      const ready = yield* readyFile(live)
      const deleted = yield* upload(live, riff(1))
      yield* deleteFile(live, deleted.id)
      // what a PUT to the old URLs does on S3: the bytes land in the staging keys
      yield* door.putObject(stagingKeyOf(ready.id), riff(30))
      yield* door.putObject(stagingKeyOf(deleted.id), riff(30))
      expect(yield* sweepLifecycle).toEqual({ purgedFiles: 0, expiredOutputs: 0, sweptStaging: 2 })
      expect(yield* stored(stagingKeyOf(open.id))).toBe(true)
      expect(yield* stored(stagingKeyOf(ready.id))).toBe(false)
      expect(yield* stored(stagingKeyOf(deleted.id))).toBe(false)
      expect(yield* stored(ready.storageKey)).toBe(true)
      expect(yield* sweepLifecycle).toEqual({ purgedFiles: 0, expiredOutputs: 0, sweptStaging: 0 })
    })))

  it.effect("never purges a file that a queued job still uses", () =>
    run(Effect.gen(function*() {
      const { live } = yield* callers
      const file = yield* readyFile(live)
      yield* createDenoiseJob(live, { file: file.id })
      yield* TestClock.adjust(DEFAULT_LIMITS.readyRetentionMs + 1)
      expect((yield* sweepLifecycle).purgedFiles).toBe(0)
      expect((yield* getFile(live, file.id)).status).toBe("ready")
    })))
})
