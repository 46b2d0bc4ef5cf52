/** The repository contract, IdempotencyRepo (see test/contracts/repositories.ts). */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { IdempotencyRecord } from "../../../core/domain/records.js"
import { IdempotencyRepo } from "../../../core/ports/repositories.js"
import { DAY, HOUR, makeIdempotency, T0 } from "../fixtures.js"
import { type ContractTests, expectNone, expectSome } from "./support.js"

export const idempotencyRepoContract = ({ test, raceTest }: ContractTests) => {
  describe("IdempotencyRepo", () => {
    const response = {
      status: 201,
      body: JSON.stringify({ id: "job_1", object: "job", note: "ünïcödé" }),
      headers: { "content-type": "application/json", location: "/v1/jobs/job_1" }
    }

    test("begin starts once; a second begin sees the running record", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      const first = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
      expect(yield* idem.begin(first)).toEqual({ _tag: "Started" })
      const again = yield* idem.begin(makeIdempotency({
        accountId: "acct_a", mode: "live", key: "k1", fingerprint: "other-body", path: "/v1/files",
        createdAt: T0 + HOUR, expiresAt: T0 + HOUR + DAY
      }))
      expect(again._tag).toBe("Existing")
      if (again._tag === "Existing") expect(again.record).toEqual(first)
    }))

    test("a running record begun before takeOverRunningBefore is taken over; a finished one, or a newer one, is not", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      const killed = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
      expect(yield* idem.begin(killed)).toEqual({ _tag: "Started" })
      const retry = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1", fingerprint: "retry", createdAt: T0 + HOUR / 20, expiresAt: T0 + DAY })
      // still young: the retry waits
      expect((yield* idem.begin(retry, { takeOverRunningBefore: T0 }))._tag).toBe("Existing")
      // stale: the retry takes it over, and is now the running record
      expect(yield* idem.begin(retry, { takeOverRunningBefore: T0 + 1 })).toEqual({ _tag: "Started" })
      const seen = yield* idem.begin(makeIdempotency({ ...retry, fingerprint: "probe" }), { takeOverRunningBefore: T0 + 1 })
      expect(seen).toEqual({ _tag: "Existing", record: retry })
      // a finished record is never taken over
      yield* idem.finish("acct_a", "live", "k1", response)
      const later = yield* idem.begin(makeIdempotency({ ...retry, fingerprint: "late", createdAt: T0 + HOUR }), { takeOverRunningBefore: T0 + HOUR })
      expect(later._tag).toBe("Existing")
      if (later._tag === "Existing") expect(later.record).toMatchObject({ state: "done", fingerprint: "retry" })
    }))

    test("keys are scoped to account and mode", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      const base = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
      expect((yield* idem.begin(base))._tag).toBe("Started")
      const otherMode = makeIdempotency({ ...base, mode: "test", fingerprint: "t" })
      const otherAccount = makeIdempotency({ ...base, accountId: "acct_b", fingerprint: "b" })
      const otherKey = makeIdempotency({ ...base, key: "k2", fingerprint: "k" })
      expect((yield* idem.begin(otherMode))._tag).toBe("Started")
      expect((yield* idem.begin(otherAccount))._tag).toBe("Started")
      expect((yield* idem.begin(otherKey))._tag).toBe("Started")
      // each scope keeps its own record
      for (const r of [base, otherMode, otherAccount, otherKey]) {
        const seen = yield* idem.begin(makeIdempotency({ ...r, fingerprint: "probe", createdAt: T0 + 1 }))
        expect(seen).toEqual({ _tag: "Existing", record: r })
      }
    }))

    test("finish stores the response; begin then replays it", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      const first = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
      const sibling = makeIdempotency({ accountId: "acct_a", mode: "test", key: "k1" })
      yield* idem.begin(first)
      yield* idem.begin(sibling)
      yield* idem.finish("acct_a", "live", "k1", response)
      const seen = yield* idem.begin(makeIdempotency({ ...first, fingerprint: "probe", createdAt: T0 + 1 }))
      expect(seen).toEqual({
        _tag: "Existing",
        record: new IdempotencyRecord({
          ...first, state: "done", responseStatus: 201, responseBody: response.body, responseHeaders: response.headers
        })
      })
      // the same key in the other mode is untouched
      expect(yield* idem.begin(makeIdempotency({ ...sibling, fingerprint: "probe", createdAt: T0 + 1 })))
        .toEqual({ _tag: "Existing", record: sibling })
    }))

    test("abandon forgets the running record so the next begin starts afresh", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      const first = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
      const sibling = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k2" })
      yield* idem.begin(first)
      yield* idem.begin(sibling)
      yield* idem.abandon("acct_a", "live", "k1")
      const retry = makeIdempotency({ ...first, fingerprint: "retry", createdAt: T0 + 5 })
      expect(yield* idem.begin(retry)).toEqual({ _tag: "Started" })
      expect(yield* idem.begin(makeIdempotency({ ...first, fingerprint: "probe", createdAt: T0 + 6 })))
        .toEqual({ _tag: "Existing", record: retry })
      expect(yield* idem.begin(makeIdempotency({ ...sibling, fingerprint: "probe", createdAt: T0 + 6 })))
        .toEqual({ _tag: "Existing", record: sibling })
    }))

    test("an expired record no longer counts: begin starts again", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      const first = makeIdempotency({ accountId: "acct_a", key: "k1", createdAt: T0, expiresAt: T0 + DAY })
      yield* idem.begin(first)
      yield* idem.finish("acct_a", "live", "k1", response)
      // one millisecond before expiry it still replays
      const early = yield* idem.begin(makeIdempotency({ ...first, fingerprint: "x", createdAt: T0 + DAY - 1 }))
      expect(early._tag).toBe("Existing")
      // at expiry it starts afresh, and the new record is the one kept
      const fresh = makeIdempotency({ ...first, fingerprint: "new", createdAt: T0 + DAY, expiresAt: T0 + 2 * DAY })
      expect(yield* idem.begin(fresh)).toEqual({ _tag: "Started" })
      expect(yield* idem.begin(makeIdempotency({ ...first, fingerprint: "y", createdAt: T0 + DAY + 1 })))
        .toEqual({ _tag: "Existing", record: fresh })
    }))

    test("purgeExpired deletes records expired at `now`, in batches, and no others", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      for (const key of ["old1", "old2", "old3"]) yield* idem.begin(makeIdempotency({ accountId: "acct_a", key, createdAt: T0, expiresAt: T0 + DAY }))
      const kept = makeIdempotency({ accountId: "acct_a", key: "young", createdAt: T0 + HOUR, expiresAt: T0 + HOUR + DAY })
      yield* idem.begin(kept)
      expect(yield* idem.purgeExpired(T0 + DAY - 1, 10)).toBe(0)
      expect(yield* idem.purgeExpired(T0 + DAY, 2)).toBe(2)
      expect(yield* idem.purgeExpired(T0 + DAY, 2)).toBe(1)
      expect(yield* idem.purgeExpired(T0 + DAY, 2)).toBe(0)
      for (const key of ["old1", "old2", "old3"]) expectNone(yield* idem.get("acct_a", "live", key))
      expect(expectSome(yield* idem.get("acct_a", "live", "young"))).toEqual(kept)
    }))

    raceTest("concurrent begins of one key: exactly one starts", Effect.gen(function*() {
      const idem = yield* IdempotencyRepo
      const results = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) =>
          idem.begin(makeIdempotency({ accountId: "acct_a", key: "race", fingerprint: `f${i}` }))),
        { concurrency: "unbounded" }
      )
      expect(results.filter((r) => r._tag === "Started")).toHaveLength(1)
      const winner = results.findIndex((r) => r._tag === "Started")
      for (const r of results) {
        if (r._tag === "Existing") expect(r.record.fingerprint).toBe(`f${winner}`)
      }
    }))
  })
}
