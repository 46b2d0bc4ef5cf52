/**
 * The core's services end to end over the in-memory adapters (repositories, MemoryBlobStore)
 * and a test double of the AudioProbe port. Time is the TestClock (starts at 0).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Option, Stream, TestClock } from "effect"
import { MemoryBlobBackdoor, MemoryBlobStore } from "../adapters/memory/blob-store.js"
import { type ModelDefinition, RNNOISE } from "../core/domain/catalog.js"
import type { Mode, Scope } from "../core/domain/enums.js"
import { BlobStore } from "../core/ports/blob-store.js"
import { KeyRepo, WalletRepo } from "../core/ports/repositories.js"
import { changeAccountStatus, createAccountWithKeys, createKey, grantCredit, revokeKey } from "../core/services/accounts.js"
import { authenticate, type Caller } from "../core/services/caller.js"
import { getCredits } from "../core/services/credits.js"
import { completeFile, createFile, deleteFile, getFile, validateFile } from "../core/services/files.js"
import { cancelJob, createDenoiseJob, getJob, getOutputLink, listJobs } from "../core/services/jobs.js"
import { stagingKeyOf } from "../core/rules/storage.js"
import { claimNext, failJob, finishTestJob, heartbeat, recoverLapsedLeases, succeedJob } from "../core/services/worker.js"
import { DAY, HOUR, SECOND } from "../core/time.js"
import { coreEnvironment, TEST_SAMPLE } from "./support/env.js"
import { riff, RiffProbe } from "./support/riff-probe.js"

const MiB = 1024 * 1024

type EnvOptions = Parameters<typeof coreEnvironment>[0]

const environment = (options: EnvOptions = {}) => Layer.mergeAll(coreEnvironment(options), MemoryBlobStore, RiffProbe)
type Env = Layer.Layer.Success<ReturnType<typeof environment>>

/** Runs a test body on a fresh environment. */
const run = <A, E>(body: Effect.Effect<A, E, Env>, options: EnvOptions = {}) => Effect.provide(body, environment(options))

const signup = (options: { readonly creditMicros?: number; readonly email?: string } = {}) =>
  Effect.gen(function*() {
    const created = yield* createAccountWithKeys({ email: options.email ?? "a@example.com", creditMicros: options.creditMicros })
    const live = yield* authenticate(`Bearer ${created.liveKey}`)
    const test = yield* authenticate(`Bearer ${created.testKey}`)
    return { ...created, live, test }
  })

/** A caller whose key has only `scopes`. */
const callerWith = (accountId: string, mode: Mode, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(createKey(accountId, { mode, scopes }), ({ key }) => authenticate(`Bearer ${key}`))

/** Creates the file and plays the client's PUT. */
const uploaded = (caller: Caller, bytes: Uint8Array, filename = "interview.wav", contentType = "audio/wav") =>
  Effect.gen(function*() {
    const created = yield* createFile(caller, { filename, sizeBytes: bytes.byteLength, contentType })
    yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putUpload(created.upload, bytes))
    return created.file
  })

/** Upload, complete and validate. */
const readyFile = (caller: Caller, bytes: Uint8Array, filename = "interview.wav") =>
  Effect.gen(function*() {
    const file = yield* uploaded(caller, bytes, filename)
    yield* completeFile(caller, file.id, null)
    return Option.getOrThrow(yield* validateFile(file.id))
  })

const credits = (caller: Caller) => getCredits(caller)

const ledgerOf = (accountId: string) =>
  Effect.map(Effect.flatMap(WalletRepo, (w) => w.ledgerPage({ accountId, limit: 1000 })), (page) => [...page].reverse())

const ledgerForJob = (jobId: string) => Effect.flatMap(WalletRepo, (w) => w.ledgerForJob(jobId))

const OUTPUT = { storageKey: "outputs/out.mp3", sizeBytes: 4321, bitrateKbps: 192, format: "mp3" }

// --- authenticate ---------------------------------------------------------------------------

