/** The repository contract, KeyRepo (see test/contracts/repositories.ts). */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { AccountRepo, KeyRepo } from "../../../core/ports/repositories.js"
import { HOUR, makeAccount, makeKey, SECOND, sha256Hex, T0 } from "../fixtures.js"
import { type ContractTests, expectNone, expectSome } from "./support.js"

export const keyRepoContract = ({ test }: ContractTests) => {
  describe("KeyRepo", () => {
    test("insert then get returns the record with every field", Effect.gen(function*() {
      const keys = yield* KeyRepo
      const k = makeKey({
        accountId: "acct_a", mode: "test", scopes: ["jobs:read", "files:write"], name: "CI key",
        prefixDisplay: "hush_test_q2zx", lastFour: "m4k7", lastUsedAt: T0 + 5, createdAt: T0 + 1
      })
      const all = makeKey({ accountId: "acct_a" })
      const none = makeKey({ accountId: "acct_a", scopes: [] })
      yield* keys.insert(k)
      yield* keys.insert(all)
      yield* keys.insert(none)
      expect(expectSome(yield* keys.get(k.id))).toEqual(k)
      expect(expectSome(yield* keys.get(all.id))).toEqual(all)
      expect(expectSome(yield* keys.get(none.id))).toEqual(none)
      expectNone(yield* keys.get("key_unknown"))
    }))

    test("findByHash finds the key with that hash only", Effect.gen(function*() {
      const keys = yield* KeyRepo
      const a = makeKey({ accountId: "acct_a" })
      const b = makeKey({ accountId: "acct_b", mode: "test" })
      yield* keys.insert(a)
      yield* keys.insert(b)
      expect(expectSome(yield* keys.findByHash(b.hash))).toEqual(b)
      expect(expectSome(yield* keys.findByHash(a.hash))).toEqual(a)
      expectNone(yield* keys.findByHash(sha256Hex("hush_live_not-a-key")))
    }))

    test("findByHashWithAccount finds the key and its account in one call; None for the account when it is gone", Effect.gen(function*() {
      const keys = yield* KeyRepo
      const accounts = yield* AccountRepo
      const owner = makeAccount({ status: "frozen" })
      yield* accounts.insert(owner)
      const owned = makeKey({ accountId: owner.id, mode: "test" })
      const orphan = makeKey({ accountId: "acct_gone" })
      yield* keys.insert(owned)
      yield* keys.insert(orphan)
      const found = expectSome(yield* keys.findByHashWithAccount(owned.hash))
      expect(found.key).toEqual(owned)
      expect(expectSome(found.account)).toEqual(owner)
      const lonely = expectSome(yield* keys.findByHashWithAccount(orphan.hash))
      expect(lonely.key).toEqual(orphan)
      expectNone(lonely.account)
      expectNone(yield* keys.findByHashWithAccount(sha256Hex("hush_live_not-a-key")))
    }))

    test("listByAccount lists that account's keys of both modes, oldest first", Effect.gen(function*() {
      const keys = yield* KeyRepo
      const k1 = makeKey({ accountId: "acct_a", createdAt: T0 + 2 * SECOND })
      const k2 = makeKey({ accountId: "acct_a", createdAt: T0, mode: "test" })
      const k3 = makeKey({ accountId: "acct_b", createdAt: T0 + SECOND })
      const k4 = makeKey({ accountId: "acct_a", createdAt: T0 + SECOND })
      const k5 = makeKey({ accountId: "acct_a", createdAt: T0 + 3 * SECOND })
      for (const k of [k1, k5, k2, k3, k4]) yield* keys.insert(k)
      expect(yield* keys.listByAccount("acct_a")).toEqual([k2, k4, k1, k5])
      expect(yield* keys.listByAccount("acct_b")).toEqual([k3])
      expect(yield* keys.listByAccount("acct_none")).toEqual([])
    }))

    test("update revokes: revokedAt is set and the key is still found and listed", Effect.gen(function*() {
      const keys = yield* KeyRepo
      const k = makeKey({ accountId: "acct_a", createdAt: T0 })
      const other = makeKey({ accountId: "acct_a", createdAt: T0 + 1 })
      yield* keys.insert(k)
      yield* keys.insert(other)
      const used = makeKey({ ...k, lastUsedAt: T0 + HOUR })
      yield* keys.update(used)
      expect(expectSome(yield* keys.get(k.id))).toEqual(used)
      const revoked = makeKey({ ...used, revokedAt: T0 + 2 * HOUR })
      yield* keys.update(revoked)
      const stored = expectSome(yield* keys.get(k.id))
      expect(stored.revokedAt).toBe(T0 + 2 * HOUR)
      expect(stored).toEqual(revoked)
      expect(expectSome(yield* keys.findByHash(k.hash))).toEqual(revoked)
      expect(yield* keys.listByAccount("acct_a")).toEqual([revoked, other])
      expect(expectSome(yield* keys.get(other.id)).revokedAt).toBeNull()
    }))

    test("markUsed records the time of use and nothing else of the record", Effect.gen(function*() {
      const keys = yield* KeyRepo
      const k = makeKey({ accountId: "acct_a" })
      yield* keys.insert(k)
      expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key.lastUsedAt).toBeNull()
      yield* keys.markUsed(makeKey({ ...k, lastUsedAt: T0 + HOUR, name: "not this", scopes: [] }))
      expect(expectSome(yield* keys.get(k.id))).toEqual(makeKey({ ...k, lastUsedAt: T0 + HOUR }))
      expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key).toEqual(makeKey({ ...k, lastUsedAt: T0 + HOUR }))
    }))

    test("findByHashWithAccount answers a revocation, a scope change and a freeze made just before", Effect.gen(function*() {
      const keys = yield* KeyRepo
      const accounts = yield* AccountRepo
      const owner = makeAccount()
      yield* accounts.insert(owner)
      const k = makeKey({ accountId: owner.id })
      yield* keys.insert(k)
      for (let i = 0; i < 2; i++) expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key).toEqual(k)
      const narrowed = makeKey({ ...k, scopes: ["jobs:read"] })
      yield* keys.update(narrowed)
      expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key.scopes).toEqual(["jobs:read"])
      const frozen = makeAccount({ ...owner, status: "frozen" })
      yield* accounts.update(frozen)
      expect(expectSome(expectSome(yield* keys.findByHashWithAccount(k.hash)).account).status).toBe("frozen")
      yield* keys.update(makeKey({ ...narrowed, revokedAt: T0 + HOUR }))
      expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key.revokedAt).toBe(T0 + HOUR)
    }))
  })
}
