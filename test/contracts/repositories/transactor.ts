/** The repository contract, Transactor (see test/contracts/repositories.ts). */
import { describe, expect } from "@effect/vitest"
import { Cause, Effect, Either, Exit, Option } from "effect"
import type { LedgerEntryRecord } from "../../../core/domain/records.js"
import type { MintId } from "../../../core/ports/ids.js"
import { AccountRepo, FileRepo, IdempotencyRepo, JobRepo, KeyRepo, WalletRepo } from "../../../core/ports/repositories.js"
import { transactionally, Transactor } from "../../../core/ports/transactor.js"
import { emptyWallet, hold } from "../../../core/wallet/wallet.js"
import { makeSequentialIds } from "../../support/ids.js"
import { makeAccount, makeFile, makeIdempotency, makeJob, makeKey, T0 } from "../fixtures.js"
import { Boom, byId, type ContractTests, credit, expectNone, expectSome, normalized, right, walletLock, walletStep } from "./support.js"

export const transactorContract = ({ test, raceTest }: ContractTests) => {
  describe("Transactor", () => {
    const writeEverything = (mint: MintId) =>
      Effect.gen(function*() {
        yield* Effect.flatMap(AccountRepo, (r) => r.insert(makeAccount({ id: "acct_t" })))
        yield* Effect.flatMap(KeyRepo, (r) => r.insert(makeKey({ id: "key_t", accountId: "acct_t" })))
        yield* Effect.flatMap(FileRepo, (r) => r.insert(makeFile({ id: "file_t", accountId: "acct_t" })))
        yield* Effect.flatMap(JobRepo, (r) => r.insert(makeJob({ id: "job_t", accountId: "acct_t" })))
        yield* credit("acct_t", 5_000, T0, mint)
        yield* walletStep("acct_t", (w) => right(hold(w, { jobId: "job_t", amountMicros: 1_000 }, T0 + 1, mint)))
        yield* Effect.flatMap(IdempotencyRepo, (r) => r.begin(makeIdempotency({ accountId: "acct_t", key: "k" })))
      })

    const nothingWritten = Effect.gen(function*() {
      expectNone(yield* Effect.flatMap(AccountRepo, (r) => r.get("acct_t")))
      expectNone(yield* Effect.flatMap(KeyRepo, (r) => r.get("key_t")))
      expectNone(yield* Effect.flatMap(FileRepo, (r) => r.get("file_t")))
      expectNone(yield* Effect.flatMap(JobRepo, (r) => r.get("job_t")))
      expect(normalized(yield* walletLock("acct_t"))).toEqual(normalized(emptyWallet("acct_t")))
      expect(yield* Effect.flatMap(WalletRepo, (r) => r.listLots("acct_t", 10))).toEqual([])
      expectNone(yield* Effect.flatMap(WalletRepo, (r) => r.holdForJob("job_t")))
      expect((yield* Effect.flatMap(IdempotencyRepo, (r) => r.begin(makeIdempotency({ accountId: "acct_t", key: "k" }))))
        ._tag).toBe("Started")
    })

    test("a transaction that succeeds keeps all of its writes", Effect.gen(function*() {
      const tx = yield* Transactor
      yield* tx.withTransaction(writeEverything(makeSequentialIds().next))
      expect(expectSome(yield* Effect.flatMap(AccountRepo, (r) => r.get("acct_t"))).id).toBe("acct_t")
      expect(expectSome(yield* Effect.flatMap(JobRepo, (r) => r.get("job_t"))).id).toBe("job_t")
      expect(yield* walletLock("acct_t")).toMatchObject({ lastSeq: 2, balance: 5_000, reserved: 1_000 })
    }))

    test("a transaction that writes then fails leaves nothing", Effect.gen(function*() {
      const tx = yield* Transactor
      const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
        yield* writeEverything(makeSequentialIds().next)
        // its own writes are visible inside it
        expect(expectSome(yield* Effect.flatMap(AccountRepo, (r) => r.get("acct_t"))).id).toBe("acct_t")
        return yield* new Boom({ message: "after the writes" })
      })))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Option.getOrThrow(Cause.failureOption(exit.cause))).toEqual(new Boom({ message: "after the writes" }))
      }
      yield* nothingWritten
    }))

    test("a transaction that dies leaves nothing", Effect.gen(function*() {
      const tx = yield* Transactor
      const exit = yield* Effect.exit(tx.withTransaction(
        Effect.zipRight(writeEverything(makeSequentialIds().next), Effect.dieMessage("defect after the writes"))
      ))
      expect(Exit.isFailure(exit)).toBe(true)
      yield* nothingWritten
    }))

    test("a failed transaction also undoes its updates and deletes", Effect.gen(function*() {
      const tx = yield* Transactor
      const accounts = yield* AccountRepo
      const files = yield* FileRepo
      const account = makeAccount({ status: "active" })
      const file = makeFile({ accountId: account.id })
      yield* accounts.insert(account)
      yield* files.insert(file)
      const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
        yield* accounts.update(makeAccount({ ...account, status: "frozen" }))
        yield* files.delete(file.id)
        expectNone(yield* files.get(file.id))
        return yield* new Boom({ message: "undo" })
      })))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(expectSome(yield* accounts.get(account.id))).toEqual(account)
      expect(expectSome(yield* files.get(file.id))).toEqual(file)
    }))

    test("a nested withTransaction joins the outer one", Effect.gen(function*() {
      const tx = yield* Transactor
      const accounts = yield* AccountRepo
      const a = makeAccount()
      const b = makeAccount()
      // the inner one completes, then the outer fails: the inner's writes go too
      const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
        yield* tx.withTransaction(accounts.insert(a))
        expect(expectSome(yield* accounts.get(a.id))).toEqual(a)
        return yield* new Boom({ message: "outer fails" })
      })))
      expect(Exit.isFailure(exit)).toBe(true)
      expectNone(yield* accounts.get(a.id))
      // nested wallet work on the same account in one transaction commits together
      const mint = makeSequentialIds().next
      yield* tx.withTransaction(Effect.gen(function*() {
        yield* accounts.insert(b)
        yield* tx.withTransaction(credit(b.id, 2_000, T0, mint))
        yield* walletStep(b.id, (w) => right(hold(w, { jobId: "job_n", amountMicros: 500 }, T0 + 1, mint)))
      }))
      expect(expectSome(yield* accounts.get(b.id))).toEqual(b)
      expect(yield* walletLock(b.id)).toMatchObject({ lastSeq: 2, balance: 2_000, reserved: 500 })
    }))

    /** One transaction: lock the wallet, check `available`, hold, apply. */
    const tryHold = (accountId: string, jobId: string, cost: number, mint: MintId) =>
      transactionally(Effect.gen(function*() {
        const repo = yield* WalletRepo
        const wallet = yield* repo.lock(accountId)
        yield* Effect.yieldNow() // give a competing transaction every chance to interleave
        const step = hold(wallet, { jobId, amountMicros: cost }, T0 + 1, mint)
        if (Either.isLeft(step)) return yield* step.left
        yield* Effect.yieldNow()
        yield* repo.apply(step.right.change)
        return step.right.hold
      })).pipe(Effect.either)

    raceTest("two concurrent holds against credit for one job: exactly one succeeds", Effect.gen(function*() {
      const mint = makeSequentialIds().next
      yield* credit("acct_r", 1_500, T0, mint)
      const results = yield* Effect.all(
        [tryHold("acct_r", "job_1", 1_000, mint), tryHold("acct_r", "job_2", 1_000, mint)],
        { concurrency: "unbounded" }
      )
      expect(results.filter(Either.isRight)).toHaveLength(1)
      const lost = results.filter(Either.isLeft)
      expect(lost).toHaveLength(1)
      expect(lost[0].left._tag).toBe("InsufficientCredit")
      expect(yield* walletLock("acct_r")).toMatchObject({ lastSeq: 2, balance: 1_500, reserved: 1_000 })
    }))

    raceTest("20 concurrent holds against credit for 5: exactly 5 hold", Effect.gen(function*() {
      const repo = yield* WalletRepo
      const mint = makeSequentialIds().next
      const cost = 1_230
      yield* credit("acct_r", 5 * cost + cost - 1, T0, mint)
      const jobIds = Array.from({ length: 20 }, (_, i) => `job_r${String(i).padStart(2, "0")}`)
      const results = yield* Effect.all(jobIds.map((id) => tryHold("acct_r", id, cost, mint)), {
        concurrency: "unbounded"
      })
      const won = results.filter(Either.isRight).map((r) => r.right)
      expect(won).toHaveLength(5)
      for (const r of results) if (Either.isLeft(r)) expect(r.left._tag).toBe("InsufficientCredit")
      const wallet = yield* walletLock("acct_r")
      expect(wallet).toMatchObject({ lastSeq: 6, balance: 6 * cost - 1, reserved: 5 * cost })
      expect(byId(wallet.openHolds)).toEqual(byId(won))
      const ledger = yield* repo.ledgerPage({ accountId: "acct_r", limit: 100 })
      expect(ledger.map((e) => e.seq)).toEqual([6, 5, 4, 3, 2, 1])
      expect(ledger.filter((e: LedgerEntryRecord) => e.kind === "hold").map((e) => e.reservedAfter).sort((x, y) => x - y))
        .toEqual([1, 2, 3, 4, 5].map((n) => n * cost))
      const winners = new Set(won.map((h) => h.jobId))
      for (const id of jobIds) {
        const h = yield* repo.holdForJob(id)
        expect(Option.isSome(h)).toBe(winners.has(id))
      }
    }))
  })
}