describe("authenticate", () => {
  it.effect("missing, malformed and unknown keys → Unauthorized", () =>
    run(Effect.gen(function*() {
      yield* signup()
      for (
        const header of [
          undefined,
          "",
          "   ",
          "Basic dXNlcjpwYXNz",
          "Bearer",
          "Bearer not-a-key",
          `Bearer hush_prod_${"a".repeat(52)}`,
          `Bearer hush_live_${"a".repeat(51)}`,
          `Bearer hush_live_${"a".repeat(52)}` // well formed, unknown
        ]
      ) {
        const error = yield* Effect.flip(authenticate(header))
        expect(error._tag, String(header)).toBe("Unauthorized")
        expect(error.status).toBe(401)
      }
    })))

  it.effect("a revoked key → Unauthorized; the other key still works", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      yield* revokeKey(a.account.id, a.liveKeyId)
      expect((yield* Effect.flip(authenticate(`Bearer ${a.liveKey}`)))._tag).toBe("Unauthorized")
      expect((yield* authenticate(`Bearer ${a.testKey}`)).mode).toBe("test")
    })))

  it.effect("a frozen account → AccountFrozen on both keys; suspended still authenticates", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      yield* changeAccountStatus(a.account.id, "dispute_opened")
      for (const key of [a.liveKey, a.testKey]) {
        const error = yield* Effect.flip(authenticate(`Bearer ${key}`))
        expect(error._tag).toBe("AccountFrozen")
        expect(error.status).toBe(403)
      }
      yield* changeAccountStatus(a.account.id, "dispute_lost")
      const caller = yield* authenticate(`Bearer ${a.liveKey}`)
      expect(caller.account.status).toBe("suspended")
    })))

  it.effect("resolves the caller and sets last_used_at", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      const keys = yield* KeyRepo
      yield* TestClock.adjust("5 minutes")
      const caller = yield* authenticate(`bearer  ${a.liveKey}`)
      expect(caller).toMatchObject({ accountId: a.account.id, keyId: a.liveKeyId, mode: "live" })
      expect(caller.scopes).toEqual(["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"])
      const key = Option.getOrThrow(yield* keys.get(a.liveKeyId))
      expect(key.lastUsedAt).toBe(5 * 60 * SECOND)
    })))
})

// --- files ----------------------------------------------------------------------------------

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

// --- jobs -----------------------------------------------------------------------------------

const TINY: ModelDefinition = {
  ...RNNOISE, id: "xiph/tiny", name: "Tiny", limits: { maxBytes: 4000, maxSeconds: 5 }
}
const SMALL_BYTES: ModelDefinition = {
  ...RNNOISE, id: "xiph/small", name: "Small", limits: { maxBytes: 4000, maxSeconds: null }
}
const GPU: ModelDefinition = {
  ...RNNOISE, id: "acme/gpu", name: "GPU", runner: "acme", limits: { maxBytes: 4000, maxSeconds: 5 }
}
const UNPRICED: ModelDefinition = {
  ...RNNOISE, id: "xiph/unpriced", name: "Unpriced", pricing: { ...RNNOISE.pricing, unitPriceMicros: null }
}
const OTHER: ModelDefinition = {
  ...RNNOISE, id: "xiph/other", name: "Other", pricing: { ...RNNOISE.pricing, unitPriceMicros: 200, pricingVersion: 2 }
}
const MODELS = { models: [RNNOISE, TINY, SMALL_BYTES, GPU, UNPRICED, OTHER], runners: ["builtin"] }

