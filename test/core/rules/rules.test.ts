/** The pure rules of core/rules and core/money: every transition and each error it can raise. */
import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { type ModelDefinition, makeCatalog, RNNOISE } from "../../../core/domain/catalog.js"
import { ALL_SCOPES, type AccountStatus, type FileStatus, type JobStatus } from "../../../core/domain/enums.js"
import { DEFAULT_LIMITS } from "../../../core/domain/limits.js"
import {
  AccountRecord, FileErrorRecord, FileRecord, JobOutputRecord, JobPricing, JobRecord
} from "../../../core/domain/records.js"
import { formatMicros } from "../../../core/money.js"
import { type AccountEvent, applyAccountEvent, checkCanCreateJob, checkKeyedAccess } from "../../../core/rules/accounts.js"
import {
  checkDeletable, checkNewFile, completeUpload, fileExpiresAt, markReady, markRejected, planUpload, requireReady
} from "../../../core/rules/files.js"
import * as JobRules from "../../../core/rules/jobs.js"
import { formatKey, hashKey, keyDisplay, parseKey, requireScope, resolveScopes } from "../../../core/rules/keys.js"
import { priceAudio } from "../../../core/rules/pricing.js"
import { DAY, HOUR } from "../../../core/time.js"
import { DEFAULT_JOB_OPTIONS } from "../../../core/domain/denoise-options.js"

const MiB = 1024 * 1024
const GiB = 1024 * MiB
const limits = DEFAULT_LIMITS

const left = <R, L>(either: Either.Either<R, L>): L => {
  if (Either.isRight(either)) throw new Error(`expected a Left, got Right(${JSON.stringify(either.right)})`)
  return either.left
}
const right = <R, L>(either: Either.Either<R, L>): R => {
  if (Either.isLeft(either)) throw new Error(`expected a Right, got Left(${String(either.left)})`)
  return either.right
}

// --- fixtures -------------------------------------------------------------------------------

const T0 = 1_700_000_000_000

const file = (fields: Partial<FileRecord> = {}) =>
  new FileRecord({
    id: "file_a",
    accountId: "acct_a",
    mode: "live",
    filename: "interview.wav",
    contentType: "audio/wav",
    sizeBytes: 1000,
    status: "uploading",
    durationSeconds: null,
    error: null,
    storageKey: "inputs/file_a",
    multipart: null,
    createdAt: T0,
    uploadExpiresAt: T0 + limits.uploadWindowMs,
    completedAt: null,
    readyAt: null,
    rejectedAt: null,
    ...fields
  })

const job = (fields: Partial<JobRecord> = {}) =>
  new JobRecord({
    id: "job_a",
    accountId: "acct_a",
    mode: "live",
    keyId: "key_a",
    task: "denoise",
    model: "xiph/rnnoise",
    status: "queued",
    progress: 0,
    fileId: "file_a",
    inputFilename: "interview.wav",
    inputStorageKey: "inputs/file_a",
    durationSeconds: 12,
    options: DEFAULT_JOB_OPTIONS,
    pricing: new JobPricing({ billableSeconds: 12, minimumApplied: false, unitPriceMicros: 100, pricingVersion: 1, estimatedMicros: 1200 }),
    chargedMicros: null,
    ledgerTxnId: null,
    output: null,
    error: null,
    attempts: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    createdAt: T0,
    startedAt: null,
    finishedAt: null,
    ...fields
  })

const account = (status: AccountStatus) =>
  new AccountRecord({
    id: "acct_a",
    name: "A",
    status,
    hasPurchased: false,
    termsVersion: "2026-01-01",
    trainingOptIn: false,
    createdAt: T0
  })

const output = new JobOutputRecord({ format: "mp3", bitrateKbps: 192, sizeBytes: 4000, storageKey: "outputs/job_a.mp3", deletedAt: null })

const LEASE = limits.jobLeaseMs

