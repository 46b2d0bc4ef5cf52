/**
 * Denoise jobs: create (its rule order and its hold), cancel, list and the output link (core/services/jobs.ts),
 * end to end over the in-memory adapters (test/core/services/support.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { type ModelDefinition, RNNOISE } from "../../../core/domain/catalog.js"
import { changeAccountStatus, grantCredit } from "../../../core/services/accounts.js"
import type { Caller } from "../../../core/domain/caller.js"
import { authenticate } from "../../../core/services/caller.js"
import { completeFile } from "../../../core/services/files.js"
import { cancelJob, createDenoiseJob, getJob, getOutputLink, listJobs } from "../../../core/services/jobs.js"
import { claimNext, failJob, finishTestJob, succeedJob } from "../../../core/services/worker.js"
import { DAY, HOUR, SECOND } from "../../../core/time.js"
import { TEST_SAMPLE } from "../../support/env.js"
import { riff } from "../../support/riff-probe.js"
import { credits, ledgerForJob, ledgerOf, OUTPUT, readyFile, run, signup, uploaded } from "./support.js"

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