describe("createDenoiseJob: the order of Endpoint rule 2", () => {
  it.effect("file_not_ready before model_not_available", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const file = yield* uploaded(live, riff(10))
      expect(yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "nope/nope" })))
        .toMatchObject({ _tag: "FileNotReady", status: 409 })
      yield* completeFile(live, file.id, null)
      expect((yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "acme/gpu" })))._tag).toBe("FileNotReady")
    }), MODELS))

  it.effect("model_not_available (unknown, retired, unpriced) before audio_too_long", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const file = yield* readyFile(live, riff(10)) // 10 s, 10,000 bytes: over GPU's 5 s and 4,000 bytes
      const retired = yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "acme/gpu" }))
      expect(retired).toMatchObject({ _tag: "ModelNotAvailable", status: 422 })
      expect(retired.detail).toContain("retired")
      const unknown = yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "nope/nope" }))
      expect(unknown._tag).toBe("ModelNotAvailable")
      expect((yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "xiph/unpriced" })))._tag).toBe("ModelNotAvailable")
    }), MODELS))

  it.effect("audio_too_long before file_too_large", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup()
      const file = yield* readyFile(live, riff(10))
      expect(yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "xiph/tiny" })))
        .toMatchObject({ _tag: "AudioTooLong", status: 422 })
    }), MODELS))

  it.effect("audio_too_long against the service's limit", () =>
    run(
      Effect.gen(function*() {
        const { live } = yield* signup({ creditMicros: 10_000_000 })
        const long = yield* readyFile(live, riff(6))
        expect((yield* Effect.flip(createDenoiseJob(live, { file: long.id })))._tag).toBe("AudioTooLong")
        const exact = yield* readyFile(live, riff(5))
        expect((yield* createDenoiseJob(live, { file: exact.id })).status).toBe("queued")
      }),
      { limits: { maxAudioSeconds: 5 } }
    ))

  it.effect("file_too_large before insufficient_credit", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup() // no credit at all
      const file = yield* readyFile(live, riff(10))
      expect(yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "xiph/small" })))
        .toMatchObject({ _tag: "FileTooLarge", status: 413 })
      expect(yield* Effect.flip(createDenoiseJob(live, { file: file.id })))
        .toMatchObject({ _tag: "InsufficientCredit", status: 402 })
    }), MODELS))

  it.effect("a model whose runner is not configured is retired", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(1))
      expect((yield* Effect.flip(createDenoiseJob(live, { file: file.id, model: "acme/gpu" })))._tag).toBe("ModelNotAvailable")
      // the same deployment with the runner configured accepts it
    }), MODELS))

  it.effect("…and is usable once its runner is configured", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(1))
      expect((yield* createDenoiseJob(live, { file: file.id, model: "acme/gpu" })).model).toBe("acme/gpu")
    }), { ...MODELS, runners: ["builtin", "acme"] }))

  it.effect("AccountSuspended (even before file_not_ready); running jobs still finish", () =>
    run(Effect.gen(function*() {
      const a = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(a.live, riff(12))
      const running = yield* createDenoiseJob(a.live, { file: file.id })
      yield* claimNext("w1")
      yield* changeAccountStatus(a.account.id, "suspend")
      const suspended = yield* authenticate(`Bearer ${a.liveKey}`)
      expect(yield* Effect.flip(createDenoiseJob(suspended, { file: file.id })))
        .toMatchObject({ _tag: "AccountSuspended", status: 403 })
      const uploading = yield* uploaded(suspended, riff(1))
      expect((yield* Effect.flip(createDenoiseJob(suspended, { file: uploading.id })))._tag).toBe("AccountSuspended")
      expect((yield* succeedJob(running.id, "w1", OUTPUT)).status).toBe("succeeded")
    })))
})

