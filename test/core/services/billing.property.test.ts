/**
 * Billing properties over random sequences of purchases, grants, job creations, successes,
 * failures, cancels, lease lapses, hand-backs at shutdown, clock advances across lot
 * expiries, and payments (paid checkouts, redelivered events, refunds, disputes opened, won and
 * lost), run through the core's services on the in-memory adapters, with ReferenceWallet as
 * the oracle.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Either, Layer, Option, TestClock, TestContext } from "effect"
import fc from "fast-check"
import { DEFAULT_LIMITS } from "../../../core/domain/limits.js"
import { FileRecord, type JobRecord } from "../../../core/domain/records.js"
import { FileRepo, JobRepo, WalletRepo } from "../../../core/ports/repositories.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import { authenticate } from "../../../core/services/caller.js"
import { creditsOf } from "../../../core/services/credits.js"
import { cancelJob, createDenoiseJob } from "../../../core/services/jobs.js"
import { addCredit } from "../../../core/services/wallet.js"
import { expireDue } from "../../../core/wallet/wallet.js"
import { claimNext, failJob, finishTestJob, handBackJob, recoverLapsedLeases, succeedJob } from "../../../core/services/worker.js"
import { DAY } from "../../../core/time.js"
import { coreEnvironment } from "../../support/env.js"
import { type RefLot, ReferenceWallet } from "../../support/reference-wallet.js"
import { CheckoutRecord, type PaymentEvent } from "../../../core/domain/payments.js"
import { CheckoutRepo } from "../../../core/ports/payments.js"
import { applyPaymentEvent } from "../../../core/services/payments.js"

const RUNS = 1_000
const WORKER = "worker-1"
const PRICE = 100
const MIN_UNITS = 10

type Op =
  /** Operator grants; purchases come only through paid checkouts (Purchase). */
  | { readonly _tag: "Credit"; readonly source: "grant"; readonly amount: number }
  | { readonly _tag: "CreateJob"; readonly mode: "live" | "test"; readonly durationMs: number }
  | { readonly _tag: "Claim" }
  | { readonly _tag: "Succeed"; readonly pick: number }
  | { readonly _tag: "SucceedAgain"; readonly pick: number }
  | { readonly _tag: "Fail"; readonly pick: number; readonly code: "internal_error" | "provider_error" }
  | { readonly _tag: "Cancel"; readonly pick: number }
  | { readonly _tag: "LapseLeases" }
  | { readonly _tag: "HandBack"; readonly pick: number }
  | { readonly _tag: "Advance"; readonly ms: number }
  | { readonly _tag: "ReadCredits" }
  | { readonly _tag: "Purchase"; readonly cents: number }
  | { readonly _tag: "Redeliver"; readonly pick: number }
  | { readonly _tag: "Refund"; readonly pick: number; readonly cents: number }
  | { readonly _tag: "DisputeOpened"; readonly pick: number }
  | { readonly _tag: "DisputeClosed"; readonly pick: number; readonly outcome: "won" | "lost" }

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ _tag: fc.constant("Credit" as const), source: fc.constant("grant" as const), amount: fc.integer({ min: 1, max: 100_000 }) }), weight: 3 },
  { arbitrary: fc.record({ _tag: fc.constant("CreateJob" as const), mode: fc.constantFrom("live" as const, "live" as const, "test" as const), durationMs: fc.integer({ min: 0, max: 60_000 }) }), weight: 4 },
  { arbitrary: fc.constant({ _tag: "Claim" as const }), weight: 4 },
  { arbitrary: fc.record({ _tag: fc.constant("Succeed" as const), pick: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ _tag: fc.constant("SucceedAgain" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Fail" as const), pick: fc.nat(), code: fc.constantFrom("internal_error" as const, "provider_error" as const) }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Cancel" as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.constant({ _tag: "LapseLeases" as const }), weight: 3 },
  { arbitrary: fc.record({ _tag: fc.constant("HandBack" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.constant({ _tag: "ReadCredits" as const }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Purchase" as const), cents: fc.integer({ min: 1, max: 10 }) }), weight: 2 },
  { arbitrary: fc.record({ _tag: fc.constant("Redeliver" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Refund" as const), pick: fc.nat(), cents: fc.integer({ min: 1, max: 6 }) }), weight: 2 },
  { arbitrary: fc.record({ _tag: fc.constant("DisputeOpened" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("DisputeClosed" as const), pick: fc.nat(), outcome: fc.constantFrom("won" as const, "lost" as const) }), weight: 1 },
  {
    // mostly minutes, sometimes months: enough to cross a lot's 365-day expiry within a run
    arbitrary: fc.record({ _tag: fc.constant("Advance" as const), ms: fc.oneof(fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 30 * DAY, max: 400 * DAY })) }),
    weight: 2
  }
)

const costOf = (durationSeconds: number) => Math.max(Math.ceil(durationSeconds), MIN_UNITS) * PRICE

const allJobs = (accountId: string, mode: "live" | "test") =>
  Effect.flatMap(JobRepo, (jobs) => jobs.list({ accountId, mode, limit: 10_000 }))

const fullLedger = (accountId: string) =>
  Effect.map(Effect.flatMap(WalletRepo, (w) => w.ledgerPage({ accountId, limit: 1_000_000 })), (page) => [...page].reverse())

/**
 * Checks every billing invariant against the stores and the oracle. It only reads: expiries
 * due now are projected with the pure wallet step, not written, so a wallet operation that
 * forgets to expire lots first is not masked by the check itself.
 */
/** A paid checkout as the property test tracks it: its lot in the oracle and what the provider reported. */
interface Purchase {
  readonly checkoutId: string
  readonly amount: number
  readonly lot: RefLot
  readonly paidEventId: string
  refundedTotal: number
  dispute: "open" | "won" | "lost" | null
  /** A lost dispute removes whatever remains, refunded or not. */
  lostOnce: boolean
}

/** The id of the lot the wallet has and the oracle does not yet (the one just credited). */
const newLotId = (accountId: string, ref: ReferenceWallet) =>
  Effect.gen(function*() {
    const snapshot = yield* Effect.flatMap(WalletRepo, (w) => w.lock(accountId))
    const known = ref.lotIds
    const fresh = snapshot.lots.filter((lot) => !known.has(lot.id))
    expect(fresh).toHaveLength(1)
    return fresh[0]!.id
  })

const checkInvariants = (accountId: string, ref: ReferenceWallet, purchases: ReadonlyArray<Purchase>) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const snapshot = yield* Effect.flatMap(WalletRepo, (w) => w.lock(accountId))
    let scratch = 0
    const projected = expireDue(snapshot, now, () => `txn_scratch${scratch++}`).wallet
    ref.expire(now)
    // available never negative; the wallet agrees with the oracle
    expect(snapshot.balance - snapshot.reserved).toBeGreaterThanOrEqual(0)
    expect(projected.balance - projected.reserved).toBeGreaterThanOrEqual(0)
    expect({ balance: projected.balance, reserved: projected.reserved }).toEqual({ balance: ref.balance, reserved: ref.reserved })
    const credits = { balanceMicros: snapshot.balance, reservedMicros: snapshot.reserved }

    // reserved equals the sum of unresolved holds, which are exactly the active live jobs' costs
    const openHoldSum = snapshot.openHolds.reduce((s, h) => s + h.amountMicros, 0)
    expect(openHoldSum).toBe(credits.reservedMicros)
    const live = yield* allJobs(accountId, "live")
    const active = live.filter((j) => j.status === "queued" || j.status === "processing")
    expect(active.reduce((s, j) => s + j.pricing.estimatedMicros, 0)).toBe(openHoldSum)
    expect(snapshot.openHolds.map((h) => h.jobId).sort()).toEqual(active.map((j) => j.id).sort())

    // each entry's *_after equals the previous plus its deltas
    const ledger = yield* fullLedger(accountId)
    let balance = 0
    let reserved = 0
    ledger.forEach((entry, index) => {
      expect(entry.seq).toBe(index + 1)
      balance += entry.balanceDelta
      reserved += entry.reservedDelta
      expect(entry.balanceAfter).toBe(balance)
      expect(entry.reservedAfter).toBe(reserved)
    })
    expect(balance).toBe(credits.balanceMicros)
    expect(reserved).toBe(credits.reservedMicros)

    // purchased + granted = balance + captured + expired + refunded, at every step
    const sum = (kinds: ReadonlyArray<string>) =>
      ledger.filter((e) => kinds.includes(e.kind)).reduce((s, e) => s + e.balanceDelta, 0)
    const credited = sum(["purchase", "grant"])
    const captured = 0 - sum(["capture"]) + 0
    const expired = 0 - sum(["expiry"]) + 0
    const refunded = 0 - sum(["refund"]) + 0
    expect(credited).toBe(credits.balanceMicros + captured + expired + refunded)
    const expiringNow = snapshot.balance - projected.balance
    expect({ credited, captured, expired: expired + expiringNow, refunded }).toEqual({
      credited: ref.credited, captured: ref.captured, expired: ref.expiredTotal, refunded: ref.refundedTotal
    })
    // each paid checkout is exactly one purchase entry and one lot; refunds name their checkout
    for (const purchase of purchases) {
      const entries = ledger.filter((e) => e.checkoutId === purchase.checkoutId)
      expect(entries.filter((e) => e.kind === "purchase").map((e) => e.balanceDelta)).toEqual([purchase.amount])
      expect(entries.every((e) => e.kind === "purchase" || e.kind === "refund")).toBe(true)
      // never more than was paid or reported refunded
      const removed = -entries.filter((e) => e.kind === "refund").reduce((s, e) => s + e.balanceDelta, 0)
      expect(removed).toBeLessThanOrEqual(purchase.lostOnce ? purchase.amount : purchase.refundedTotal)
    }
    expect(ledger.filter((e) => e.kind === "purchase").length).toBe(purchases.length)

    // a job is charged at most once, only on success, exactly its hold
    for (const job of live) {
      const entries = ledger.filter((e) => e.jobId === job.id)
      const count = (kind: string) => entries.filter((e) => e.kind === kind).length
      expect(count("hold")).toBe(1)
      expect(count("capture")).toBe(job.status === "succeeded" ? 1 : 0)
      expect(count("release")).toBe(job.status === "failed" || job.status === "canceled" ? 1 : 0)
      const capture = entries.find((e) => e.kind === "capture")
      if (job.status === "succeeded") {
        expect(-capture!.balanceDelta).toBe(job.pricing.estimatedMicros)
        expect(job.chargedMicros).toBe(job.pricing.estimatedMicros)
        expect(job.ledgerTxnId).toBe(capture!.id)
      } else {
        expect(job.chargedMicros).toBeNull()
      }
    }
    // nothing in test mode touches the wallet
    const testJobs = yield* allJobs(accountId, "test")
    for (const job of testJobs) {
      expect(ledger.some((e) => e.jobId === job.id)).toBe(false)
      expect(job.chargedMicros === null || job.chargedMicros === 0).toBe(true)
    }
  })

const readyFile = (accountId: string, mode: "live" | "test", durationSeconds: number, index: number) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const file = new FileRecord({
      id: `file_prop${index}`, accountId, mode, filename: `clip${index}.wav`, contentType: "audio/wav",
      sizeBytes: 1_000, status: "ready", durationSeconds, error: null, storageKey: `inputs/file_prop${index}`,
      multipart: null, createdAt: now, uploadExpiresAt: now, completedAt: now, readyAt: now, rejectedAt: null
    })
    yield* Effect.flatMap(FileRepo, (files) => files.insert(file))
    return file
  })

const pickFrom = <A>(items: ReadonlyArray<A>, pick: number): A | undefined =>
  items.length === 0 ? undefined : items[pick % items.length]

const runScenario = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    const created = yield* createAccountWithKeys({ email: "prop@example.com" })
    const accountId = created.account.id
    const liveCaller = yield* authenticate(`Bearer ${created.liveKey}`)
    const testCaller = yield* authenticate(`Bearer ${created.testKey}`)
    const ref = new ReferenceWallet(DEFAULT_LIMITS.lotLifetimeMs)
    const byStatus = (status: JobRecord["status"]) =>
      Effect.map(allJobs(accountId, "live"), (jobs) => jobs.filter((j) => j.status === status).sort((a, b) => a.id.localeCompare(b.id)))
    let fileIndex = 0
    const purchases: Array<Purchase> = []
    let eventIndex = 0
    const apply = (event: PaymentEvent) => applyPaymentEvent(event)

    for (const op of ops) {
      const now = yield* Clock.currentTimeMillis
      switch (op._tag) {
        case "Credit": {
          yield* addCredit(accountId, { source: op.source, amountMicros: op.amount, reason: "property test" })
          ref.credit(yield* newLotId(accountId, ref), op.amount, now)
          break
        }
        case "CreateJob": {
          const seconds = op.durationMs / 1000
          const file = yield* readyFile(accountId, op.mode, seconds, fileIndex++)
          const caller = op.mode === "live" ? liveCaller : testCaller
          const ledgerBefore = (yield* fullLedger(accountId)).length
          const result = yield* Effect.either(createDenoiseJob(caller, { file: file.id }))
          if (op.mode === "test") {
            expect(Either.isRight(result)).toBe(true) // never 402 in test mode
            const job = Either.getOrThrow(result)
            expect(job.pricing.estimatedMicros).toBe(costOf(seconds))
            const finished = yield* finishTestJob(job.id)
            expect(Option.getOrThrow(finished).status).toBe("succeeded")
            expect((yield* fullLedger(accountId)).length).toBe(ledgerBefore)
            break
          }
          ref.expire(now)
          const affordable = costOf(seconds) <= ref.available
          if (Either.isRight(result)) {
            expect(affordable).toBe(true)
            expect(ref.hold(result.right.id, costOf(seconds), now)).toBe(true)
          } else {
            expect(result.left._tag).toBe("InsufficientCredit")
            expect(affordable).toBe(false)
          }
          break
        }
        case "Claim": {
          yield* claimNext(WORKER)
          break
        }
        case "Succeed": {
          const job = pickFrom(yield* byStatus("processing"), op.pick)
          if (job === undefined) break
          const done = yield* succeedJob(job.id, WORKER, { storageKey: `outputs/${job.id}`, sizeBytes: 10, bitrateKbps: 192, format: "mp3" })
          expect(done.chargedMicros).toBe(ref.holdOf(job.id))
          ref.capture(job.id, now)
          break
        }
        case "SucceedAgain": {
          const job = pickFrom(yield* byStatus("succeeded"), op.pick)
          if (job === undefined) break
          const again = yield* Effect.either(succeedJob(job.id, WORKER, { storageKey: "x", sizeBytes: 1, bitrateKbps: 192, format: "mp3" }))
          expect(Either.isLeft(again)).toBe(true)
          break
        }
        case "Fail": {
          const job = pickFrom(yield* byStatus("processing"), op.pick)
          if (job === undefined) break
          yield* failJob(job.id, WORKER, { code: op.code, detail: "property test failure" })
          ref.release(job.id, now)
          break
        }
        case "Cancel": {
          const jobs = yield* allJobs(accountId, "live")
          const job = pickFrom([...jobs].sort((a, b) => a.id.localeCompare(b.id)), op.pick)
          if (job === undefined) break
          const result = yield* Effect.either(cancelJob(liveCaller, job.id))
          if (job.status === "queued") {
            expect(Either.isRight(result)).toBe(true)
            ref.release(job.id, now)
          } else {
            expect(Either.isLeft(result) && result.left._tag).toBe("JobNotCancelable")
          }
          break
        }
        case "HandBack": {
          // a worker shutting down: the job goes back to the queue, its hold untouched
          const job = pickFrom(yield* byStatus("processing"), op.pick)
          if (job === undefined) break
          const back = yield* handBackJob(job.id, WORKER)
          expect(back).toMatchObject({ status: "queued", attempts: job.attempts - 1, leaseOwner: null })
          break
        }
        case "LapseLeases": {
          const processing = yield* byStatus("processing")
          yield* TestClock.adjust(DEFAULT_LIMITS.jobLeaseMs + 1)
          const later = yield* Clock.currentTimeMillis
          yield* recoverLapsedLeases()
          for (const before of processing) {
            const after = Option.getOrThrow(yield* Effect.flatMap(JobRepo, (jobs) => jobs.get(before.id)))
            if (after.status === "failed") {
              expect(before.attempts).toBe(DEFAULT_LIMITS.maxJobAttempts)
              expect(after.error?.code).toBe("internal_error")
              ref.release(before.id, later)
            } else {
              expect(after.status).toBe("queued")
            }
          }
          break
        }
        case "Advance": {
          yield* TestClock.adjust(op.ms)
          break
        }
        case "Purchase": {
          const amount = op.cents * 10_000
          const checkoutId = `chk_prop${String(purchases.length).padStart(20, "a")}`
          yield* Effect.flatMap(CheckoutRepo, (checkouts) => checkouts.insert(new CheckoutRecord({
            id: checkoutId, accountId, amountMicros: amount, status: "open", provider: "fake", url: "http://hush.test/fake-checkout",
            providerSessionId: null, paymentRef: null, refundedMicros: 0, dispute: null, createdAt: now, paidAt: null
          })))
          const eventId = `evt_paid_${++eventIndex}`
          expect(yield* apply({ _tag: "CheckoutPaid", eventId, checkoutId, amountMicros: amount, paymentRef: `pi_${checkoutId}` })).toBe("credited")
          purchases.push({ checkoutId, amount, lot: ref.credit(yield* newLotId(accountId, ref), amount, now), paidEventId: eventId, refundedTotal: 0, dispute: null, lostOnce: false })
          break
        }
        case "Redeliver": {
          const purchase = pickFrom(purchases, op.pick)
          if (purchase === undefined) break
          // the same event id again, then another id for the same payment: neither credits
          expect(yield* apply({ _tag: "CheckoutPaid", eventId: purchase.paidEventId, checkoutId: purchase.checkoutId, amountMicros: purchase.amount, paymentRef: null })).toBe("duplicate")
          expect(yield* apply({ _tag: "CheckoutPaid", eventId: `evt_again_${++eventIndex}`, checkoutId: purchase.checkoutId, amountMicros: purchase.amount, paymentRef: null })).toBe("no_change")
          break
        }
        case "Refund": {
          const purchase = pickFrom(purchases, op.pick)
          if (purchase === undefined) break
          const total = Math.min(purchase.amount, purchase.refundedTotal + op.cents * 10_000)
          const newly = total - purchase.refundedTotal
          purchase.refundedTotal = total
          const outcome = yield* apply({
            _tag: "Refunded", eventId: `evt_refund_${++eventIndex}`, target: { checkoutId: null, paymentRef: `pi_${purchase.checkoutId}` }, refundedTotalMicros: total
          })
          expect(outcome).toBe(newly === 0 ? "no_change" : "refunded")
          ref.refund(purchase.lot, newly, now)
          break
        }
        case "DisputeOpened": {
          const purchase = pickFrom(purchases, op.pick)
          if (purchase === undefined) break
          yield* apply({ _tag: "DisputeOpened", eventId: `evt_dispute_${++eventIndex}`, target: { checkoutId: purchase.checkoutId, paymentRef: null } })
          purchase.dispute = "open"
          break
        }
        case "DisputeClosed": {
          const purchase = pickFrom(purchases, op.pick)
          if (purchase === undefined) break
          const outcome = yield* apply({
            _tag: "DisputeClosed", eventId: `evt_close_${++eventIndex}`, target: { checkoutId: null, paymentRef: `pi_${purchase.checkoutId}` }, outcome: op.outcome
          })
          if (purchase.dispute !== "open") {
            expect(outcome).toBe("no_change")
            break
          }
          purchase.dispute = op.outcome
          if (op.outcome === "lost") {
            purchase.lostOnce = true
            ref.refund(purchase.lot, purchase.amount, now)
          }
          break
        }
        case "ReadCredits": {
          // GET /v1/credits writes the expiries due now
          const credits = yield* creditsOf(accountId)
          ref.expire(now)
          expect(credits).toEqual({ balanceMicros: ref.balance, reservedMicros: ref.reserved, availableMicros: ref.available })
          break
        }
      }
      yield* checkInvariants(accountId, ref, purchases)
    }
  })

describe("billing properties", () => {
  it("hold, capture, release, expiry, purchases, refunds and disputes keep the wallet right over random sequences", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 40, size: "max" }), (ops) =>
        Effect.runPromise(runScenario(ops).pipe(Effect.provide(Layer.merge(coreEnvironment(), TestContext.TestContext))))),
      { numRuns: RUNS }
    )
  }, 300_000)
})