// --- files ----------------------------------------------------------------------------------

describe("files: planUpload", () => {
  it("PUT up to exactly 100 MiB", () => {
    expect(planUpload(100 * MiB, limits)).toEqual({ _tag: "Put" })
    expect(planUpload(1, limits)).toEqual({ _tag: "Put" })
  })

  it("multipart from 100 MiB + 1, in 64 MiB parts, ⌈size / 64 MiB⌉ of them", () => {
    expect(planUpload(100 * MiB + 1, limits)).toEqual({ _tag: "Multipart", partSize: 64 * MiB, partCount: 2 })
    expect(planUpload(128 * MiB, limits)).toEqual({ _tag: "Multipart", partSize: 64 * MiB, partCount: 2 })
    expect(planUpload(128 * MiB + 1, limits)).toEqual({ _tag: "Multipart", partSize: 64 * MiB, partCount: 3 })
    expect(planUpload(5 * GiB, limits)).toEqual({ _tag: "Multipart", partSize: 64 * MiB, partCount: 80 })
  })
})

describe("files: checkNewFile", () => {
  const ok = (contentType: string, sizeBytes: number, mode: "live" | "test" = "live") =>
    checkNewFile({ contentType, sizeBytes }, mode, limits)

  it("415 for a type that is not audio", () => {
    for (const type of ["text/plain", "image/png", "application/json", "video/avi", "audio", "audio/", ""]) {
      const error = left(ok(type, 10))
      expect(error._tag).toBe("UnsupportedMediaType")
      expect(error.status).toBe(415)
    }
  })

  it("accepts audio/*, with parameters, and the listed container types", () => {
    for (const type of [
      "audio/wav", "audio/wav; codecs=1", "AUDIO/MPEG", "audio/flac", "video/mp4", "video/quicktime", "video/webm",
      "video/x-matroska", "application/ogg", "application/ogg; codecs=opus"
    ]) {
      expect(Either.isRight(ok(type, 10)), type).toBe(true)
    }
  })

  it("media type is checked before size", () => {
    expect(left(ok("text/plain", 10 * GiB))._tag).toBe("UnsupportedMediaType")
  })

  it("test mode: 413 at testMaxFileBytes + 1; live accepts that size", () => {
    expect(Either.isRight(ok("audio/wav", limits.testMaxFileBytes, "test"))).toBe(true)
    const error = left(ok("audio/wav", limits.testMaxFileBytes + 1, "test"))
    expect(error._tag).toBe("FileTooLarge")
    expect(error.status).toBe(413)
    expect(Either.isRight(ok("audio/wav", limits.testMaxFileBytes + 1, "live"))).toBe(true)
  })

  it("live: 5 GiB is fine, 5 GiB + 1 is 413", () => {
    expect(limits.liveMaxFileBytes).toBe(5_368_709_120)
    expect(Either.isRight(ok("audio/wav", 5 * GiB))).toBe(true)
    expect(left(ok("audio/wav", 5 * GiB + 1))._tag).toBe("FileTooLarge")
  })
})

describe("files: completeUpload", () => {
  it("uploading within the window → validating, with completedAt", () => {
    const now = T0 + limits.uploadWindowMs - 1
    const next = right(completeUpload(file(), now))
    expect(next.status).toBe("validating")
    expect(next.completedAt).toBe(now)
  })

  it("uploading after the window → UploadExpired (409)", () => {
    const error = left(completeUpload(file(), T0 + limits.uploadWindowMs + 1))
    expect(error._tag).toBe("UploadExpired")
    expect(error.status).toBe(409)
    expect(left(completeUpload(file(), T0 + 7 * HOUR))._tag).toBe("UploadExpired")
  })

  it("a second complete returns the file unchanged, even after the window", () => {
    const validating = right(completeUpload(file(), T0 + 1))
    expect(right(completeUpload(validating, T0 + 2))).toBe(validating)
    expect(right(completeUpload(validating, T0 + DAY))).toBe(validating)
    const ready = markReady(validating, 3, T0 + 3)
    expect(right(completeUpload(ready, T0 + 4))).toBe(ready)
    const rejected = markRejected(validating, "bad", T0 + 3)
    expect(right(completeUpload(rejected, T0 + 4))).toBe(rejected)
  })
})