describe("createDenoiseJob: credit", () => {
  it.effect("a live job holds exactly billable × unit price", () =>
    run(Effect.gen(function*() {
      const { live, account } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      expect(job).toMatchObject({ status: "queued", progress: 0, model: "xiph/rnnoise", mode: "live", durationSeconds: 12.5 })
      expect(job.pricing).toMatchObject({
        billableSeconds: 13, minimumApplied: false, unitPriceMicros: 100, pricingVersion: 1, estimatedMicros: 1300
      })
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 1300, availableMicros: 9_998_700 })
      const entries = yield* ledgerForJob(job.id)
      expect(entries.map((e) => [e.kind, e.balanceDelta, e.reservedDelta])).toEqual([["hold", 0, 1300]])
      // the minimum
      const short = yield* readyFile(live, riff(3))
      const minJob = yield* createDenoiseJob(live, { file: short.id })
      expect(minJob.pricing).toMatchObject({ billableSeconds: 10, minimumApplied: true, estimatedMicros: 1000 })
      expect((yield* credits(live)).availableMicros).toBe(10_000_000 - 2300)
      expect((yield* ledgerOf(account.id)).map((e) => e.kind)).toEqual(["grant", "hold", "hold"])
    })))

  it.effect("402 when available credit is short by one micro, with nothing created; exact credit is enough", () =>
    run(Effect.gen(function*() {
      const { live, account } = yield* signup({ creditMicros: 1299 })
      const file = yield* readyFile(live, riff(12.5))
      const error = yield* Effect.flip(createDenoiseJob(live, { file: file.id }))
      expect(error).toMatchObject({ _tag: "InsufficientCredit", status: 402 })
      expect((yield* listJobs(live, {})).data).toHaveLength(0)
      expect((yield* ledgerOf(account.id)).map((e) => e.kind)).toEqual(["grant"])
      expect(yield* credits(live)).toEqual({ balanceMicros: 1299, reservedMicros: 0, availableMicros: 1299 })
      yield* grantCredit(account.id, 1)
      const job = yield* createDenoiseJob(live, { file: file.id })
      expect(yield* credits(live)).toEqual({ balanceMicros: 1300, reservedMicros: 1300, availableMicros: 0 })
      // the held credit is not available to a second job
      expect((yield* Effect.flip(createDenoiseJob(live, { file: file.id })))._tag).toBe("InsufficientCredit")
      expect((yield* listJobs(live, {})).data.map((j) => j.id)).toEqual([job.id])
    })))

  it.effect("a test job never holds; finishTestJob succeeds it with nothing charged", () =>
    run(Effect.gen(function*() {
      const { live, test, account } = yield* signup({ creditMicros: 5_000 })
      const file = yield* readyFile(test, riff(12.5))
      expect(file.mode).toBe("test")
      const job = yield* createDenoiseJob(test, { file: file.id })
      expect(job).toMatchObject({ mode: "test", status: "queued" })
      expect(yield* credits(test)).toEqual({ balanceMicros: 0, reservedMicros: 0, availableMicros: 0 })
      expect(yield* credits(live)).toEqual({ balanceMicros: 5_000, reservedMicros: 0, availableMicros: 5_000 })
      // a test job is never refused for credit, even far beyond the live balance
      const long = yield* readyFile(test, riff(120))
      yield* createDenoiseJob(test, { file: long.id })
      // a live worker does not pick test jobs
      expect(Option.isNone(yield* claimNext("w1"))).toBe(true)

      const done = Option.getOrThrow(yield* finishTestJob(job.id))
      expect(done).toMatchObject({ status: "succeeded", progress: 1, chargedMicros: 0, ledgerTxnId: null })
      expect(done.output).toMatchObject({ storageKey: TEST_SAMPLE.mp3.storageKey, sizeBytes: TEST_SAMPLE.mp3.sizeBytes, format: "mp3" })
      expect((yield* ledgerOf(account.id)).map((e) => e.kind)).toEqual(["grant"])
      expect(yield* credits(live)).toEqual({ balanceMicros: 5_000, reservedMicros: 0, availableMicros: 5_000 })
      expect(Option.isNone(yield* finishTestJob(job.id))).toBe(true)
      expect((yield* getOutputLink(test, job.id)).filename).toBe("interview.denoised.mp3")
    })))
})

describe("cancelJob", () => {
  it.effect("queued → canceled with the hold released; processing → JobNotCancelable", () =>
    run(Effect.gen(function*() {
      const { live, test } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      yield* TestClock.adjust("1 second")
      const canceled = yield* cancelJob(live, job.id)
      expect(canceled).toMatchObject({ status: "canceled", finishedAt: SECOND, chargedMicros: null })
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
      expect((yield* ledgerForJob(job.id)).map((e) => [e.kind, e.reservedDelta])).toEqual([["hold", 1300], ["release", -1300]])
      // a second cancel: 409, nothing released twice
      expect(yield* Effect.flip(cancelJob(live, job.id))).toMatchObject({ _tag: "JobNotCancelable", status: 409 })
      expect(yield* ledgerForJob(job.id)).toHaveLength(2)

      const second = yield* createDenoiseJob(live, { file: file.id })
      yield* claimNext("w1")
      expect((yield* Effect.flip(cancelJob(live, second.id)))._tag).toBe("JobNotCancelable")
      expect((yield* getJob(live, second.id)).status).toBe("processing")
      expect((yield* credits(live)).reservedMicros).toBe(1300)
      // the other mode cannot see it
      expect((yield* Effect.flip(cancelJob(test, second.id)))._tag).toBe("NotFound")
      expect((yield* Effect.flip(getJob(test, second.id)))._tag).toBe("NotFound")
    })))
})

