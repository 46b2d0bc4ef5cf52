/**
 * The repository contract against a real PostgreSQL server.
 *
 * Isolation: one database per run (created here, dropped at the end) and a fresh schema per
 * test, selected with `search_path` at connection start. Each test therefore starts from an
 * empty schema and runs the migrations from nothing; no test can see another's rows, and no
 * reset between tests can be forgotten. A database per test would cost a CREATE DATABASE
 * (hundreds of ms) each; TRUNCATE between tests would not exercise the migrations per test.
 */
import { it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Option } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { PostgresFault, verifyLedger } from "../../../adapters/postgres/index.js"
import { HoldRecord } from "../../../core/domain/records.js"
import { WalletRepo } from "../../../core/ports/repositories.js"
import { makeHold } from "../../contracts/fixtures.js"
import { accountsContracts } from "../../contracts/accounts.js"
import { lifecycleContract } from "../../contracts/lifecycle.js"
import { operationalStatsContract } from "../../contracts/operational-stats.js"
import { paymentsContracts } from "../../contracts/payments.js"
import { repositoryContracts } from "../../contracts/repositories.js"
import { webhookContract } from "../../contracts/webhooks.js"
import { createDatabase, dropDatabase, freshSchemaPersistence, requirePostgres } from "../../support/postgres.js"

await requirePostgres()

describe("postgres", () => {
  let database = ""
  beforeAll(async () => {
    database = await createDatabase("hush_contract")
  })
  afterAll(async () => {
    if (database !== "") await dropDatabase(database)
  })

  repositoryContracts("postgres", () => freshSchemaPersistence(database))
  lifecycleContract("postgres", () => freshSchemaPersistence(database))
  operationalStatsContract("postgres", () => freshSchemaPersistence(database), { hasConnections: true })
  accountsContracts("postgres", () => freshSchemaPersistence(database))
  paymentsContracts("postgres", () => freshSchemaPersistence(database))
  webhookContract("postgres", () => freshSchemaPersistence(database))
})

/** The money rules hold in the database itself, whatever a client sends. */
describe("postgres schema guards", () => {
  let database = ""
  beforeAll(async () => {
    database = await createDatabase("hush_guards")
  })
  afterAll(async () => {
    if (database !== "") await dropDatabase(database)
  })

  const refused = (statement: Effect.Effect<unknown, SqlError>, constraint: string) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(statement)
      const cause = error.cause as { code?: string; constraint?: string; message?: string }
      expect(cause.code).toBe("23514")
      expect(cause.constraint).toBe(constraint)
    })

  const entry = (sql: SqlClient.SqlClient, seq: number, kind: string, delta: [number, number], after: [number, number]) =>
    sql`INSERT INTO ledger_entries (id, account_id, seq, kind, reason, balance_delta, reserved_delta, balance_after,
      reserved_after, created_at) VALUES (${`txn_g${seq}_${kind}`}, 'acct_g', ${seq}, ${kind}, 'guard test', ${delta[0]},
      ${delta[1]}, ${after[0]}, ${after[1]}, 0)`

  it.effect("no overdraft, no broken chain, no gap, no rewriting of the ledger", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* entry(sql, 1, "grant", [1_000, 0], [1_000, 0])
      // reserving more than the balance: the wallet row's CHECK, which the append trigger meets first
      yield* refused(entry(sql, 2, "hold", [0, 1_001], [1_000, 1_001]), "wallets_available_not_negative")
      yield* refused(
        sql`UPDATE wallets SET reserved = 1001 WHERE account_id = 'acct_g'`,
        "wallets_available_not_negative"
      )
      // *_after that are not the previous values plus the deltas
      yield* refused(entry(sql, 2, "hold", [0, 100], [1_000, 200]), "ledger_entries_chain")
      // a gap or a repeat
      yield* refused(entry(sql, 3, "hold", [0, 100], [1_000, 100]), "ledger_entries_in_sequence")
      yield* refused(entry(sql, 1, "hold", [0, 100], [1_000, 100]), "ledger_entries_in_sequence")
      yield* entry(sql, 2, "hold", [0, 100], [1_000, 100])
      yield* refused(sql`UPDATE ledger_entries SET balance_after = 5000 WHERE seq = 1`, "ledger_entries_append_only")
      yield* refused(sql`DELETE FROM ledger_entries WHERE seq = 2`, "ledger_entries_append_only")
      const [wallet] = yield* sql`SELECT last_seq, balance, reserved FROM wallets WHERE account_id = 'acct_g'`
      expect(wallet).toEqual({ last_seq: "2", balance: "1000", reserved: "100" })
      // the operators' checks: the chain and the wallet row hold, but no lot or hold backs these entries
      const found = yield* verifyLedger
      expect(found.chain).toEqual([])
      expect(found.wallets).toEqual([])
      expect(found.lotsAndHolds).toEqual([{ account_id: "acct_g", balance: "1000", remaining: null, reserved: "100", held: null }])
    }).pipe(Effect.provide(freshSchemaPersistence(database))))

  it.effect("a hold is resolved once, keeps its amount, and its draws add up", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const insertHold = (id: string, amount: number, draws: string) =>
        sql`INSERT INTO credit_holds (id, account_id, job_id, amount_micros, draws, status, created_at)
          VALUES (${id}, 'acct_g', ${`job_${id}`}, ${amount}, ${draws}::jsonb, 'open', 0)`
      yield* refused(insertHold("h0", 300, `[{"lotId":"lot_1","micros":200}]`), "credit_holds_draws_sum")
      yield* insertHold("h1", 300, `[{"lotId":"lot_1","micros":200},{"lotId":"lot_2","micros":100}]`)
      yield* refused(sql`UPDATE credit_holds SET amount_micros = 1 WHERE id = 'h1'`, "credit_holds_resolved_once")
      yield* sql`UPDATE credit_holds SET status = 'captured', resolved_at = 5 WHERE id = 'h1'`
      yield* refused(sql`UPDATE credit_holds SET status = 'released', resolved_at = 6 WHERE id = 'h1'`, "credit_holds_resolved_once")
      yield* refused(sql`UPDATE credit_holds SET status = 'open', resolved_at = NULL WHERE id = 'h1'`, "credit_holds_resolved_once")
      // and through the port: a defect that names the operation and the reason
      const stale = new HoldRecord({ ...makeHold({ id: "h1", jobId: "job_h1", accountId: "acct_g" }), status: "released", resolvedAt: 7 })
      const exit = yield* Effect.exit(Effect.flatMap(WalletRepo, (w) => w.apply({ lots: [], holds: [stale], entries: [] })))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      if (Exit.isFailure(exit)) {
        const defect = Option.getOrThrow(Cause.dieOption(exit.cause))
        expect(defect).toBeInstanceOf(PostgresFault)
        expect((defect as PostgresFault).message).toContain("WalletRepo.apply refused: hold 'h1' of job 'job_h1' is no longer open")
      }
    }).pipe(Effect.provide(freshSchemaPersistence(database))))
})
