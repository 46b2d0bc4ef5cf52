/** The repository contract, FileRepo (see test/contracts/repositories.ts). */
import { describe, expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { FileRepo } from "../../../core/ports/repositories.js"
import { DAY, fileError, HOUR, makeFile, multipart, T0 } from "../fixtures.js"
import { type ContractTests, expectNone, expectSome } from "./support.js"

export const fileRepoContract = ({ test }: ContractTests) => {
  describe("FileRepo", () => {
    test("insert then get returns the record, nested error and multipart included", Effect.gen(function*() {
      const files = yield* FileRepo
      const uploading = makeFile({
        accountId: "acct_a", sizeBytes: 5_368_709_120, multipart: multipart(), filename: "Réunion – été.wav",
        contentType: "audio/wav; codecs=1", uploadExpiresAt: T0 + 6 * HOUR
      })
      const rejected = makeFile({
        accountId: "acct_a", mode: "test", status: "rejected", error: fileError(),
        completedAt: T0 + 10, rejectedAt: T0 + 20
      })
      const ready = makeFile({
        accountId: "acct_a", status: "ready", durationSeconds: 61.25, completedAt: T0 + 10, readyAt: T0 + 30,
        contentType: "video/mp4"
      })
      for (const f of [uploading, rejected, ready]) yield* files.insert(f)
      expect(expectSome(yield* files.get(uploading.id))).toEqual(uploading)
      expect(expectSome(yield* files.get(rejected.id))).toEqual(rejected)
      expect(expectSome(yield* files.get(ready.id))).toEqual(ready)
      expectNone(yield* files.get("file_unknown"))
    }))

    test("insertNew writes nothing and answers false when a file has the id", Effect.gen(function*() {
      const files = yield* FileRepo
      const first = makeFile({ accountId: "acct_a", mode: "test", status: "uploading" })
      expect(yield* files.insertNew(first)).toBe(true)
      expect(expectSome(yield* files.get(first.id))).toEqual(first)
      expect(yield* files.insertNew(makeFile({ ...first, filename: "another.wav", sizeBytes: first.sizeBytes + 1 }))).toBe(false)
      expect(expectSome(yield* files.get(first.id))).toEqual(first)
    }))

    test("update replaces the stored fields", Effect.gen(function*() {
      const files = yield* FileRepo
      const f = makeFile({ accountId: "acct_a", multipart: multipart() })
      const other = makeFile({ accountId: "acct_a" })
      yield* files.insert(f)
      yield* files.insert(other)
      const validating = makeFile({ ...f, status: "validating", multipart: null, completedAt: T0 + HOUR })
      yield* files.update(validating)
      expect(expectSome(yield* files.get(f.id))).toEqual(validating)
      const rejected = makeFile({
        ...validating, status: "rejected", error: fileError({ message: "not audio" }), rejectedAt: T0 + 2 * HOUR
      })
      yield* files.update(rejected)
      expect(expectSome(yield* files.get(f.id))).toEqual(rejected)
      expect(expectSome(yield* files.get(other.id))).toEqual(other)
    }))

    test("delete removes that file only", Effect.gen(function*() {
      const files = yield* FileRepo
      const a = makeFile({ accountId: "acct_a" })
      const b = makeFile({ accountId: "acct_a" })
      yield* files.insert(a)
      yield* files.insert(b)
      yield* files.delete(a.id)
      expectNone(yield* files.get(a.id))
      expect(expectSome(yield* files.get(b.id))).toEqual(b)
      expect(yield* files.retainedBytes("acct_a", "live")).toBe(b.sizeBytes)
      yield* files.delete("file_unknown") // deleting what is not there is not an error
      expect(expectSome(yield* files.get(b.id))).toEqual(b)
    }))

    test("countOpenUploads counts the account+mode's uploading files whose window is open", Effect.gen(function*() {
      const files = yield* FileRepo
      const now = T0 + HOUR
      const open = [
        makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: T0 + 6 * HOUR }),
        makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: now + 1 })
      ]
      const notCounted = [
        makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: now }), // window ends now
        makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: T0 }),
        makeFile({ accountId: "acct_a", status: "validating", uploadExpiresAt: T0 + 6 * HOUR, completedAt: T0 }),
        makeFile({ accountId: "acct_a", status: "ready", uploadExpiresAt: T0 + 6 * HOUR }),
        makeFile({ accountId: "acct_a", mode: "test", status: "uploading", uploadExpiresAt: T0 + 6 * HOUR }),
        makeFile({ accountId: "acct_b", status: "uploading", uploadExpiresAt: T0 + 6 * HOUR })
      ]
      for (const f of [...notCounted, ...open]) yield* files.insert(f)
      expect(yield* files.countOpenUploads("acct_a", "live", now)).toBe(2)
      expect(yield* files.countOpenUploads("acct_a", "test", now)).toBe(1)
      expect(yield* files.countOpenUploads("acct_b", "live", now)).toBe(1)
      expect(yield* files.countOpenUploads("acct_a", "live", now + 1)).toBe(1)
      expect(yield* files.countOpenUploads("acct_a", "live", T0 - 1)).toBe(4)
      expect(yield* files.countOpenUploads("acct_none", "live", now)).toBe(0)
    }))

    test("retainedBytes sums declared sizes of the account+mode's files that are not rejected", Effect.gen(function*() {
      const files = yield* FileRepo
      const gib = 1_073_741_824
      for (
        const f of [
          makeFile({ accountId: "acct_a", status: "uploading", sizeBytes: 5 * gib }),
          makeFile({ accountId: "acct_a", status: "ready", sizeBytes: 3 * gib, readyAt: T0 }),
          makeFile({ accountId: "acct_a", status: "validating", sizeBytes: 1, completedAt: T0 }),
          makeFile({ accountId: "acct_a", status: "rejected", sizeBytes: 7, error: fileError(), rejectedAt: T0 }),
          makeFile({ accountId: "acct_a", mode: "test", status: "ready", sizeBytes: 11 }),
          makeFile({ accountId: "acct_b", status: "ready", sizeBytes: 13 })
        ]
      ) yield* files.insert(f)
      // above 2^32: a 32-bit column or sum would overflow, and a driver's bigint/numeric must become a number
      expect(yield* files.retainedBytes("acct_a", "live")).toBe(8 * gib + 1)
      expect(yield* files.retainedBytes("acct_a", "test")).toBe(11)
      expect(yield* files.retainedBytes("acct_b", "live")).toBe(13)
      expect(yield* files.retainedBytes("acct_none", "live")).toBe(0)
    }))

    test("validationsSince counts completes at or after `since` and gives the earliest", Effect.gen(function*() {
      const files = yield* FileRepo
      for (
        const f of [
          makeFile({ accountId: "acct_a", status: "ready", completedAt: T0, readyAt: T0 }),
          makeFile({ accountId: "acct_a", status: "ready", completedAt: T0 + HOUR, readyAt: T0 + HOUR }),
          makeFile({
            accountId: "acct_a", status: "rejected", completedAt: T0 + HOUR + 30 * 60_000, error: fileError(),
            rejectedAt: T0 + 2 * HOUR
          }),
          makeFile({ accountId: "acct_a", status: "validating", completedAt: T0 + 2 * HOUR }),
          makeFile({ accountId: "acct_a", status: "uploading", completedAt: null }),
          makeFile({ accountId: "acct_a", mode: "test", status: "validating", completedAt: T0 + HOUR + 5 }),
          makeFile({ accountId: "acct_b", status: "validating", completedAt: T0 + HOUR + 10 })
        ]
      ) yield* files.insert(f)
      expect(yield* files.validationsSince("acct_a", "live", T0 + HOUR)).toEqual({ count: 3, earliest: T0 + HOUR })
      expect(yield* files.validationsSince("acct_a", "live", T0 + HOUR + 1))
        .toEqual({ count: 2, earliest: T0 + HOUR + 30 * 60_000 })
      expect(yield* files.validationsSince("acct_a", "live", T0 - DAY)).toEqual({ count: 4, earliest: T0 })
      expect(yield* files.validationsSince("acct_a", "live", T0 + 3 * HOUR)).toEqual({ count: 0, earliest: null })
      expect(yield* files.validationsSince("acct_a", "test", T0)).toEqual({ count: 1, earliest: T0 + HOUR + 5 })
      expect(yield* files.validationsSince("acct_none", "live", T0)).toEqual({ count: 0, earliest: null })
    }))

    test("a deleted file's validation keeps counting; one never completed leaves no trace", Effect.gen(function*() {
      const files = yield* FileRepo
      const validated = makeFile({ accountId: "acct_a", status: "ready", completedAt: T0 + HOUR, readyAt: T0 + HOUR })
      const other = makeFile({ accountId: "acct_a", mode: "test", status: "rejected", completedAt: T0 + HOUR + 1, error: fileError(), rejectedAt: T0 + HOUR + 2 })
      const abandoned = makeFile({ accountId: "acct_a", status: "uploading", completedAt: null })
      for (const f of [validated, other, abandoned]) yield* files.insert(f)
      for (const f of [validated, other, abandoned]) yield* files.delete(f.id)
      for (const f of [validated, other, abandoned]) expect(yield* files.get(f.id)).toEqual(Option.none())
      expect(yield* files.validationsSince("acct_a", "live", T0)).toEqual({ count: 1, earliest: T0 + HOUR })
      expect(yield* files.validationsSince("acct_a", "test", T0)).toEqual({ count: 1, earliest: T0 + HOUR + 1 })
      expect(yield* files.validationsSince("acct_a", "live", T0 + HOUR + 1)).toEqual({ count: 0, earliest: null })
      expect(yield* files.validationsSince("acct_b", "live", T0)).toEqual({ count: 0, earliest: null })
      // a later deletion may forget completions older than the quota's window, never newer ones
      const later = makeFile({ accountId: "acct_a", status: "ready", completedAt: T0 + 3 * HOUR, readyAt: T0 + 3 * HOUR })
      yield* files.insert(later)
      yield* files.delete(later.id)
      expect(yield* files.validationsSince("acct_a", "live", T0 + 2 * HOUR)).toEqual({ count: 1, earliest: T0 + 3 * HOUR })
    }))
  })
}