describe("worker", () => {
  it.effect("succeedJob captures exactly the hold, exactly once", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      yield* TestClock.adjust("1 second")
      const claimed = Option.getOrThrow(yield* claimNext("w1"))
      expect(claimed).toMatchObject({ id: job.id, status: "processing", attempts: 1, leaseOwner: "w1", startedAt: SECOND })
      expect(Option.isNone(yield* claimNext("w2"))).toBe(true)
      const hb = yield* heartbeat(job.id, "w1", 0.4)
      expect(hb.progress).toBe(0.4)
      expect((yield* Effect.flip(heartbeat(job.id, "w2", 0.5)))._tag).toBe("JobTransitionRefused")
      // another worker may not finish it, and charges nothing trying
      expect((yield* Effect.flip(succeedJob(job.id, "w2", OUTPUT)))._tag).toBe("JobTransitionRefused")
      expect(yield* ledgerForJob(job.id)).toHaveLength(1)

      yield* TestClock.adjust("1 second")
      const done = yield* succeedJob(job.id, "w1", OUTPUT)
      expect(done).toMatchObject({ status: "succeeded", progress: 1, chargedMicros: 1300, finishedAt: 2 * SECOND })
      const entries = yield* ledgerForJob(job.id)
      const captures = entries.filter((e) => e.kind === "capture")
      expect(captures).toHaveLength(1)
      expect(captures[0]).toMatchObject({ balanceDelta: -1300, reservedDelta: -1300 })
      expect(done.ledgerTxnId).toBe(captures[0]!.id)
      expect(yield* credits(live)).toEqual({ balanceMicros: 9_998_700, reservedMicros: 0, availableMicros: 9_998_700 })

      const again = yield* Effect.flip(succeedJob(job.id, "w1", OUTPUT))
      expect(again._tag).toBe("JobTransitionRefused")
      expect(yield* ledgerForJob(job.id)).toHaveLength(2)
      expect((yield* credits(live)).balanceMicros).toBe(9_998_700)
      expect((yield* Effect.flip(failJob(job.id, "w1", { code: "internal_error", detail: "late" })))._tag)
        .toBe("JobTransitionRefused")
      expect((yield* getJob(live, job.id)).status).toBe("succeeded")
    })))

  it.effect("failJob releases the hold, no charge", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      yield* claimNext("w1")
      const failed = yield* failJob(job.id, "w1", { code: "provider_error", detail: "gpu went away" })
      expect(failed).toMatchObject({ status: "failed", chargedMicros: null, error: { code: "provider_error" } })
      expect((yield* ledgerForJob(job.id)).map((e) => e.kind)).toEqual(["hold", "release"])
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
      expect((yield* Effect.flip(succeedJob(job.id, "w1", OUTPUT)))._tag).toBe("JobTransitionRefused")
      expect(yield* ledgerForJob(job.id)).toHaveLength(2)
    })))

  it.effect("recoverLapsedLeases: back to queued, then failed internal_error after 3 lapses, no charge", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })

      // a heartbeat keeps the lease
      yield* claimNext("w0")
      yield* TestClock.adjust("20 seconds")
      yield* heartbeat(job.id, "w0")
      yield* TestClock.adjust("20 seconds")
      expect(yield* recoverLapsedLeases()).toBe(0)
      expect((yield* getJob(live, job.id)).status).toBe("processing")
      yield* TestClock.adjust("11 seconds")
      expect(yield* recoverLapsedLeases()).toBe(1)
      let current = yield* getJob(live, job.id)
      expect(current).toMatchObject({ status: "queued", attempts: 1, progress: 0, leaseOwner: null })

      for (const attempt of [2, 3]) {
        const claimed = Option.getOrThrow(yield* claimNext(`w${attempt}`))
        expect(claimed.attempts).toBe(attempt)
        yield* TestClock.adjust(30 * SECOND + 1)
        expect(yield* recoverLapsedLeases()).toBe(1)
        current = yield* getJob(live, job.id)
      }
      expect(current).toMatchObject({ status: "failed", chargedMicros: null, error: { code: "internal_error" } })
      expect((yield* ledgerForJob(job.id)).map((e) => e.kind)).toEqual(["hold", "release"])
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
      // the worker that lost it cannot succeed it
      expect((yield* Effect.flip(succeedJob(job.id, "w3", OUTPUT)))._tag).toBe("JobTransitionRefused")
      expect(Option.isNone(yield* claimNext("w4"))).toBe(true)
    })))
})

