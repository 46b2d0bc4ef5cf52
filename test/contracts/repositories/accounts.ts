/** The repository contract, AccountRepo (see test/contracts/repositories.ts). */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { AccountRepo } from "../../../core/ports/repositories.js"
import { makeAccount, T0 } from "../fixtures.js"
import { type ContractTests, expectNone, expectSome } from "./support.js"

export const accountRepoContract = ({ test }: ContractTests) => {
  describe("AccountRepo", () => {
    test("insert then get returns the record with every field", Effect.gen(function*() {
      const accounts = yield* AccountRepo
      const a = makeAccount({
        name: "Zoë O'Brien", status: "frozen", hasPurchased: false, trainingOptIn: true,
        termsVersion: "2025-01-15", createdAt: T0 + 123
      })
      const b = makeAccount({ hasPurchased: true, trainingOptIn: false, termsVersion: "" })
      yield* accounts.insert(a)
      yield* accounts.insert(b)
      expect(expectSome(yield* accounts.get(a.id))).toEqual(a)
      expect(expectSome(yield* accounts.get(b.id))).toEqual(b)
    }))

    test("get of an unknown id is None", Effect.gen(function*() {
      const accounts = yield* AccountRepo
      yield* accounts.insert(makeAccount())
      expectNone(yield* accounts.get("acct_unknown"))
    }))

    test("update replaces the stored fields", Effect.gen(function*() {
      const accounts = yield* AccountRepo
      const a = makeAccount({ status: "active" })
      const other = makeAccount()
      yield* accounts.insert(a)
      yield* accounts.insert(other)
      const changed = makeAccount({
        ...a, status: "suspended", name: "Renamed",
        hasPurchased: !a.hasPurchased, trainingOptIn: !a.trainingOptIn, termsVersion: "2026-02-02"
      })
      yield* accounts.update(changed)
      expect(expectSome(yield* accounts.get(a.id))).toEqual(changed)
      expect(expectSome(yield* accounts.get(other.id))).toEqual(other)
    }))
  })
}