describe("files: markReady / markRejected", () => {
  const validating = file({ status: "validating", completedAt: T0 + 1 })

  it("validating → ready with the duration and ready_at", () => {
    const ready = markReady(validating, 12.5, T0 + 5)
    expect(ready.status).toBe("ready")
    expect(ready.durationSeconds).toBe(12.5)
    expect(ready.readyAt).toBe(T0 + 5)
    expect(ready.error).toBeNull()
  })

  it("validating → rejected with invalid_audio", () => {
    const rejected = markRejected(validating, "not audio", T0 + 5)
    expect(rejected.status).toBe("rejected")
    expect(rejected.rejectedAt).toBe(T0 + 5)
    expect(rejected.error).toEqual(new FileErrorRecord({ code: "invalid_audio", message: "not audio" }))
  })

  it("only from validating: other states are returned unchanged", () => {
    const others = [
      file(),
      markReady(validating, 3, T0 + 5),
      markRejected(validating, "bad", T0 + 5)
    ]
    for (const f of others) {
      expect(markReady(f, 99, T0 + 10)).toBe(f)
      expect(markRejected(f, "late", T0 + 10)).toBe(f)
    }
    // a rejected file never becomes ready
    expect(markReady(others[2]!, 1, T0 + 10).status).toBe("rejected")
  })
})

describe("files: fileExpiresAt", () => {
  it("for each status", () => {
    expect(fileExpiresAt(file(), limits)).toBe(T0 + 6 * HOUR)
    expect(fileExpiresAt(file({ status: "validating", completedAt: T0 + 1 }), limits)).toBeNull()
    expect(fileExpiresAt(file({ status: "ready", readyAt: T0 + 10, durationSeconds: 1 }), limits)).toBe(T0 + 10 + 7 * DAY)
    expect(fileExpiresAt(file({ status: "rejected", rejectedAt: T0 + 10 }), limits)).toBe(T0 + 10 + DAY)
  })
})

describe("files: requireReady", () => {
  it("passes only a ready file; 409 file_not_ready otherwise", () => {
    const ready = file({ status: "ready", readyAt: T0, durationSeconds: 1 })
    expect(right(requireReady(ready))).toBe(ready)
    for (const status of ["uploading", "validating", "rejected"] as const satisfies ReadonlyArray<FileStatus>) {
      const error = left(requireReady(file({ status })))
      expect(error._tag).toBe("FileNotReady")
      expect(error.status).toBe(409)
      expect(error.detail).toContain(status === "rejected" ? "rejected" : `still ${status}`)
    }
    const rejected = file({ status: "rejected", error: new FileErrorRecord({ code: "invalid_audio", message: "no audio stream" }) })
    expect(left(requireReady(rejected)).detail).toContain("no audio stream")
  })
})

describe("files: checkDeletable", () => {
  it("409 file_in_use while active jobs use it", () => {
    expect(Either.isRight(checkDeletable(file(), 0))).toBe(true)
    const error = left(checkDeletable(file(), 2))
    expect(error._tag).toBe("FileInUse")
    expect(error.status).toBe(409)
  })
})

// --- jobs -----------------------------------------------------------------------------------