describe("listJobs", () => {
  const createJobs = (caller: Caller, fileId: string, count: number, model?: string) =>
    Effect.gen(function*() {
      const ids: Array<string> = []
      for (let i = 0; i < count; i++) {
        yield* TestClock.adjust("1 second")
        ids.push((yield* createDenoiseJob(caller, { file: fileId, model: model ?? null })).id)
      }
      return ids
    })

  it.effect("pages newest first with next_cursor; filters; bad cursors → 400", () =>
    run(Effect.gen(function*() {
      const a = yield* signup({ creditMicros: 10_000_000 })
      const b = yield* signup({ email: "b@example.com", creditMicros: 10_000_000 })
      const file = yield* readyFile(a.live, riff(12))
      const ids = yield* createJobs(a.live, file.id, 5)
      const newest = [...ids].reverse()

      const p1 = yield* listJobs(a.live, { limit: 2 })
      expect(p1.data.map((j) => j.id)).toEqual(newest.slice(0, 2))
      expect(p1.nextCursor).not.toBeNull()
      const p2 = yield* listJobs(a.live, { limit: 2, cursor: p1.nextCursor! })
      expect(p2.data.map((j) => j.id)).toEqual(newest.slice(2, 4))
      const p3 = yield* listJobs(a.live, { limit: 2, cursor: p2.nextCursor! })
      expect(p3.data.map((j) => j.id)).toEqual(newest.slice(4))
      expect(p3.nextCursor).toBeNull()
      const all = yield* listJobs(a.live, {})
      expect(all.data.map((j) => j.id)).toEqual(newest)
      expect(all.nextCursor).toBeNull()
      expect((yield* listJobs(a.live, { limit: 5 })).nextCursor).toBeNull()

      // a job created after page 1 does not shift the following pages
      yield* createJobs(a.live, file.id, 1)
      expect((yield* listJobs(a.live, { limit: 2, cursor: p1.nextCursor! })).data.map((j) => j.id)).toEqual(newest.slice(2, 4))

      // filters
      yield* cancelJob(a.live, ids[1]!)
      expect((yield* listJobs(a.live, { status: "canceled" })).data.map((j) => j.id)).toEqual([ids[1]])
      expect((yield* listJobs(a.live, { status: "queued" })).data).toHaveLength(5)
      const other = yield* createJobs(a.live, file.id, 2, "xiph/other")
      expect((yield* listJobs(a.live, { model: "xiph/other" })).data.map((j) => j.id)).toEqual([...other].reverse())
      expect((yield* listJobs(a.live, { model: "xiph/other", status: "canceled" })).data).toHaveLength(0)
      const filtered = yield* listJobs(a.live, { status: "queued", limit: 3 })
      expect(filtered.data.every((j) => j.status === "queued")).toBe(true)
      const filtered2 = yield* listJobs(a.live, { status: "queued", limit: 3, cursor: filtered.nextCursor! })
      expect(filtered2.data.every((j) => j.status === "queued")).toBe(true)
      expect(filtered.data.length + filtered2.data.length).toBe(6)
      // modes are separate
      expect((yield* listJobs(a.test, {})).data).toHaveLength(0)

      const cursor = p1.nextCursor!
      const badCursors = [
        cursor.slice(0, -2) + (cursor.endsWith("AA") ? "BB" : "AA"),
        "x" + cursor,
        cursor + ".x",
        "garbage",
        ""
      ]
      for (const bad of badCursors) {
        const error = yield* Effect.flip(listJobs(a.live, { limit: 2, cursor: bad }))
        expect(error, bad).toMatchObject({ _tag: "InvalidRequest", status: 400, field: "cursor" })
      }
      // a cursor is bound to its account, mode and filters
      yield* createJobs(b.live, (yield* readyFile(b.live, riff(12))).id, 3)
      for (
        const [caller, request] of [
          [b.live, {}],
          [a.test, {}],
          [a.live, { status: "queued" as const }],
          [a.live, { model: "xiph/rnnoise" }]
        ] as const
      ) {
        const error = yield* Effect.flip(listJobs(caller, { ...request, limit: 2, cursor }))
        expect(error).toMatchObject({ _tag: "InvalidRequest", status: 400 })
      }
    }), { models: [RNNOISE, OTHER], runners: ["builtin"] }))
})

