/**
 * Checkouts and applied payment events in memory. A memory transaction holds the one lock of
 * the whole store, so `lock` is a read inside it.
 */
import { Effect, HashMap, Layer, Option } from "effect"
import { CheckoutRepo, PaymentEventRepo } from "../../core/ports/payments.js"
import { MemoryDb } from "./store.js"

export const layerMemoryCheckoutRepo = Layer.effect(CheckoutRepo, Effect.map(MemoryDb, (db) => {
  const get = (id: string) => db.read((s) => HashMap.get(s.checkouts, id))
  return {
    insert: (checkout) => db.modify((s) => [undefined, { ...s, checkouts: HashMap.set(s.checkouts, checkout.id, checkout) }] as const),
    update: (checkout) => db.modify((s) => [undefined, { ...s, checkouts: HashMap.set(s.checkouts, checkout.id, checkout) }] as const),
    get,
    lock: get,
    lockByPaymentRef: (paymentRef) =>
      db.read((s) => Option.fromNullable([...HashMap.values(s.checkouts)].find((c) => c.paymentRef === paymentRef))),
    countOpenDisputes: (accountId) =>
      db.read((s) => [...HashMap.values(s.checkouts)].filter((c) => c.accountId === accountId && c.dispute === "open").length)
  }
}))

export const layerMemoryPaymentEventRepo = Layer.effect(PaymentEventRepo, Effect.map(MemoryDb, (db) => ({
  claim: (event) =>
    db.modify((s) =>
      HashMap.has(s.paymentEvents, event.id)
        ? [false, s] as const
        : [true, { ...s, paymentEvents: HashMap.set(s.paymentEvents, event.id, event.receivedAt) }] as const)
})))

export const layerMemoryPaymentRepositories = Layer.mergeAll(layerMemoryCheckoutRepo, layerMemoryPaymentEventRepo)
