/**
 * The contract of the payments repositories (core/ports/payments.ts): checkouts and the ids of
 * applied provider events. One suite every persistence adapter passes; each test a fresh store.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Layer } from "effect"
import { CheckoutRecord } from "../../core/domain/payments.js"
import { CheckoutRepo, PaymentEventRepo } from "../../core/ports/payments.js"
import { Transactor, transactionally } from "../../core/ports/transactor.js"
import { fixtureId, T0 } from "./fixtures.js"

export type PaymentsPersistence = CheckoutRepo | PaymentEventRepo | Transactor

const makeCheckout = (o: Partial<ConstructorParameters<typeof CheckoutRecord>[0]> = {}) => {
  const id = o.id ?? fixtureId("chk")
  return new CheckoutRecord({
    id, accountId: "acct_a", amountMicros: 25_000_000, status: "open", provider: "fake", url: `http://localhost/fake-checkout/${id}`,
    providerSessionId: `cs_fake_${id.slice(4)}`, paymentRef: null, refundedMicros: 0, dispute: null, createdAt: T0, paidAt: null, ...o
  })
}

export const paymentsContracts = (name: string, makeLayer: () => Layer.Layer<PaymentsPersistence, unknown, never>) => {
  const test = (title: string, body: Effect.Effect<void, unknown, PaymentsPersistence>) =>
    it.live(title, () => Effect.provide(body, makeLayer()))

  describe(`${name} payments repositories`, () => {
    test("CheckoutRepo: insert, get, lock, update round-trip every field", Effect.gen(function*() {
      const checkouts = yield* CheckoutRepo
      const open = makeCheckout()
      yield* checkouts.insert(open)
      expect(Option.getOrThrow(yield* checkouts.get(open.id))).toEqual(open)
      expect(Option.isNone(yield* checkouts.get("chk_missing"))).toBe(true)
      const paid = new CheckoutRecord({
        ...open, status: "paid", paidAt: T0 + 10, paymentRef: "pi_123", refundedMicros: 5_000_000, dispute: "lost", providerSessionId: null
      })
      yield* transactionally(Effect.gen(function*() {
        expect(Option.getOrThrow(yield* checkouts.lock(open.id))).toEqual(open)
        yield* checkouts.update(paid)
      }))
      expect(Option.getOrThrow(yield* checkouts.get(open.id))).toEqual(paid)
      expect(Option.isNone(yield* transactionally(checkouts.lock("chk_missing")))).toBe(true)
    }))

    test("CheckoutRepo: lockByPaymentRef finds the paid checkout of a payment", Effect.gen(function*() {
      const checkouts = yield* CheckoutRepo
      const a = makeCheckout({ status: "paid", paidAt: T0, paymentRef: "pi_a" })
      const b = makeCheckout({ status: "paid", paidAt: T0, paymentRef: "pi_b" })
      yield* checkouts.insert(a)
      yield* checkouts.insert(b)
      yield* checkouts.insert(makeCheckout())
      expect(Option.getOrThrow(yield* transactionally(checkouts.lockByPaymentRef("pi_b")))).toEqual(b)
      expect(Option.isNone(yield* transactionally(checkouts.lockByPaymentRef("pi_c")))).toBe(true)
    }))

    test("CheckoutRepo: countOpenDisputes counts the account's open disputes only", Effect.gen(function*() {
      const checkouts = yield* CheckoutRepo
      yield* checkouts.insert(makeCheckout({ dispute: "open" }))
      yield* checkouts.insert(makeCheckout({ dispute: "open" }))
      yield* checkouts.insert(makeCheckout({ dispute: "won" }))
      yield* checkouts.insert(makeCheckout({ dispute: "lost" }))
      yield* checkouts.insert(makeCheckout({ accountId: "acct_b", dispute: "open" }))
      expect(yield* checkouts.countOpenDisputes("acct_a")).toBe(2)
      expect(yield* checkouts.countOpenDisputes("acct_b")).toBe(1)
      expect(yield* checkouts.countOpenDisputes("acct_c")).toBe(0)
    }))

    test("PaymentEventRepo: an id is claimed once; a failed transaction gives its claim back", Effect.gen(function*() {
      const events = yield* PaymentEventRepo
      expect(yield* transactionally(events.claim({ id: "evt_1", type: "CheckoutPaid", receivedAt: T0 }))).toBe(true)
      expect(yield* transactionally(events.claim({ id: "evt_1", type: "CheckoutPaid", receivedAt: T0 + 1 }))).toBe(false)
      const failed = yield* Effect.either(transactionally(Effect.zipRight(
        events.claim({ id: "evt_2", type: "Refunded", receivedAt: T0 }),
        Effect.fail("rolled back")
      )))
      expect(failed._tag).toBe("Left")
      expect(yield* transactionally(events.claim({ id: "evt_2", type: "Refunded", receivedAt: T0 }))).toBe(true)
    }))

    test("PaymentEventRepo: 8 concurrent claims of one id, each in its own transaction: exactly one wins", Effect.gen(function*() {
      const events = yield* PaymentEventRepo
      const claims = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => transactionally(events.claim({ id: "evt_race", type: "CheckoutPaid", receivedAt: T0 + i }))),
        { concurrency: "unbounded" }
      )
      expect(claims.filter((won) => won)).toHaveLength(1)
    }))
  })
}
