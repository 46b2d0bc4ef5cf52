/**
 * The repositories' statements run straight on node-postgres (adapters/postgres/statements.ts)
 * on a real server: the rows and failures they give, the connection each runs on (the
 * transaction's inside one, a pooled one given back outside), and @effect/sql's traced path
 * kept for a fiber that traces.
 */
import { it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { PostgresPool, layerPostgresPool, runStatement } from "../../../adapters/postgres/index.js"
import { createDatabase, databaseUrl, dropDatabase, requirePostgres } from "../../support/postgres.js"

await requirePostgres()

type Row = Readonly<Record<string, unknown>>

/** The statement straight on the pool; its traced path counts its uses and answers nothing. */
const direct = (text: string, params: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(PostgresPool, (pool) => {
    const traced = { uses: 0 }
    return Effect.map(
      runStatement<Row>(pool, text, params, () => Effect.sync(() => (traced.uses++, []))),
      (rows) => ({ rows, tracedUses: traced.uses })
    )
  })

const backendPid = Effect.map(direct("SELECT pg_backend_pid() AS pid"), ({ rows }) => rows[0]?.pid)

describe("statements straight on node-postgres", () => {
  let database: string
  beforeAll(async () => {
    database = await createDatabase("hush_statements")
  })
  afterAll(() => dropDatabase(database))
  const pool = (maxConnections: number) => layerPostgresPool({ url: databaseUrl(database) }, { maxConnections })

  it.live("an untraced fiber gets the rows from the pool, with parameters, and never the traced path", () =>
    Effect.gen(function*() {
      const { rows, tracedUses } = yield* direct("SELECT $1::int + 1 AS n, $2::text AS s", [41, "x"]).pipe(Effect.withTracerEnabled(false))
      expect(rows).toEqual([{ n: 42, s: "x" }])
      expect(tracedUses).toBe(0)
    }).pipe(Effect.provide(pool(2))))

  it.live("a traced fiber takes @effect/sql's path (its spans)", () =>
    Effect.gen(function*() {
      const { rows, tracedUses } = yield* direct("SELECT 1 AS n").pipe(Effect.withTracerEnabled(true))
      expect(rows).toEqual([])
      expect(tracedUses).toBe(1)
    }).pipe(Effect.provide(pool(2))))

  it.live("with one connection, many statements and failures in a row: each gives its connection back, unbroken", () =>
    Effect.gen(function*() {
      const pg = yield* PostgresPool
      const first = yield* backendPid
      for (let i = 0; i < 20; i++) {
        const failure = yield* Effect.flip(direct("SELECT 1 / $1::int AS n", [0]))
        expect(failure).toBeInstanceOf(SqlError)
        expect((failure.cause as { code?: string }).code).toBe("22012")
        expect((yield* direct("SELECT $1::int AS n", [i])).rows).toEqual([{ n: i }])
      }
      // a statement's SQL failure does not cost the connection (nor what it prepared)
      expect(yield* backendPid).toBe(first)
      expect(pg.totalCount).toBe(1)
      expect(pg.idleCount).toBe(1)
    }).pipe(Effect.withTracerEnabled(false), Effect.provide(pool(1))))

  it.live("a connection lost during a statement fails it, and the next statement gets a new connection", () =>
    Effect.gen(function*() {
      const lost = yield* backendPid
      const failure = yield* Effect.flip(direct("SELECT pg_terminate_backend(pg_backend_pid())"))
      expect(failure).toBeInstanceOf(SqlError)
      const next = yield* backendPid
      expect(next).not.toBe(lost)
    }).pipe(Effect.withTracerEnabled(false), Effect.provide(pool(1))))

  it.live("inside a transaction they run on its connection: they see its writes, and its rollback undoes theirs", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe("CREATE TABLE IF NOT EXISTS statements_seen (n int)")
      // the transaction fails with what its statements saw, so it rolls back
      const seen = yield* Effect.flip(sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe("SET LOCAL application_name = 'inside'")
        yield* direct("INSERT INTO statements_seen (n) VALUES ($1)", [7])
        return yield* Effect.fail((yield* direct("SELECT current_setting('application_name') AS name, count(*)::int AS rows FROM statements_seen")).rows)
      })))
      expect(seen).toEqual([{ name: "inside", rows: 1 }])
      expect((yield* direct("SELECT count(*)::int AS rows FROM statements_seen")).rows).toEqual([{ rows: 0 }])
    }).pipe(Effect.withTracerEnabled(false), Effect.provide(pool(2))))
})
