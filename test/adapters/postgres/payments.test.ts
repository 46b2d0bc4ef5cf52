/**
 * Payment events applied on PostgreSQL, where concurrency is real: one paid event delivered
 * many times at once (and under other event ids) credits once; a refund racing a job's hold
 * never takes reserved micros.
 */
import { it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { CheckoutRecord } from "../../../core/domain/payments.js"
import { CheckoutRepo } from "../../../core/ports/payments.js"
import { WalletRepo } from "../../../core/ports/repositories.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import { applyPaymentEvent } from "../../../core/services/payments.js"
import { walletStep } from "../../../core/services/wallet.js"
import { hold } from "../../../core/wallet/wallet.js"
import { transactionally } from "../../../core/ports/transactor.js"
import { createDatabase, dropDatabase, freshSchemaPersistence, requirePostgres, servicesOver } from "../../support/postgres.js"

await requirePostgres()

describe("payments on postgres", () => {
  let database = ""
  beforeAll(async () => {
    database = await createDatabase("hush_payments")
  })
  afterAll(async () => {
    if (database !== "") await dropDatabase(database)
  })

  const services = () => servicesOver(freshSchemaPersistence(database))

  const paidCheckout = (amount: number) =>
    Effect.gen(function*() {
      const { account } = yield* createAccountWithKeys({ email: `pay-${Math.random().toString(36).slice(2)}@example.com` })
      const checkout = new CheckoutRecord({
        id: `chk_${Math.random().toString(36).slice(2).padEnd(20, "a")}`, accountId: account.id, amountMicros: amount, status: "open",
        provider: "fake", url: "http://hush.test/x", providerSessionId: null, paymentRef: null, refundedMicros: 0, dispute: null,
        createdAt: 0, paidAt: null
      })
      yield* Effect.flatMap(CheckoutRepo, (c) => c.insert(checkout))
      return checkout
    })

  it.live("the same paid event 8 times at once, and 8 other ids at once: one purchase entry", () =>
    Effect.gen(function*() {
      const checkout = yield* paidCheckout(10_000_000)
      const paid = (eventId: string) =>
        applyPaymentEvent({ _tag: "CheckoutPaid", eventId, checkoutId: checkout.id, amountMicros: checkout.amountMicros, paymentRef: "pi_pg" })
      const same = yield* Effect.all(Array.from({ length: 8 }, () => paid("evt_pg_same")), { concurrency: "unbounded" })
      expect(same.filter((o) => o === "credited")).toHaveLength(1)
      expect(same.filter((o) => o === "duplicate")).toHaveLength(7)
      const others = yield* Effect.all(Array.from({ length: 8 }, (_, i) => paid(`evt_pg_other_${i}`)), { concurrency: "unbounded" })
      expect(others.every((o) => o === "no_change")).toBe(true)
      const ledger = yield* Effect.flatMap(WalletRepo, (w) => w.ledgerPage({ accountId: checkout.accountId, limit: 100 }))
      expect(ledger.map((e) => [e.kind, e.balanceDelta, e.checkoutId])).toEqual([["purchase", 10_000_000, checkout.id]])
    }).pipe(Effect.provide(services())), 60_000)

  it.live("refunds racing holds: never below what is reserved", () =>
    Effect.gen(function*() {
      const checkout = yield* paidCheckout(10_000_000)
      yield* applyPaymentEvent({ _tag: "CheckoutPaid", eventId: "evt_pg_r0", checkoutId: checkout.id, amountMicros: 10_000_000, paymentRef: "pi_pg_r" })
      const holds = Array.from({ length: 6 }, (_, i) =>
        Effect.either(transactionally(walletStep(checkout.accountId, (w, now, mint) => hold(w, { jobId: `job_pg_${i}`, amountMicros: 1_500_000 }, now, mint)))))
      const refunds = Array.from({ length: 6 }, (_, i) =>
        applyPaymentEvent({
          _tag: "Refunded", eventId: `evt_pg_r${i + 1}`, target: { checkoutId: null, paymentRef: "pi_pg_r" }, refundedTotalMicros: (i + 1) * 1_500_000
        }))
      const outcomes = yield* Effect.all([...holds, ...refunds], { concurrency: "unbounded" })
      const held = outcomes.slice(0, 6).filter((o) => Either.isEither(o) && Either.isRight(o)).length
      const wallet = yield* transactionally(Effect.flatMap(WalletRepo, (w) => w.lock(checkout.accountId)))
      expect(wallet.reserved).toBe(held * 1_500_000)
      expect(wallet.balance - wallet.reserved).toBeGreaterThanOrEqual(0)
      const ledger = yield* Effect.flatMap(WalletRepo, (w) => w.ledgerPage({ accountId: checkout.accountId, limit: 100 }))
      const refunded = -ledger.filter((e) => e.kind === "refund").reduce((s, e) => s + e.balanceDelta, 0)
      expect(10_000_000 - refunded).toBe(wallet.balance)
      for (const entry of ledger) expect(entry.balanceAfter - entry.reservedAfter).toBeGreaterThanOrEqual(0)
    }).pipe(Effect.provide(services())), 60_000)
})
