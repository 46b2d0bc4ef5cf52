/**
 * Checkouts and applied payment events over PostgreSQL. `claim` is one INSERT … ON CONFLICT
 * DO NOTHING inside the caller's transaction: a concurrent claim of the same id waits for the
 * first transaction and then inserts nothing, so exactly one applies the event.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import { CheckoutRecord, CheckoutStatus, DisputeState } from "../../core/domain/payments.js"
import { CheckoutRepo, PaymentEventRepo } from "../../core/ports/payments.js"
import { PgInt, PgIntOrNull, run } from "./columns.js"

const CheckoutRow = Schema.transform(
  Schema.Struct({
    id: Schema.String,
    account_id: Schema.String,
    amount_micros: PgInt,
    status: CheckoutStatus,
    provider: Schema.String,
    url: Schema.String,
    provider_session_id: Schema.NullOr(Schema.String),
    payment_ref: Schema.NullOr(Schema.String),
    refunded_micros: PgInt,
    dispute: Schema.NullOr(DisputeState),
    created_at: PgInt,
    paid_at: PgIntOrNull
  }),
  Schema.typeSchema(CheckoutRecord),
  {
    strict: true,
    decode: (r) => new CheckoutRecord({
      id: r.id, accountId: r.account_id, amountMicros: r.amount_micros, status: r.status, provider: r.provider, url: r.url,
      providerSessionId: r.provider_session_id, paymentRef: r.payment_ref, refundedMicros: r.refunded_micros,
      dispute: r.dispute, createdAt: r.created_at, paidAt: r.paid_at
    }),
    encode: (c) => ({
      id: c.id, account_id: c.accountId, amount_micros: c.amountMicros, status: c.status, provider: c.provider, url: c.url,
      provider_session_id: c.providerSessionId, payment_ref: c.paymentRef, refunded_micros: c.refundedMicros,
      dispute: c.dispute, created_at: c.createdAt, paid_at: c.paidAt
    })
  }
)

const COLUMNS = "id, account_id, amount_micros, status, provider, url, provider_session_id, payment_ref, refunded_micros, dispute, created_at, paid_at"
const Count = Schema.Struct({ n: PgInt })

export const PostgresCheckoutRepo = Layer.effect(CheckoutRepo, Effect.map(SqlClient.SqlClient, (sql) => {
  const toRow = (checkout: CheckoutRecord) => Schema.encodeSync(CheckoutRow)(checkout) as Record<string, unknown>
  const one = (execute: (value: string) => Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    SqlSchema.findOne({ Request: Schema.String, Result: CheckoutRow, execute })
  const get = one((id) => sql`SELECT ${sql.literal(COLUMNS)} FROM checkouts WHERE id = ${id}`)
  const lock = one((id) => sql`SELECT ${sql.literal(COLUMNS)} FROM checkouts WHERE id = ${id} FOR UPDATE`)
  const lockByPaymentRef = one((ref) => sql`SELECT ${sql.literal(COLUMNS)} FROM checkouts WHERE payment_ref = ${ref} FOR UPDATE`)
  const openDisputes = SqlSchema.single({
    Request: Schema.String,
    Result: Count,
    execute: (accountId) => sql`SELECT count(*) AS n FROM checkouts WHERE account_id = ${accountId} AND dispute = 'open'`
  })
  return {
    insert: (checkout) => sql`INSERT INTO checkouts ${sql.insert(toRow(checkout))}`.pipe(Effect.asVoid, run("CheckoutRepo.insert")),
    get: (id) => get(id).pipe(run("CheckoutRepo.get")),
    lock: (id) => lock(id).pipe(run("CheckoutRepo.lock")),
    lockByPaymentRef: (ref) => lockByPaymentRef(ref).pipe(run("CheckoutRepo.lockByPaymentRef")),
    update: (checkout) =>
      sql`UPDATE checkouts SET ${sql.update(toRow(checkout), ["id"])} WHERE id = ${checkout.id}`.pipe(Effect.asVoid, run("CheckoutRepo.update")),
    countOpenDisputes: (accountId) => Effect.map(openDisputes(accountId), (r) => r.n).pipe(run("CheckoutRepo.countOpenDisputes"))
  }
}))

export const PostgresPaymentEventRepo = Layer.effect(PaymentEventRepo, Effect.map(SqlClient.SqlClient, (sql) => ({
  claim: (event) =>
    sql`INSERT INTO payment_events (id, type, received_at) VALUES (${event.id}, ${event.type}, ${event.receivedAt})
      ON CONFLICT (id) DO NOTHING RETURNING 1 AS inserted`.pipe(
      Effect.map((rows) => rows.length === 1),
      run("PaymentEventRepo.claim")
    )
})))

export const PostgresPaymentRepositories = Layer.mergeAll(PostgresCheckoutRepo, PostgresPaymentEventRepo)