describe("jobs: cancel", () => {
  it("queued → canceled", () => {
    const canceled = right(JobRules.cancel(job(), T0 + 5))
    expect(canceled.status).toBe("canceled")
    expect(canceled.finishedAt).toBe(T0 + 5)
  })

  it("any other status → JobNotCancelable (409)", () => {
    for (const status of ["processing", "succeeded", "failed", "canceled"] as const satisfies ReadonlyArray<JobStatus>) {
      const error = left(JobRules.cancel(job({ status }), T0))
      expect(error._tag).toBe("JobNotCancelable")
      expect(error.status).toBe(409)
    }
    expect(left(JobRules.cancel(job({ status: "processing" }), T0)).detail).toContain("started")
  })
})

describe("jobs: claim", () => {
  it("queued → processing, attempts + 1, under a lease", () => {
    const claimed = right(JobRules.claim(job(), T0 + 1, "w1", LEASE))
    expect(claimed.status).toBe("processing")
    expect(claimed.attempts).toBe(1)
    expect(claimed.leaseOwner).toBe("w1")
    expect(claimed.leaseExpiresAt).toBe(T0 + 1 + LEASE)
    expect(claimed.startedAt).toBe(T0 + 1)
    expect(claimed.progress).toBe(0)
  })

  it("only from queued", () => {
    for (const status of ["processing", "succeeded", "failed", "canceled"] as const satisfies ReadonlyArray<JobStatus>) {
      const error = left(JobRules.claim(job({ status }), T0, "w1", LEASE))
      expect(error._tag).toBe("JobTransitionRefused")
      expect(error.from).toBe(status)
    }
  })
})

describe("jobs: heartbeat", () => {
  const processing = right(JobRules.claim(job(), T0, "w1", LEASE))

  it("renews the lease for the owner", () => {
    const renewed = right(JobRules.heartbeat(processing, "w1", T0 + 10_000, LEASE))
    expect(renewed.leaseExpiresAt).toBe(T0 + 10_000 + LEASE)
    expect(renewed.status).toBe("processing")
  })

  it("refused for another worker and outside processing", () => {
    expect(left(JobRules.heartbeat(processing, "w2", T0 + 1, LEASE))._tag).toBe("JobTransitionRefused")
    expect(left(JobRules.heartbeat(job(), "w1", T0 + 1, LEASE))._tag).toBe("JobTransitionRefused")
  })

  it("progress only rises and stays below 1 until success", () => {
    const a = right(JobRules.heartbeat(processing, "w1", T0 + 1, LEASE, 0.5))
    expect(a.progress).toBe(0.5)
    const b = right(JobRules.heartbeat(a, "w1", T0 + 2, LEASE, 0.2))
    expect(b.progress).toBe(0.5)
    const c = right(JobRules.heartbeat(b, "w1", T0 + 3, LEASE))
    expect(c.progress).toBe(0.5)
    const d = right(JobRules.heartbeat(c, "w1", T0 + 4, LEASE, 1))
    expect(d.progress).toBeGreaterThan(0.5)
    expect(d.progress).toBeLessThan(1)
    const done = right(JobRules.succeed(d, "w1", { output, chargedMicros: 1200, ledgerTxnId: "txn_a", now: T0 + 5 }))
    expect(done.progress).toBe(1)
  })
})

