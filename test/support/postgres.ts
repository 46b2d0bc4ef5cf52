/**
 * Test helpers for the PostgreSQL and PGlite adapters: throwaway databases on the real server,
 * a fresh schema per test, a table reset for a shared embedded database, and the core's
 * services over Postgres (for the multi-process tests' parent and children alike).
 *
 * The server is TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres. When
 * TEST_DATABASE_URL is not set and nothing answers there, the Postgres tests are skipped with
 * a warning; when it is set, an unreachable server fails them.
 */
import { SqlClient } from "@effect/sql"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, Redacted } from "effect"
import { PostgresPersistence, postgresLayerFromUrl, type PostgresPoolOptions } from "../../adapters/postgres/index.js"
import { RandomIds } from "../../adapters/webcrypto/ids.js"
import { DEFAULT_MODEL_DEFINITIONS, makeCatalog, ModelCatalog } from "../../core/domain/catalog.js"
import { DeploymentSecrets, TestSample } from "../../core/domain/deployment.js"
import { DEFAULT_LIMITS, LimitsConfig } from "../../core/domain/limits.js"

export const SERVER_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** `url` with another database name and, optionally, a search_path set at connection start. */
export const databaseUrl = (database: string, schema?: string) => {
  const url = new URL(SERVER_URL)
  url.pathname = `/${database}`
  if (schema !== undefined) url.searchParams.set("options", `-c search_path=${schema}`)
  return url.toString()
}

/** Runs statements on `url` with a short-lived client. */
export const runSql = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, f).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1, connectTimeout: "3 seconds" }))
    )
  )

/** Whether the server answers; throws when TEST_DATABASE_URL was set and it does not. */
export const postgresAvailable = async (): Promise<boolean> => {
  try {
    await runSql(SERVER_URL, (sql) => sql`SELECT 1`)
    return true
  } catch (error) {
    if (process.env.TEST_DATABASE_URL !== undefined) throw error
    console.warn(`PostgreSQL is not reachable at ${SERVER_URL}: the Postgres tests are skipped (${String(error)})`)
    return false
  }
}

/** A new, empty database; its name. */
export const createDatabase = async (prefix: string): Promise<string> => {
  const name = `${prefix}_${Date.now().toString(36)}_${process.pid}_${Math.floor(Math.random() * 1e6)}`
  await runSql(SERVER_URL, (sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  return name
}

export const dropDatabase = (name: string) =>
  runSql(SERVER_URL, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))

let schemas = 0

/**
 * PostgresPersistence in a schema of its own, created for this layer (so migrations run from
 * nothing each time) inside `database`. Schemas are dropped with the database at the end.
 */
export const freshSchemaPersistence = (database: string, options: PostgresPoolOptions = {}) => {
  const schema = `contract_${process.pid}_${++schemas}`
  const client = PgClient.layer({ ...options, url: Redacted.make(databaseUrl(database, schema)) })
  const createSchema = Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE SCHEMA ${schema}`)))
  return PostgresPersistence.pipe(Layer.provide(createSchema), Layer.provide(client))
}

/** Every table of the schema, emptied (for a database shared between tests). */
export const TABLES = [
  "accounts", "api_keys", "files", "jobs", "wallets", "credit_lots", "credit_holds", "ledger_entries", "idempotency_keys"
] as const

export const resetTables = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`TRUNCATE ${TABLES.join(", ")}`))

/**
 * The same with DELETE, in one transaction: cheaper than TRUNCATE on the few rows a test
 * leaves (TRUNCATE makes new files for every table). The triggers that keep ledger entries
 * and holds from being deleted are switched off for it (session_replication_role).
 */
export const deleteAllRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(sql.unsafe(
    `SET LOCAL session_replication_role = replica; ${TABLES.map((t) => `DELETE FROM ${t};`).join(" ")}`
  )))

export const TEST_SAMPLE = { storageKey: "samples/test-mode.mp3", sizeBytes: 48_000, bitrateKbps: 192, format: "mp3" } as const

/** What the core's job and account services need, with the given persistence. */
export const servicesOver = <ROut, E>(persistence: Layer.Layer<ROut, E>) =>
  Layer.mergeAll(
    persistence,
    RandomIds,
    Layer.succeed(LimitsConfig, DEFAULT_LIMITS),
    Layer.succeed(ModelCatalog, makeCatalog(DEFAULT_MODEL_DEFINITIONS, ["builtin"])),
    Layer.succeed(DeploymentSecrets, { cursorKey: new TextEncoder().encode("test cursor key") }),
    Layer.succeed(TestSample, TEST_SAMPLE)
  )

/** The core's services over the database at `url`. */
export const postgresServices = (url: string, options: PostgresPoolOptions = {}) =>
  servicesOver(postgresLayerFromUrl(url, options))
