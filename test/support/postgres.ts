/**
 * Test helpers for the PostgreSQL adapters: throwaway databases on the real server,
 * a fresh schema per test, a table reset for a shared embedded database, and the core's
 * services over Postgres (for the multi-process tests' parent and children alike).
 *
 * The server is TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres; when
 * nothing answers there, the tests' global setup starts an embedded one and sets
 * TEST_DATABASE_URL (test/support/global-setup.ts). An unreachable server fails the tests
 * (they are never skipped).
 */
import { SqlClient } from "@effect/sql"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, Redacted } from "effect"
import { layerPostgresPersistence, layerPostgresFromUrl, layerPostgresPool, type PostgresPoolOptions } from "../../adapters/postgres/index.js"
import { layerRandomIds } from "../../adapters/webcrypto/ids.js"
import { DEFAULT_MODEL_DEFINITIONS, makeCatalog, ModelCatalog } from "../../core/domain/catalog.js"
import { AccountSettingsConfig, defaultAccountSettings } from "../../core/domain/account-settings.js"
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
export const runSql = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, f).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1, connectTimeout: "3 seconds" }))
    )
  )

/**
 * Fails loudly when the server does not answer: these tests are never skipped.
 */
export const requirePostgres = async (): Promise<void> => {
  try {
    await runSql(SERVER_URL, (sql) => sql`SELECT 1`)
  } catch (error) {
    throw new Error(`PostgreSQL is not reachable at ${SERVER_URL} (set TEST_DATABASE_URL to point elsewhere): ${String(error)}`)
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
 * layerPostgresPersistence (plus its SqlClient) in a schema of its own, created for this layer (so
 * migrations run from nothing each time) inside `database`. Schemas go with the database.
 */
export const freshSchemaPersistence = (database: string, options: PostgresPoolOptions = {}) => {
  const schema = `contract_${process.pid}_${++schemas}`
  const client = layerPostgresPool({ url: databaseUrl(database, schema) }, options)
  const createSchema = Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE SCHEMA ${schema}`)))
  return layerPostgresPersistence.pipe(Layer.provide(createSchema), Layer.provideMerge(client))
}

/** Every table of the schema. */
export const TABLES = [
  "accounts", "api_keys", "files", "jobs", "wallets", "credit_lots", "credit_holds", "ledger_entries", "idempotency_keys",
  "users", "sessions", "email_tokens", "oauth_identities", "oauth_states", "checkouts", "payment_events",
  "webhook_deliveries", "webhook_endpoints"
] as const

/**
 * Empties every table (for a database shared between tests), with DELETE in one transaction:
 * on the few rows a test leaves this is cheaper than TRUNCATE, which makes new files for every
 * table. The triggers that
 * keep ledger entries and holds from being deleted are off for it (session_replication_role).
 */
export const deleteAllRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(sql.unsafe(
    `SET LOCAL session_replication_role = replica; ${TABLES.map((t) => `DELETE FROM ${t};`).join(" ")}`
  )))

export const TEST_SAMPLE = {
  mp3: { storageKey: "samples/test-mode.mp3", sizeBytes: 48_000, bitrateKbps: 192, format: "mp3" },
  wav: { storageKey: "samples/test-mode.wav", sizeBytes: 192_044, bitrateKbps: 768, format: "wav" },
  flac: { storageKey: "samples/test-mode.flac", sizeBytes: 53_000, bitrateKbps: 212, format: "flac" },
  opus: { storageKey: "samples/test-mode.opus", sizeBytes: 30_000, bitrateKbps: 96, format: "opus" }
} as const

/** What the core's job and account services need, with the given persistence. */
export const servicesOver = <ROut, E>(persistence: Layer.Layer<ROut, E>) =>
  Layer.mergeAll(
    persistence,
    layerRandomIds,
    Layer.succeed(LimitsConfig, DEFAULT_LIMITS),
    Layer.succeed(ModelCatalog, makeCatalog(DEFAULT_MODEL_DEFINITIONS, ["builtin"])),
    Layer.succeed(DeploymentSecrets, { cursorKey: new TextEncoder().encode("test cursor key") }),
    Layer.succeed(TestSample, TEST_SAMPLE),
    Layer.succeed(AccountSettingsConfig, defaultAccountSettings("http://hush.test"))
  )

/** The core's services over the database at `url`. */
export const postgresServices = (url: string, options: PostgresPoolOptions = {}) =>
  servicesOver(layerPostgresFromUrl(url, options))
