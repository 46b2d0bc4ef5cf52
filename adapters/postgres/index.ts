/**
 * PostgreSQL persistence: every repository port and the Transactor over an @effect/sql
 * `SqlClient`, with the schema migrated when the layer is built.
 *
 * Compose:
 *   - `layerPostgresPersistence`: needs `SqlClient` and `PostgresPool` (from `layerPostgresPool`),
 *     provides the ports; fails to build with MigrationError | SqlError.
 *   - `layerPostgresFromUrl(url, options)`: the same with its own pool (pool.ts: named
 *     statements), plus `PgClient` and `SqlClient` for health checks.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { isUnavailable } from "./errors.js"
import { type KeyCacheListen, PostgresKeyCacheListen } from "./key-cache.js"
import { layerPostgresMigrations } from "./migrations.js"
import { layerPostgresOperationalStats } from "./operational-stats.js"
import { layerPostgresPool, type PostgresPoolOptions } from "./pool.js"
import { layerPostgresRepositories } from "./repositories.js"
import { layerPostgresTransactor } from "./transactor.js"

export * from "./errors.js"
export { AUTH_CHANGED_CHANNEL, AUTH_LISTENER_NAME, type KeyCacheListen, PostgresKeyCache, PostgresKeyCacheListen } from "./key-cache.js"
export * from "./operational-stats.js"
export { migrate, MIGRATIONS, MIGRATIONS_TABLE, layerPostgresMigrations } from "./migrations.js"
export * from "./payments.js"
export { MAX_NAMED_STATEMENTS, namingClient, type PostgresConnection, PostgresPool, layerPostgresPool, type PostgresPoolOptions } from "./pool.js"
export { runStatement } from "./statements.js"
export * from "./repositories.js"
export * from "./transactor.js"
export * from "./usage.js"
export * from "./users.js"
export * from "./webhooks.js"
export * from "./verify.js"

/** All repositories and the Transactor, after the migrations ran. Requires SqlClient and PostgresPool. */
export const layerPostgresPersistence = Layer.mergeAll(layerPostgresRepositories, layerPostgresTransactor, layerPostgresOperationalStats).pipe(
  Layer.provide(layerPostgresMigrations)
)

/**
 * Persistence on the database at `url` (`postgres://user:pass@host:5432/db`). The pool holds
 * up to `maxConnections` (default 10) connections; transactions beyond that wait for one;
 * `preparedStatements: false` for a pooler that cannot keep named statements (pool.ts). The
 * key cache listens as `keyCacheListen` says (key-cache.ts; default: like the pool).
 */
export const layerPostgresFromUrl = (url: string, options: PostgresPoolOptions = {}, keyCacheListen: KeyCacheListen = "pool") =>
  Layer.provideMerge(
    layerPostgresPersistence,
    Layer.merge(layerPostgresPool({ url }, options), Layer.succeed(PostgresKeyCacheListen, keyCacheListen))
  ).pipe(Layer.retry(waitForDatabase(options.startupWait ?? DEFAULT_STARTUP_WAIT)))

/**
 * A process that starts while its database is unreachable (restarting, or cut off) waits for it,
 * trying again with backoff for up to `startupWait` (decisions.md, Faults: processes resume by
 * themselves when it returns), rather than exiting for its supervisor to start it again. Any
 * other failure (a refused password, a migration that fails) stops the start at once.
 */
export const DEFAULT_STARTUP_WAIT = Duration.minutes(1)

const waitForDatabase = (wait: Duration.DurationInput) =>
  Schedule.exponential(Duration.millis(500)).pipe(
    Schedule.union(Schedule.spaced(Duration.seconds(5))),
    Schedule.upTo(wait),
    Schedule.whileInput((error: unknown) => isUnavailable(error)),
    Schedule.tapInput((error: unknown) => Effect.logWarning(`PostgreSQL is unreachable; trying again: ${String((error as { message?: unknown })?.message ?? error)}`))
  )