describe("getOutputLink", () => {
  it.effect("job_not_succeeded before success; a fresh link named after the input; output_expired after 7 days", () =>
    run(Effect.gen(function*() {
      const { live, test } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12))
      const job = yield* createDenoiseJob(live, { file: file.id })
      expect(yield* Effect.flip(getOutputLink(live, job.id))).toMatchObject({ _tag: "JobNotSucceeded", status: 409 })
      yield* claimNext("w1")
      expect((yield* Effect.flip(getOutputLink(live, job.id)))._tag).toBe("JobNotSucceeded")
      yield* TestClock.adjust("1 second")
      yield* succeedJob(job.id, "w1", OUTPUT)

      yield* TestClock.adjust("1 hour")
      const link = yield* getOutputLink(live, job.id)
      expect(link.filename).toBe("interview.denoised.mp3")
      expect(link.expiresAt).toBe(SECOND + HOUR + HOUR)
      expect(link.url).toMatch(/^memory:\/\//)
      expect(link.url).toContain(`expires=${link.expiresAt}`)
      expect(link.url).toContain("filename=interview.denoised.mp3")
      expect((yield* Effect.flip(getOutputLink(test, job.id)))._tag).toBe("NotFound")

      yield* TestClock.adjust(7 * DAY - HOUR - 1) // the last millisecond of the 7 days
      expect((yield* getOutputLink(live, job.id)).filename).toBe("interview.denoised.mp3")
      yield* TestClock.adjust(1)
      expect(yield* Effect.flip(getOutputLink(live, job.id))).toMatchObject({ _tag: "OutputExpired", status: 410 })

      const failedJob = yield* createDenoiseJob(live, { file: file.id })
      yield* claimNext("w1")
      yield* failJob(failedJob.id, "w1", { code: "internal_error", detail: "boom" })
      expect((yield* Effect.flip(getOutputLink(live, failedJob.id)))._tag).toBe("JobNotSucceeded")
    })))
})

describe("credit lots", () => {
  it.effect("a grant expires after 365 days with an expiry ledger entry", () =>
    run(Effect.gen(function*() {
      const { live, account } = yield* signup({ creditMicros: 10_000_000 })
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
      yield* TestClock.adjust(365 * DAY - 1)
      expect((yield* credits(live)).availableMicros).toBe(10_000_000)
      yield* TestClock.adjust(DAY + 1)
      expect(yield* credits(live)).toEqual({ balanceMicros: 0, reservedMicros: 0, availableMicros: 0 })
      const entries = yield* ledgerOf(account.id)
      expect(entries.map((e) => e.kind)).toEqual(["grant", "expiry"])
      expect(entries[1]).toMatchObject({ balanceDelta: -10_000_000, reservedDelta: 0, balanceAfter: 0, reservedAfter: 0 })
      // reading again writes nothing more
      yield* credits(live)
      expect(yield* ledgerOf(account.id)).toHaveLength(2)
    })))

  it.effect("credit held on a lot that expires stays held and is captured normally", () =>
    run(Effect.gen(function*() {
      const { live, account } = yield* signup({ creditMicros: 5_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      yield* TestClock.adjust(366 * DAY)
      expect(yield* credits(live)).toEqual({ balanceMicros: 1300, reservedMicros: 1300, availableMicros: 0 })
      yield* claimNext("w1")
      const done = yield* succeedJob(job.id, "w1", OUTPUT)
      expect(done.chargedMicros).toBe(1300)
      expect(yield* credits(live)).toEqual({ balanceMicros: 0, reservedMicros: 0, availableMicros: 0 })
      expect((yield* ledgerOf(account.id)).map((e) => [e.kind, e.balanceDelta])).toEqual([
        ["grant", 5_000], ["hold", 0], ["expiry", -3_700], ["capture", -1300]
      ])
    })))
})
