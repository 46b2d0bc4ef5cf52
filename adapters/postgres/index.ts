/**
 * PostgreSQL persistence: every repository port and the Transactor over an @effect/sql
 * `SqlClient`, with the schema migrated when the layer is built.
 *
 * Compose:
 *   - `PostgresPersistence`: needs `SqlClient` (e.g. from `PgClient.layer(...)`), provides the
 *     ports; fails to build with MigrationError | SqlError.
 *   - `postgresLayerFromUrl(url, options)`: the same with its own pool, plus `PgClient` and
 *     `SqlClient` for health checks.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Layer, Redacted } from "effect"
import { type KeyCacheListen, PostgresKeyCacheListen } from "./key-cache.js"
import { PostgresMigrations } from "./migrations.js"
import { PostgresOperationalStats } from "./operational-stats.js"
import { PostgresRepositories } from "./repositories.js"
import { PostgresTransactor } from "./transactor.js"

export * from "./errors.js"
export { AUTH_CHANGED_CHANNEL, AUTH_LISTENER_NAME, type KeyCacheListen, PostgresKeyCache, PostgresKeyCacheListen } from "./key-cache.js"
export * from "./operational-stats.js"
export { migrate, MIGRATIONS, MIGRATIONS_TABLE, PostgresMigrations } from "./migrations.js"
export * from "./payments.js"
export * from "./repositories.js"
export * from "./transactor.js"
export * from "./usage.js"
export * from "./users.js"
export * from "./webhooks.js"
export * from "./verify.js"

/** All repositories and the Transactor, after the migrations ran. Requires SqlClient. */
export const PostgresPersistence = Layer.mergeAll(PostgresRepositories, PostgresTransactor, PostgresOperationalStats).pipe(
  Layer.provide(PostgresMigrations)
)

export type PostgresPoolOptions = Omit<PgClient.PgClientConfig, "url">

/**
 * Persistence on the database at `url` (`postgres://user:pass@host:5432/db`). The pool holds
 * up to `maxConnections` (default 10) connections; transactions beyond that wait for one. The
 * key cache listens as `keyCacheListen` says (key-cache.ts; default: like the pool).
 */
export const postgresLayerFromUrl = (url: string, options: PostgresPoolOptions = {}, keyCacheListen: KeyCacheListen = "pool") =>
  Layer.provideMerge(
    PostgresPersistence,
    Layer.merge(PgClient.layer({ applicationName: "hush", ...options, url: Redacted.make(url) }), Layer.succeed(PostgresKeyCacheListen, keyCacheListen))
  )
