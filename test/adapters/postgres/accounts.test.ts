/**
 * Migration 0006 on a real PostgreSQL: existing accounts' addresses move to users (the oldest
 * account keeps an address several shared; malformed ones are left out), and the new tables
 * guard their rules themselves: one user per address whatever its case, well-formed addresses,
 * secrets only as SHA-256 hex.
 */
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import type { SqlError } from "@effect/sql/SqlError"
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { migrate, MIGRATIONS, MIGRATIONS_TABLE, layerPostgresPool } from "../../../adapters/postgres/index.js"
import { createDatabase, databaseUrl, dropDatabase, requirePostgres } from "../../support/postgres.js"

await requirePostgres()

let schemas = 0

/** A client on a fresh schema of `database`, nothing migrated. */
const freshSchema = (database: string) => {
  const schema = `accounts_${process.pid}_${++schemas}`
  return Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE SCHEMA ${schema}`))).pipe(
    Layer.provideMerge(layerPostgresPool({ url: databaseUrl(database, schema) }))
  )
}

const refused = (statement: Effect.Effect<unknown, SqlError>, code: string) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip(statement)
    expect((error.cause as { code?: string }).code).toBe(code)
  })

describe("postgres: accounts schema", () => {
  let database = ""
  beforeAll(async () => {
    database = await createDatabase("hush_accounts")
  })
  afterAll(async () => {
    if (database !== "") await dropDatabase(database)
  })

  it.effect("0006 moves each address to a user of its account, the oldest account keeping a shared one", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const before = Object.fromEntries(Object.entries(MIGRATIONS).filter(([key]) => key < "0006"))
      yield* Migrator.make({})({ loader: Migrator.fromRecord(before as never), table: MIGRATIONS_TABLE })
      const account = (id: string, email: string, verified: boolean, createdAt: number) =>
        sql`INSERT INTO accounts (id, name, email, status, has_purchased, terms_version, training_opt_in, email_verified, created_at)
          VALUES (${id}, 'n', ${email}, 'active', false, '2026-01-01', false, ${verified}, ${createdAt})`
      yield* account("acct_aaaa", "Ada@Example.com", true, 1_000)
      yield* account("acct_bbbb", " ada@example.com ", false, 2_000)
      yield* account("acct_cccc", "grace@example.com", false, 3_000)
      yield* account("acct_dddd", "not an address", true, 4_000)
      yield* migrate
      const users = yield* sql`SELECT id, account_id, email, password_hash, email_verified_at, created_at FROM users ORDER BY account_id`
      expect(users).toEqual([
        { id: "user_aaaa", account_id: "acct_aaaa", email: "Ada@Example.com", password_hash: null, email_verified_at: "1000", created_at: "1000" },
        { id: "user_cccc", account_id: "acct_cccc", email: "grace@example.com", password_hash: null, email_verified_at: null, created_at: "3000" }
      ])
      const columns = yield* sql`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'accounts'`
      expect(columns.map((c) => c.column_name)).not.toContain("email")
    }).pipe(Effect.provide(freshSchema(database))))

  it.effect("users: one per address in any case, well-formed addresses; secrets stored as SHA-256 hex", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate
      const user = (id: string, account: string, email: string) =>
        sql`INSERT INTO users (id, account_id, email, created_at) VALUES (${id}, ${account}, ${email}, 0)`
      yield* user("user_1", "acct_1", "Ada@example.com")
      yield* refused(user("user_2", "acct_2", "ada@EXAMPLE.com"), "23505")
      yield* refused(user("user_3", "acct_1", "other@example.com"), "23505")
      yield* refused(user("user_4", "acct_4", " padded@example.com"), "23514")
      yield* refused(user("user_5", "acct_5", "no-at-sign"), "23514")
      yield* refused(user("user_6", "acct_6", `${"x".repeat(250)}@e.co`), "23514")
      yield* refused(sql`INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at) VALUES ('plain-secret', 'user_1', 0, 0)`, "23514")
      yield* refused(sql`INSERT INTO sessions (id_hash, user_id, created_at, last_seen_at) VALUES (${"a".repeat(64)}, 'user_1', 10, 5)`, "23514")
      yield* refused(sql`INSERT INTO email_tokens (hash, user_id, purpose, email, created_at, expires_at)
        VALUES (${"b".repeat(64)}, 'user_1', 'login', 'a@b.c', 0, 1)`, "23514")
      yield* refused(sql`INSERT INTO email_tokens (hash, user_id, purpose, email, created_at, expires_at)
        VALUES (${"b".repeat(64)}, 'user_1', 'verify_email', 'a@b.c', 5, 5)`, "23514")
      yield* refused(sql`INSERT INTO oauth_identities (provider, subject, user_id, created_at) VALUES ('facebook', '1', 'user_1', 0)`, "23514")
      yield* refused(sql`INSERT INTO oauth_states (hash, provider, code_verifier, accept_terms, created_at, expires_at)
        VALUES (${"c".repeat(64)}, 'oidc', 'short', false, 0, 1)`, "23514")
    }).pipe(Effect.provide(freshSchema(database))))
})
