/** The repository contract, WalletRepo (see test/contracts/repositories.ts). */
import { describe, expect } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { HoldRecord, LotRecord } from "../../../core/domain/records.js"
import { type WalletChange, WalletRepo, type WalletSnapshot } from "../../../core/ports/repositories.js"
import { transactionally } from "../../../core/ports/transactor.js"
import { addCredit, capture, emptyWallet, hold, release, type WalletStep } from "../../../core/wallet/wallet.js"
import { makeSequentialIds } from "../../support/ids.js"
import { makeLedgerEntry, makeLot, SECOND, T0, YEAR } from "../fixtures.js"
import { type ContractTests, credit, expectNone, expectSome, normalized, right, walletLock, walletState, walletStep } from "./support.js"

export const walletRepoContract = ({ test }: ContractTests) => {
  describe("WalletRepo", () => {
    test("lock of an account with no ledger gives the empty wallet", Effect.gen(function*() {
      const repo = yield* WalletRepo
      expect(normalized(yield* walletLock("acct_new"))).toEqual(normalized(emptyWallet("acct_new")))
      const w = yield* walletLock("acct_new")
      expect(w).toMatchObject({ accountId: "acct_new", lastSeq: 0, balance: 0, reserved: 0, lots: [], openHolds: [] })
      expect(yield* repo.listLots("acct_new", 10)).toEqual([])
      expect(yield* repo.ledgerPage({ accountId: "acct_new", limit: 10 })).toEqual([])
      expectNone(yield* repo.holdForJob("job_none"))
    }))

    test("apply of each wallet step, then lock, reproduces the step's snapshot", Effect.gen(function*() {
      const repo = yield* WalletRepo
      const mint = makeSequentialIds().next
      const acct = "acct_w"
      const steps: Array<WalletStep> = []
      const run = (f: (w: WalletSnapshot) => WalletStep) =>
        Effect.gen(function*() {
          const step = yield* walletStep(acct, f)
          steps.push(step)
          expect(normalized(yield* walletLock(acct))).toEqual(normalized(step.wallet))
          return step
        })
      // lot A: a grant that expires soon; lot B: a purchase above 2^32 micros
      const a = yield* run((w) =>
        addCredit(w, { source: "grant", amountMicros: 1_000, lifetimeMs: SECOND, reason: "welcome" }, T0, mint))
      const b = yield* run((w) =>
        addCredit(w, {
          source: "purchase", amountMicros: 5_000_000_000, lifetimeMs: YEAR, reason: "checkout", checkoutId: "chk_1"
        }, T0 + 10, mint))
      yield* run((w) => right(hold(w, { jobId: "job_a", amountMicros: 600 }, T0 + 20, mint)))
      yield* run((w) => right(hold(w, { jobId: "job_b", amountMicros: 200 }, T0 + 30, mint)))
      // lot A expires (200 unheld go), then job_a is charged: A keeps 200 held for job_b
      const captured = yield* run((w) => right(capture(w, "job_a", T0 + 2 * SECOND, mint)))
      const lotA = captured.wallet.lots.find((l) => l.id === a.change.lots[0].id)
      expect(lotA).toMatchObject({ expired: true, remainingMicros: 200 })
      // releasing job_b's hold on the expired lot expires those micros too
      yield* run((w) => right(release(w, "job_b", T0 + 3 * SECOND, mint, "job failed")))

      // the final state, stated independently of the pure steps
      const final = yield* walletLock(acct)
      expect(final).toMatchObject({ accountId: acct, lastSeq: 8, balance: 5_000_000_000, reserved: 0, openHolds: [] })
      expect(final.lots).toEqual([b.change.lots[0]])

      // every lot ever created, newest purchase first, remaining 0 included
      const entries = steps.flatMap((s) => s.change.entries)
      expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
      const lots = yield* repo.listLots(acct, 10)
      expect(lots.map((l) => l.id)).toEqual([b.change.lots[0].id, a.change.lots[0].id])
      expect(lots[1]).toEqual(new LotRecord({ ...a.change.lots[0], expired: true, remainingMicros: 0 }))
      expect(lots[0]).toEqual(b.change.lots[0])
      expect(yield* repo.listLots(acct, 1)).toEqual([b.change.lots[0]])

      // the ledger, newest first, paged by seq
      const ledger = yield* repo.ledgerPage({ accountId: acct, limit: 100 })
      expect(ledger).toEqual([...entries].reverse())
      expect(ledger.map((e) => e.kind)).toEqual([
        "expiry", "release", "capture", "expiry", "hold", "hold", "purchase", "grant"
      ])
      expect((yield* repo.ledgerPage({ accountId: acct, limit: 3 })).map((e) => e.seq)).toEqual([8, 7, 6])
      expect((yield* repo.ledgerPage({ accountId: acct, limit: 2, beforeSeq: 6 })).map((e) => e.seq)).toEqual([5, 4])
      expect((yield* repo.ledgerPage({ accountId: acct, limit: 10, beforeSeq: 3 })).map((e) => e.seq)).toEqual([2, 1])
      expect(yield* repo.ledgerPage({ accountId: acct, limit: 10, beforeSeq: 1 })).toEqual([])

      // per job, oldest first
      const forA = yield* repo.ledgerForJob("job_a")
      expect(forA.map((e) => e.kind)).toEqual(["hold", "capture"])
      expect(forA).toEqual(entries.filter((e) => e.jobId === "job_a"))
      const forB = yield* repo.ledgerForJob("job_b")
      expect(forB.map((e) => [e.kind, e.seq])).toEqual([["hold", 4], ["release", 7], ["expiry", 8]])
      expect(yield* repo.ledgerForJob("job_none")).toEqual([])

      // holds, resolved ones included
      const holdA = expectSome(yield* repo.holdForJob("job_a"))
      expect(holdA).toMatchObject({ jobId: "job_a", status: "captured", resolvedAt: T0 + 2 * SECOND, amountMicros: 600 })
      expect(holdA.draws).toEqual([{ lotId: a.change.lots[0].id, micros: 600 }])
      expect(expectSome(yield* repo.holdForJob("job_b")))
        .toMatchObject({ status: "released", resolvedAt: T0 + 3 * SECOND })
      expectNone(yield* repo.holdForJob("job_none"))
    }))

    test("wallets are per account", Effect.gen(function*() {
      const repo = yield* WalletRepo
      const mint = makeSequentialIds().next
      const one = yield* credit("acct_1", 1_000, T0, mint)
      const two = yield* credit("acct_2", 7_000, T0 + 1, mint)
      yield* walletStep("acct_2", (w) => right(hold(w, { jobId: "job_2", amountMicros: 500 }, T0 + 2, mint)))
      expect(normalized(yield* walletLock("acct_1"))).toEqual(normalized(one.wallet))
      const w2 = yield* walletLock("acct_2")
      expect(w2).toMatchObject({ lastSeq: 2, balance: 7_000, reserved: 500 })
      expect(w2.openHolds.map((h) => h.jobId)).toEqual(["job_2"])
      expect(yield* repo.listLots("acct_1", 10)).toEqual(one.change.lots)
      expect(yield* repo.listLots("acct_2", 10)).toEqual(two.change.lots)
      expect((yield* repo.ledgerPage({ accountId: "acct_1", limit: 10 })).map((e) => e.id))
        .toEqual(one.change.entries.map((e) => e.id))
      // each account's ledger starts at seq 1
      expect((yield* repo.ledgerPage({ accountId: "acct_2", limit: 10 })).map((e) => e.seq)).toEqual([2, 1])
    }))

    /** credit 1000; job_a and job_b hold 100 each; job_a captured. */
    const seedResolvedHold = Effect.gen(function*() {
      const mint = makeSequentialIds().next
      const acct = "acct_h"
      yield* credit(acct, 1_000, T0, mint)
      yield* walletStep(acct, (w) => right(hold(w, { jobId: "job_a", amountMicros: 100 }, T0 + 1, mint)))
      const afterB = yield* walletStep(acct, (w) => right(hold(w, { jobId: "job_b", amountMicros: 100 }, T0 + 2, mint)))
      yield* walletStep(acct, (w) => right(capture(w, "job_a", T0 + 3, mint)))
      const captured = expectSome(yield* Effect.flatMap(WalletRepo, (r) => r.holdForJob("job_a")))
      expect(captured.status).toBe("captured")
      return { acct, mint, captured, stale: afterB.wallet }
    })

    test("a resolved hold cannot be resolved again: the change is refused and nothing changes", Effect.gen(function*() {
      const repo = yield* WalletRepo
      const { acct, captured } = yield* seedResolvedHold
      const before = yield* walletState(acct)
      expect(before.snapshot).toMatchObject({ lastSeq: 4, balance: 900, reserved: 100 })
      const released = new HoldRecord({ ...captured, status: "released", resolvedAt: T0 + 10 })

      // the hold alone
      const alone = yield* Effect.exit(repo.apply({ lots: [], holds: [released], entries: [] }))
      expect(Exit.isFailure(alone)).toBe(true)
      expect(yield* walletState(acct)).toEqual(before)
      expect(expectSome(yield* repo.holdForJob("job_a"))).toEqual(captured)

      // with a lot change and an entry that are themselves in order: none of it lands
      const lot = before.lots[0]
      const change: WalletChange = {
        lots: [new LotRecord({ ...lot, remainingMicros: lot.remainingMicros + 100 })],
        holds: [released],
        entries: [makeLedgerEntry({
          accountId: acct, seq: 5, kind: "release", reason: "again", balanceDelta: 0, reservedDelta: -100,
          balanceAfter: 900, reservedAfter: 0, jobId: "job_a", createdAt: T0 + 10
        })]
      }
      const mixed = yield* Effect.exit(transactionally(repo.apply(change)))
      expect(Exit.isFailure(mixed)).toBe(true)
      expect(yield* walletState(acct)).toEqual(before)
      expect(expectSome(yield* repo.holdForJob("job_a"))).toEqual(captured)
      expect(yield* repo.ledgerForJob("job_a")).toHaveLength(2)
    }))

    test("a release computed from a stale snapshot is refused after the capture", Effect.gen(function*() {
      const repo = yield* WalletRepo
      const { acct, mint, stale, captured } = yield* seedResolvedHold
      const before = yield* walletState(acct)
      const late = right(release(stale, "job_a", T0 + 10, mint, "lost race"))
      const exit = yield* Effect.exit(transactionally(repo.apply(late.change)))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* walletState(acct)).toEqual(before)
      expect(expectSome(yield* repo.holdForJob("job_a"))).toEqual(captured)
    }))

    test("ledger entries out of sequence are refused and nothing changes", Effect.gen(function*() {
      const repo = yield* WalletRepo
      const acct = "acct_s"
      const entry = (seq: number, balanceAfter: number) =>
        makeLedgerEntry({ accountId: acct, seq, balanceDelta: 1_000, balanceAfter, reservedAfter: 0 })
      const lot = () => makeLot({ accountId: acct, amountMicros: 1_000, remainingMicros: 1_000 })
      const refused = (change: WalletChange) =>
        Effect.gen(function*() {
          const before = yield* walletState(acct)
          const exit = yield* Effect.exit(transactionally(repo.apply(change)))
          expect(Exit.isFailure(exit)).toBe(true)
          expect(yield* walletState(acct)).toEqual(before)
        })
      // a first entry must be seq 1
      yield* refused({ lots: [lot()], holds: [], entries: [entry(2, 1_000)] })
      yield* refused({ lots: [lot()], holds: [], entries: [entry(0, 1_000)] })
      const first = lot()
      yield* transactionally(repo.apply({ lots: [first], holds: [], entries: [entry(1, 1_000)] }))
      expect(yield* walletLock(acct)).toMatchObject({ lastSeq: 1, balance: 1_000, reserved: 0 })
      // a repeat, a gap, and a second entry out of order within one change
      yield* refused({ lots: [lot()], holds: [], entries: [entry(1, 2_000)] })
      yield* refused({ lots: [lot()], holds: [], entries: [entry(3, 2_000)] })
      yield* refused({ lots: [lot()], holds: [], entries: [entry(2, 2_000), entry(4, 3_000)] })
      yield* refused({ lots: [lot()], holds: [], entries: [entry(3, 3_000), entry(2, 2_000)] })
      // in order, two at once, is fine
      yield* transactionally(repo.apply({ lots: [lot()], holds: [], entries: [entry(2, 2_000), entry(3, 3_000)] }))
      expect(yield* walletLock(acct)).toMatchObject({ lastSeq: 3, balance: 3_000 })
      expect(yield* repo.listLots(acct, 10)).toHaveLength(2)
    }))
  })
}