describe("jobs: succeed / fail", () => {
  const processing = right(JobRules.claim(job(), T0, "w1", LEASE))

  it("succeed by the lease owner while processing", () => {
    const done = right(JobRules.succeed(processing, "w1", { output, chargedMicros: 1200, ledgerTxnId: "txn_a", now: T0 + 9 }))
    expect(done.status).toBe("succeeded")
    expect(done.chargedMicros).toBe(1200)
    expect(done.ledgerTxnId).toBe("txn_a")
    expect(done.output).toEqual(output)
    expect(done.finishedAt).toBe(T0 + 9)
    expect(done.leaseOwner).toBeNull()
  })

  it("fail by the lease owner while processing, no charge; the code's fixed public message", () => {
    const failed = right(JobRules.fail(processing, "w1", "provider_error", T0 + 9))
    expect(failed.status).toBe("failed")
    expect(failed.error).toEqual({ code: "provider_error", message: JobRules.JOB_ERROR_MESSAGES.provider_error })
    expect(failed.chargedMicros).toBeNull()
    expect(failed.finishedAt).toBe(T0 + 9)
  })

  it("refused for another worker or outside processing", () => {
    const result = { output, chargedMicros: 0, ledgerTxnId: null, now: T0 }
    const err = "internal_error" as const
    expect(left(JobRules.succeed(processing, "w2", result))._tag).toBe("JobTransitionRefused")
    expect(left(JobRules.fail(processing, "w2", err, T0))._tag).toBe("JobTransitionRefused")
    const done = right(JobRules.succeed(processing, "w1", result))
    for (const other of [job(), done, right(JobRules.cancel(job(), T0))]) {
      expect(left(JobRules.succeed(other, "w1", result))._tag).toBe("JobTransitionRefused")
      expect(left(JobRules.fail(other, "w1", err, T0))._tag).toBe("JobTransitionRefused")
    }
  })
})

describe("jobs: lapse", () => {
  it("back to queued while attempts < 3; failed internal_error on the 3rd", () => {
    let current = job()
    let now = T0
    for (let attempt = 1; attempt <= 3; attempt++) {
      current = right(JobRules.claim(current, now, `w${attempt}`, LEASE))
      expect(current.attempts).toBe(attempt)
      // not lapsed while the lease runs (even at its last instant)
      expect(left(JobRules.lapse(current, now + LEASE, 3))._tag).toBe("JobTransitionRefused")
      now += LEASE + 1
      current = right(JobRules.lapse(current, now, 3))
      if (attempt < 3) {
        expect(current.status).toBe("queued")
        expect(current.progress).toBe(0)
        expect(current.leaseOwner).toBeNull()
      }
    }
    expect(current.status).toBe("failed")
    expect(current.error?.code).toBe("internal_error")
    expect(current.chargedMicros).toBeNull()
    expect(current.finishedAt).toBe(now)
  })

  it("refused outside processing", () => {
    expect(left(JobRules.lapse(job(), T0 + DAY, 3))._tag).toBe("JobTransitionRefused")
  })
})

describe("jobs: handBack", () => {
  it("the lease owner puts the job back in the queue; that claim is not counted", () => {
    const claimed = right(JobRules.heartbeat(right(JobRules.claim(job(), T0, "w1", LEASE)), "w1", T0 + 5, LEASE, 0.4))
    const back = right(JobRules.handBack(claimed, "w1"))
    expect(back).toMatchObject({ status: "queued", attempts: 0, progress: 0, leaseOwner: null, leaseExpiresAt: null })
    // three hand-backs in a row never fail the job: only lapsed leases spend attempts
    let current = back
    for (let i = 0; i < 5; i++) current = right(JobRules.handBack(right(JobRules.claim(current, T0, "w1", LEASE)), "w1"))
    expect(current).toMatchObject({ status: "queued", attempts: 0 })
  })

  it("refused for another worker and outside processing", () => {
    const claimed = right(JobRules.claim(job(), T0, "w1", LEASE))
    expect(left(JobRules.handBack(claimed, "w2"))._tag).toBe("JobTransitionRefused")
    const done = right(JobRules.succeed(claimed, "w1", { output, chargedMicros: 0, ledgerTxnId: null, now: T0 }))
    for (const other of [job(), done, right(JobRules.cancel(job(), T0))]) {
      expect(left(JobRules.handBack(other, "w1"))._tag).toBe("JobTransitionRefused")
    }
  })
})

describe("jobs: isTerminal / isActive", () => {
  it("classifies every status", () => {
    expect(["queued", "processing", "succeeded", "failed", "canceled"].map((s) => JobRules.isActive(s as JobStatus)))
      .toEqual([true, true, false, false, false])
    expect(["queued", "processing", "succeeded", "failed", "canceled"].map((s) => JobRules.isTerminal(s as JobStatus)))
      .toEqual([false, false, true, true, true])
  })
})

