/**
 * Files: create, complete, validate, read and delete (core/services/files.ts),
 * end to end over the in-memory adapters (test/core/services/support.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream, TestClock } from "effect"
import { MemoryBlobBackdoor } from "../../../adapters/memory/blob-store.js"
import { BlobStore } from "../../../core/ports/blob-store.js"
import { getCredits } from "../../../core/services/credits.js"
import { completeFile, createFile, deleteFile, getFile, validateFile } from "../../../core/services/files.js"
import { cancelJob, createDenoiseJob, getJob } from "../../../core/services/jobs.js"
import { stagingKeyOf } from "../../../core/rules/storage.js"
import { claimNext } from "../../../core/services/worker.js"
import { HOUR, SECOND } from "../../../core/time.js"
import { riff } from "../../support/riff-probe.js"
import { callerWith, readyFile, run, signup, uploaded } from "./support.js"

const MiB = 1024 * 1024

describe("createFile", () => {
  it.effect("→ uploading with a PUT target, open for 6 hours", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      yield* TestClock.adjust("1 second")
      const { file, upload, expiresAt } = yield* createFile(live, { filename: "a.wav", sizeBytes: 100 * MiB, contentType: "audio/wav" })
      expect(file.status).toBe("uploading")
      expect(file.multipart).toBeNull()
      expect(expiresAt).toBe(SECOND + 6 * HOUR)
      expect(file.uploadExpiresAt).toBe(expiresAt)
      expect(upload._tag).toBe("Put")
      if (upload._tag === "Put") {
        expect(upload.url).toMatch(/^memory:\/\//)
        expect(upload.headers["Content-Type"]).toBe("audio/wav")
      }
      expect((yield* getFile(live, file.id)).status).toBe("uploading")
    })))

  it.effect("→ multipart above 100 MiB, ⌈size / 64 MiB⌉ parts", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const { file, upload } = yield* createFile(live, { filename: "big.wav", sizeBytes: 100 * MiB + 1, contentType: "audio/wav" })
      expect(upload._tag).toBe("Multipart")
      if (upload._tag === "Multipart") {
        expect(upload.parts.map((p) => p.partNumber)).toEqual([1, 2])
        expect(upload.parts.every((p) => p.url.startsWith("memory://"))).toBe(true)
        expect(file.multipart).toMatchObject({ uploadId: upload.uploadId, partSize: 64 * MiB, partCount: 2 })
      }
      const huge = yield* createFile(live, { filename: "huge.wav", sizeBytes: 1000 * MiB, contentType: "audio/wav" })
      expect(huge.upload._tag === "Multipart" && huge.upload.parts.length).toBe(16)
    })))

  it.effect("415 for a non-audio type, 413 over the mode's limit", () =>
    run(Effect.gen(function*() {
      const { live, test } = yield* signup()
      const e415 = yield* Effect.flip(createFile(live, { filename: "a.txt", sizeBytes: 10, contentType: "text/plain" }))
      expect(e415).toMatchObject({ _tag: "UnsupportedMediaType", status: 415 })
      const e413 = yield* Effect.flip(createFile(test, { filename: "a.wav", sizeBytes: 25 * MiB + 1, contentType: "audio/wav" }))
      expect(e413).toMatchObject({ _tag: "FileTooLarge", status: 413 })
      const live413 = yield* Effect.flip(createFile(live, { filename: "a.wav", sizeBytes: 5 * 1024 * MiB + 1, contentType: "audio/wav" }))
      expect(live413._tag).toBe("FileTooLarge")
      // the live key takes what the test key could not
      yield* createFile(live, { filename: "a.wav", sizeBytes: 25 * MiB + 1, contentType: "audio/wav" })
    })))

  it.effect("quota: the 11th open upload → quota_exceeded; expired uploads no longer count", () =>
    run(Effect.gen(function*() {
      const { live, test } = yield* signup()
      for (let i = 0; i < 10; i++) yield* createFile(live, { filename: `${i}.wav`, sizeBytes: 100, contentType: "audio/wav" })
      const error = yield* Effect.flip(createFile(live, { filename: "11.wav", sizeBytes: 100, contentType: "audio/wav" }))
      expect(error).toMatchObject({ _tag: "QuotaExceeded", status: 429 })
      // per mode
      yield* createFile(test, { filename: "t.wav", sizeBytes: 100, contentType: "audio/wav" })
      yield* TestClock.adjust(6 * HOUR + 1)
      yield* createFile(live, { filename: "11.wav", sizeBytes: 100, contentType: "audio/wav" })
    })))

  it.effect("quota: retained input bytes, per mode", () =>
    run(
      Effect.gen(function*() {
        const { live, test } = yield* signup()
        const file = yield* readyFile(live, riff(0.6))
        yield* createFile(live, { filename: "b.wav", sizeBytes: 400, contentType: "audio/wav" })
        const error = yield* Effect.flip(createFile(live, { filename: "c.wav", sizeBytes: 1, contentType: "audio/wav" }))
        expect(error).toMatchObject({ _tag: "QuotaExceeded", status: 429 })
        expect(error._tag === "QuotaExceeded" && error.retryAfterSeconds).toBeUndefined()
        yield* createFile(test, { filename: "t.wav", sizeBytes: 500, contentType: "audio/wav" })
        expect((yield* Effect.flip(createFile(test, { filename: "t2.wav", sizeBytes: 1, contentType: "audio/wav" })))._tag)
          .toBe("QuotaExceeded")
        // deleting frees the bytes
        yield* deleteFile(live, file.id)
        yield* createFile(live, { filename: "c.wav", sizeBytes: 600, contentType: "audio/wav" })
      }),
      { limits: { retainedInputBytes: { live: 1000, test: 500 } } }
    ))

  it.effect("quota: validations per hour, with retryAfterSeconds", () =>
    run(
      Effect.gen(function*() {
        const { live } = yield* signup()
        const files = [
          yield* uploaded(live, riff(1)),
          yield* uploaded(live, riff(1)),
          yield* uploaded(live, riff(1))
        ]
        yield* completeFile(live, files[0]!.id, null)
        yield* TestClock.adjust("10 minutes")
        yield* completeFile(live, files[1]!.id, null)
        yield* TestClock.adjust("10 minutes")
        const error = yield* Effect.flip(completeFile(live, files[2]!.id, null))
        expect(error).toMatchObject({ _tag: "QuotaExceeded", status: 429, retryAfterSeconds: 40 * 60 })
        expect((yield* getFile(live, files[2]!.id)).status).toBe("uploading")
        yield* TestClock.adjust(40 * 60 * SECOND + 1)
        expect((yield* completeFile(live, files[2]!.id, null)).status).toBe("validating")
      }),
      { limits: { validationsPerHour: 2 } }
    ))
})

describe("completeFile", () => {
  it.effect("a stored size that differs → 422 invalid_request and the file stays uploading", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const door = yield* MemoryBlobBackdoor
      const { file } = yield* createFile(live, { filename: "a.wav", sizeBytes: 2000, contentType: "audio/wav" })
      // as a store that does not pin the size would keep it
      yield* door.putObject(stagingKeyOf(file.id), riff(1.999))
      const error = yield* Effect.flip(completeFile(live, file.id, null))
      expect(error).toMatchObject({ _tag: "InvalidRequest", status: 422 })
      expect(error.detail).toContain("uploaded size does not match size_bytes")
      expect((yield* getFile(live, file.id)).status).toBe("uploading")
      // the client uploads again within the window
      yield* door.putObject(stagingKeyOf(file.id), riff(2))
      const validating = yield* completeFile(live, file.id, null)
      expect(validating.status).toBe("validating")
      expect(validating.completedAt).toBe(0)
    })))

  it.effect("complete moves the staged bytes to the input; the upload takes no more bytes, the input never changes", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const door = yield* MemoryBlobBackdoor
      const blobs = yield* BlobStore
      const created = yield* createFile(live, { filename: "a.wav", sizeBytes: 2000, contentType: "audio/wav" })
      expect(created.file.storageKey).not.toBe(stagingKeyOf(created.file.id))
      yield* door.putUpload(created.upload, riff(2))
      expect(Option.isNone(yield* blobs.stat(created.file.storageKey))).toBe(true) // nothing reads staging but complete
      yield* completeFile(live, created.file.id, null)
      expect(Option.isNone(yield* blobs.stat(stagingKeyOf(created.file.id)))).toBe(true)
      const other = riff(2).map((b, i) => (i < 4 ? b : 255 - b))
      expect((yield* Effect.flip(door.putUpload(created.upload, other)))._tag).toBe("BlobError")
      const input = Buffer.concat(Chunk.toReadonlyArray(yield* Stream.runCollect(blobs.read(created.file.storageKey))))
      expect(input.equals(Buffer.from(riff(2)))).toBe(true)
    })))

  it.effect("missing bytes → 422 invalid_request, file stays uploading", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const { file } = yield* createFile(live, { filename: "a.wav", sizeBytes: 2000, contentType: "audio/wav" })
      const error = yield* Effect.flip(completeFile(live, file.id, null))
      expect(error).toMatchObject({ _tag: "InvalidRequest", status: 422 })
      expect(error.detail).toContain("uploaded size does not match size_bytes")
      expect((yield* getFile(live, file.id)).status).toBe("uploading")
    })))

  it.effect("after the window → UploadExpired and the file is unchanged", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const file = yield* uploaded(live, riff(2))
      yield* TestClock.adjust(6 * HOUR + 1)
      const error = yield* Effect.flip(completeFile(live, file.id, null))
      expect(error).toMatchObject({ _tag: "UploadExpired", status: 409 })
      expect((yield* getFile(live, file.id)).status).toBe("uploading")
    })))

  it.effect("a second complete returns the file unchanged", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const file = yield* uploaded(live, riff(2))
      const first = yield* completeFile(live, file.id, null)
      yield* TestClock.adjust("1 minute")
      expect(yield* completeFile(live, file.id, null)).toEqual(first)
      const ready = Option.getOrThrow(yield* validateFile(file.id))
      expect(yield* completeFile(live, file.id, null)).toEqual(ready)
    })))

  it.effect("multipart: missing, wrong or unuploaded parts → invalid_request; the right ETags assemble it", () =>
    run(
      Effect.gen(function*() {
        const { live } = yield* signup()
        const door = yield* MemoryBlobBackdoor
        const blobs = yield* BlobStore
        const bytes = riff(2.5)
        const { file, upload } = yield* createFile(live, { filename: "big.wav", sizeBytes: bytes.length, contentType: "audio/wav" })
        if (upload._tag !== "Multipart") throw new Error("expected a multipart upload")
        expect(upload.parts).toHaveLength(3) // 1000 + 1000 + 500
        const slices = [bytes.slice(0, 1000), bytes.slice(1000, 2000), bytes.slice(2000)]
        const etag1 = yield* door.putPart(upload.uploadId, 1, slices[0]!)
        const etag2 = yield* door.putPart(upload.uploadId, 2, slices[1]!)

        const refused = (parts: ReadonlyArray<{ partNumber: number; etag: string }> | null) =>
          Effect.gen(function*() {
            const error = yield* Effect.flip(completeFile(live, file.id, parts))
            expect(error).toMatchObject({ _tag: "InvalidRequest", status: 422, field: "parts" })
            expect((yield* getFile(live, file.id)).status).toBe("uploading")
          })
        yield* refused(null)
        yield* refused([])
        yield* refused([{ partNumber: 1, etag: etag1 }, { partNumber: 2, etag: etag2 }]) // part 3 not listed
        yield* refused([{ partNumber: 1, etag: etag1 }, { partNumber: 1, etag: etag1 }, { partNumber: 2, etag: etag2 }])
        const etag3Fake = `"${"0".repeat(32)}"`
        yield* refused([{ partNumber: 1, etag: etag1 }, { partNumber: 2, etag: etag2 }, { partNumber: 3, etag: etag3Fake }]) // not uploaded
        const etag3 = yield* door.putPart(upload.uploadId, 3, slices[2]!)
        yield* refused([{ partNumber: 1, etag: etag2 }, { partNumber: 2, etag: etag1 }, { partNumber: 3, etag: etag3 }]) // wrong ETags

        const done = yield* completeFile(live, file.id, [
          { partNumber: 3, etag: etag3 }, { partNumber: 1, etag: etag1 }, { partNumber: 2, etag: etag2 }
        ])
        expect(done.status).toBe("validating")
        const stored = Buffer.concat(Chunk.toReadonlyArray(yield* Stream.runCollect(blobs.read(file.storageKey))))
        expect(stored.equals(Buffer.from(bytes))).toBe(true)
        const ready = Option.getOrThrow(yield* validateFile(file.id))
        expect(ready).toMatchObject({ status: "ready", durationSeconds: 2.5 })
      }),
      { limits: { putMaxBytes: 1000, multipartPartBytes: 1000 } }
    ))
})

describe("validateFile", () => {
  it.effect("decodable → ready with the decoded duration; otherwise rejected with invalid_audio", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      yield* TestClock.adjust("1 second")
      const ready = yield* readyFile(live, riff(12.5))
      expect(ready).toMatchObject({ status: "ready", durationSeconds: 12.5, readyAt: SECOND, error: null })

      const junk = new Uint8Array(3000).fill(7)
      const rejected = yield* readyFile(live, junk, "noise.wav")
      expect(rejected.status).toBe("rejected")
      expect(rejected.error?.code).toBe("invalid_audio")
      expect(rejected.durationSeconds).toBeNull()
      expect(rejected.rejectedAt).toBe(SECOND)
      // never becomes ready; a job on it is file_not_ready
      expect(Option.getOrThrow(yield* validateFile(rejected.id)).status).toBe("rejected")
      expect((yield* Effect.flip(createDenoiseJob(live, { file: rejected.id })))._tag).toBe("FileNotReady")
    })))
})

describe("files: ownership, scope, delete", () => {
  it.effect("another mode's or another account's file → NotFound", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      const b = yield* signup({ email: "b@example.com" })
      const file = yield* uploaded(a.live, riff(2))
      expect((yield* getFile(a.live, file.id)).id).toBe(file.id)
      for (const other of [a.test, b.live, b.test]) {
        expect(yield* Effect.flip(getFile(other, file.id))).toMatchObject({ _tag: "NotFound", status: 404 })
        expect((yield* Effect.flip(completeFile(other, file.id, null)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(deleteFile(other, file.id)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(createDenoiseJob(other, { file: file.id })))._tag).toBe("NotFound")
      }
      expect((yield* Effect.flip(getFile(a.live, "file_nope")))._tag).toBe("NotFound")
    })))

  it.effect("insufficient scope names the missing scope", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      const reader = yield* callerWith(a.account.id, "live", ["jobs:read"])
      const error = yield* Effect.flip(createFile(reader, { filename: "a.wav", sizeBytes: 10, contentType: "audio/wav" }))
      expect(error).toMatchObject({ _tag: "InsufficientScope", status: 403 })
      expect(error.detail).toContain("files:write")
      // jobs:read may read files, but not complete, delete or create jobs
      const file = yield* uploaded(a.live, riff(2))
      expect((yield* getFile(reader, file.id)).id).toBe(file.id)
      expect((yield* Effect.flip(completeFile(reader, file.id, null))).detail).toContain("files:write")
      expect((yield* Effect.flip(deleteFile(reader, file.id))).detail).toContain("files:write")
      expect((yield* Effect.flip(createDenoiseJob(reader, { file: file.id }))).detail).toContain("jobs:write")
      expect((yield* Effect.flip(getCredits(reader))).detail).toContain("credits:read")
      const creditsOnly = yield* callerWith(a.account.id, "live", ["credits:read"])
      const both = yield* Effect.flip(getFile(creditsOnly, file.id))
      expect(both.detail).toContain("files:write")
      expect(both.detail).toContain("jobs:read")
    })))

  it.effect("delete: FileInUse while a queued job uses it, removed after cancel", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const blobs = yield* BlobStore
      const file = yield* readyFile(live, riff(12))
      const job = yield* createDenoiseJob(live, { file: file.id })
      expect(yield* Effect.flip(deleteFile(live, file.id))).toMatchObject({ _tag: "FileInUse", status: 409 })
      expect((yield* getFile(live, file.id)).status).toBe("ready")
      yield* cancelJob(live, job.id)
      yield* deleteFile(live, file.id)
      expect((yield* Effect.flip(getFile(live, file.id)))._tag).toBe("NotFound")
      expect(Option.isNone(yield* blobs.stat(file.storageKey))).toBe(true)
      // the job keeps its record
      expect((yield* getJob(live, job.id)).status).toBe("canceled")
    })))

  it.effect("delete: also refused while processing; an uploading multipart upload is aborted", () =>
    run(
      Effect.gen(function*() {
        const { live } = yield* signup({ creditMicros: 10_000_000 })
        const file = yield* readyFile(live, riff(1))
        yield* createDenoiseJob(live, { file: file.id })
        yield* claimNext("w1")
        expect((yield* Effect.flip(deleteFile(live, file.id)))._tag).toBe("FileInUse")

        const door = yield* MemoryBlobBackdoor
        const { file: big, upload } = yield* createFile(live, { filename: "b.wav", sizeBytes: 1500, contentType: "audio/wav" })
        if (upload._tag !== "Multipart") throw new Error("expected a multipart upload")
        yield* door.putPart(upload.uploadId, 1, riff(1))
        yield* deleteFile(live, big.id)
        expect((yield* Effect.flip(door.putPart(upload.uploadId, 2, riff(0.5))))._tag).toBe("BlobError")
      }),
      { limits: { putMaxBytes: 1000, multipartPartBytes: 1000 } }
    ))
})
