/**
 * Checkouts and applied payment events over PostgreSQL. `claim` is one INSERT … ON CONFLICT
 * DO NOTHING inside the caller's transaction: a concurrent claim of the same id waits for the
 * first transaction and then inserts nothing, so exactly one applies the event.
 */
import { Effect, Layer } from "effect"
import { CheckoutRecord } from "../../core/domain/payments.js"
import { CheckoutRepo, PaymentEventRepo } from "../../core/ports/payments.js"
import { repositoryStatements } from "./statements.js"
import { int, orNull, statement, table, text, toInt } from "./table.js"

const checkouts = table("checkouts", CheckoutRecord, {
  id: text("id"),
  accountId: text("account_id"),
  amountMicros: int("amount_micros"),
  status: text("status"),
  provider: text("provider"),
  url: text("url"),
  providerSessionId: orNull(text("provider_session_id")),
  paymentRef: orNull(text("payment_ref")),
  refundedMicros: int("refunded_micros"),
  dispute: orNull(text("dispute")),
  createdAt: int("created_at"),
  paidAt: orNull(int("paid_at"))
})

const CHECKOUT_BY_ID = statement(["id"], (p) => `SELECT ${checkouts.columns} FROM checkouts WHERE id = ${p.id}`)
const CHECKOUT_LOCK = statement(["id"], (p) => `SELECT ${checkouts.columns} FROM checkouts WHERE id = ${p.id} FOR UPDATE`)
const CHECKOUT_LOCK_BY_PAYMENT = statement(["paymentRef"], (p) =>
  `SELECT ${checkouts.columns} FROM checkouts WHERE payment_ref = ${p.paymentRef} FOR UPDATE`)
const CHECKOUTS_OPEN_DISPUTES = statement(["accountId"], (p) =>
  `SELECT count(*) AS n FROM checkouts WHERE account_id = ${p.accountId} AND dispute = 'open'`)

export const layerPostgresCheckoutRepo = Layer.effect(CheckoutRepo, Effect.map(repositoryStatements, (q) => ({
  insert: (checkout) => Effect.asVoid(q.rows("CheckoutRepo.insert", checkouts.insert, checkouts.params(checkout))),
  get: (id) => q.first("CheckoutRepo.get", CHECKOUT_BY_ID, [id], checkouts.decode),
  lock: (id) => q.first("CheckoutRepo.lock", CHECKOUT_LOCK, [id], checkouts.decode),
  lockByPaymentRef: (ref) => q.first("CheckoutRepo.lockByPaymentRef", CHECKOUT_LOCK_BY_PAYMENT, [ref], checkouts.decode),
  update: (checkout) => Effect.asVoid(q.rows("CheckoutRepo.update", checkouts.update, checkouts.params(checkout))),
  countOpenDisputes: (accountId) =>
    Effect.map(q.rows("CheckoutRepo.countOpenDisputes", CHECKOUTS_OPEN_DISPUTES, [accountId]), (rows) => toInt(rows[0]?.n ?? 0, "count"))
})))

const PAYMENT_EVENT_CLAIM = statement(["id", "type", "receivedAt"], (p) =>
  `INSERT INTO payment_events (id, type, received_at) VALUES (${p.id}, ${p.type}, ${p.receivedAt}) ON CONFLICT (id) DO NOTHING RETURNING 1`)

export const layerPostgresPaymentEventRepo = Layer.effect(PaymentEventRepo, Effect.map(repositoryStatements, (q) => ({
  claim: (event) =>
    Effect.map(q.rows("PaymentEventRepo.claim", PAYMENT_EVENT_CLAIM, [event.id, event.type, event.receivedAt]), (rows) => rows.length === 1)
})))

export const layerPostgresPaymentRepositories = Layer.mergeAll(layerPostgresCheckoutRepo, layerPostgresPaymentEventRepo)