// --- keys -----------------------------------------------------------------------------------

describe("keys", () => {
  const secret = "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst" // 52 base32 characters

  it("formatKey / parseKey round-trip", () => {
    expect(secret).toHaveLength(52)
    for (const mode of ["live", "test"] as const) {
      const key = formatKey(mode, secret)
      expect(key).toBe(`hush_${mode}_${secret}`)
      expect(parseKey(key)).toEqual({ mode, secret })
    }
  })

  it("malformed keys parse to null", () => {
    for (const key of [
      "",
      "hush_live_",
      `hush_prod_${secret}`,
      `sk_live_${secret}`,
      `hush_live_${secret.slice(1)}`,
      `hush_live_${secret}a`,
      `hush_live_${secret.toUpperCase()}`,
      `hush_live_${secret.slice(0, 51)}1`,
      `hush_live_${secret.slice(0, 51)}8`,
      ` hush_live_${secret}`,
      `hush_live_${secret} `,
      `HUSH_LIVE_${secret}`
    ]) {
      expect(parseKey(key), key).toBeNull()
    }
  })

  it("hashKey is lowercase hex SHA-256 of the whole key", () => {
    const key = formatKey("live", secret)
    expect(hashKey(key)).toBe(createHash("sha256").update(key, "utf8").digest("hex"))
    expect(hashKey("hush_test_x")).toBe(createHash("sha256").update("hush_test_x").digest("hex"))
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/)
    // known vector
    expect(hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })

  it("keyDisplay: prefix + first 4, last 4", () => {
    expect(keyDisplay("live", secret)).toEqual({ prefixDisplay: "hush_live_abcd", lastFour: "qrst" })
    expect(keyDisplay("test", secret)).toEqual({ prefixDisplay: "hush_test_abcd", lastFour: "qrst" })
  })

  it("resolveScopes: null or absent → all four; otherwise what was asked, in canonical order", () => {
    expect(resolveScopes(null)).toEqual(["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"])
    expect(resolveScopes(undefined)).toEqual(ALL_SCOPES)
    expect(resolveScopes(["jobs:read"])).toEqual(["jobs:read"])
    expect(resolveScopes(["credits:read", "files:write", "credits:read"])).toEqual(["files:write", "credits:read"])
  })

  it("requireScope passes with any one of the scopes; the error names what is missing", () => {
    expect(Either.isRight(requireScope(["jobs:read"], ["jobs:read"]))).toBe(true)
    expect(Either.isRight(requireScope(["jobs:read"], ["files:write", "jobs:read"]))).toBe(true)
    const one = left(requireScope(["jobs:read"], ["files:write"]))
    expect(one._tag).toBe("InsufficientScope")
    expect(one.status).toBe(403)
    expect(one.detail).toContain("files:write")
    const two = left(requireScope(["credits:read"], ["files:write", "jobs:read"]))
    expect(two.detail).toContain("files:write")
    expect(two.detail).toContain("jobs:read")
    expect(left(requireScope([], ["credits:read"])).detail).toContain("credits:read")
  })
})

// --- accounts -------------------------------------------------------------------------------

describe("accounts", () => {
  it("frozen blocks keyed access; active and suspended pass", () => {
    const error = left(checkKeyedAccess(account("frozen")))
    expect(error._tag).toBe("AccountFrozen")
    expect(error.status).toBe(403)
    expect(Either.isRight(checkKeyedAccess(account("active")))).toBe(true)
    expect(Either.isRight(checkKeyedAccess(account("suspended")))).toBe(true)
  })

  it("suspended blocks new jobs; active passes", () => {
    const error = left(checkCanCreateJob(account("suspended")))
    expect(error._tag).toBe("AccountSuspended")
    expect(error.status).toBe(403)
    expect(Either.isRight(checkCanCreateJob(account("active")))).toBe(true)
  })

  it("each event's move", () => {
    const move = (from: AccountStatus, event: AccountEvent) => applyAccountEvent(account(from), event).status
    expect(move("active", "suspend")).toBe("suspended")
    expect(move("suspended", "suspend")).toBe("suspended")
    expect(move("suspended", "unsuspend")).toBe("active")
    expect(move("active", "unsuspend")).toBe("active")
    expect(move("frozen", "unsuspend")).toBe("frozen")
    expect(move("active", "dispute_opened")).toBe("frozen")
    expect(move("frozen", "dispute_won")).toBe("active")
    expect(move("active", "dispute_won")).toBe("active")
    expect(move("suspended", "dispute_won")).toBe("suspended")
    expect(move("frozen", "dispute_lost")).toBe("suspended")
    expect(move("active", "dispute_lost")).toBe("active")
    // the account is otherwise unchanged
    const next = applyAccountEvent(account("active"), "suspend")
    expect({ ...next, status: "active" }).toEqual({ ...account("active") })
  })
})

// --- pricing --------------------------------------------------------------------------------

describe("pricing", () => {
  const model = makeCatalog([RNNOISE], ["builtin"]).models[0]!

  it("min_units applies below the minimum, not at it", () => {
    expect(priceAudio(model, 9)).toMatchObject({ billableSeconds: 10, minimumApplied: true, costMicros: 1000 })
    expect(priceAudio(model, 0.2)).toMatchObject({ billableSeconds: 10, minimumApplied: true, costMicros: 1000 })
    expect(priceAudio(model, 10)).toMatchObject({ billableSeconds: 10, minimumApplied: false, costMicros: 1000 })
    // 9.5 s rounds up to 10: the minimum equals the measure, so it was not applied
    expect(priceAudio(model, 9.5)).toMatchObject({ billableSeconds: 10, minimumApplied: false, costMicros: 1000 })
    expect(priceAudio(model, 11)).toMatchObject({ billableSeconds: 11, minimumApplied: false, costMicros: 1100 })
  })

  it("ceil of fractional seconds, exact integer cost", () => {
    expect(priceAudio(model, 10.001)).toEqual({
      billableSeconds: 11, minimumApplied: false, unitPriceMicros: 100, pricingVersion: 1, costMicros: 1100
    })
    expect(priceAudio(model, 12.5).costMicros).toBe(1300)
    expect(priceAudio(model, 21_599.2).costMicros).toBe(2_160_000)
    const odd: ModelDefinition = {
      ...RNNOISE, id: "x/odd", pricing: { unit: "second", unitPriceMicros: 7, minUnits: 1, pricingVersion: 3 }
    }
    const price = priceAudio({ ...odd, status: "live" }, 3.0000001)
    expect(price).toEqual({ billableSeconds: 4, minimumApplied: false, unitPriceMicros: 7, pricingVersion: 3, costMicros: 28 })
    expect(Number.isInteger(price.costMicros)).toBe(true)
  })
})

// --- money ----------------------------------------------------------------------------------

describe("formatMicros", () => {
  it("the examples of decisions.md", () => {
    expect(formatMicros(10_000_000)).toBe("$10.00")
    expect(formatMicros(1_230)).toBe("$0.00123")
    expect(formatMicros(12_345_678)).toBe("$12.345678")
    expect(formatMicros(0)).toBe("$0.00")
    expect(formatMicros(-500_000)).toBe("-$0.50")
  })

  it("more amounts", () => {
    expect(formatMicros(1)).toBe("$0.000001")
    expect(formatMicros(100)).toBe("$0.0001")
    expect(formatMicros(1_000_000)).toBe("$1.00")
    expect(formatMicros(1_500_000)).toBe("$1.50")
    expect(formatMicros(-1_230)).toBe("-$0.00123")
    expect(() => formatMicros(0.5)).toThrow(RangeError)
  })
})
