/**
 * Versioned, forward-only migrations, run at start by @effect/sql's Migrator.
 *
 * The migrations are bundled modules loaded with `Migrator.fromRecord` (no file-system loader,
 * so the bundled build needs no migration files). Keys must look like `0001_name`: the Migrator
 * silently skips anything else, so `MIGRATIONS` is checked here too.
 *
 * Several nodes may start at once on one database: the Migrator runs every pending migration
 * in one transaction under `LOCK TABLE effect_sql_migrations IN ACCESS EXCLUSIVE MODE`, so one
 * node migrates and the others wait, then find nothing to do. The only gap is the Migrator's
 * own creation of that table (a check then a CREATE, which two fresh nodes could race); it is
 * created here first, under a transaction-scoped advisory lock.
 */
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option } from "effect"
import { isUnavailable } from "./errors.js"
import { PostgresPool, withoutQueryDeadline } from "./pool.js"
import initial from "./migrations/0001_initial.js"
import lifecycle from "./migrations/0002_lifecycle.js"
import deletedValidations from "./migrations/0003_deleted_validations.js"
import accounts from "./migrations/0006_accounts.js"
import jobOptions from "./migrations/0007_job_options.js"
import payments from "./migrations/0008_payments.js"
import webhooks from "./migrations/0009_webhooks.js"
import authChanges from "./migrations/0010_auth_changes.js"
import jobReport from "./migrations/0011_job_report.js"

export const MIGRATIONS_TABLE = "effect_sql_migrations"

/** Every migration, by `NNNN_name`. Append only. */
export const MIGRATIONS: Record<string, Effect.Effect<unknown, unknown, SqlClient.SqlClient>> = {
  "0001_initial": initial,
  "0002_lifecycle": lifecycle,
  "0003_deleted_validations": deletedValidations,
  "0006_accounts": accounts,
  "0007_job_options": jobOptions,
  "0008_payments": payments,
  "0009_webhooks": webhooks,
  "0010_auth_changes": authChanges,
  "0011_job_report": jobReport
}

for (const key of Object.keys(MIGRATIONS)) {
  if (!/^\d{4}_[a-z0-9_]+$/.test(key)) throw new Error(`migration key '${key}' must look like 0001_name`)
}

/** An arbitrary constant: the advisory lock key under which the migrations table is created. */
const BOOTSTRAP_LOCK = 7_262_531_001

/** The Migrator of @effect/sql (what PgMigrator.run wraps, minus its pg_dump schema dumps). */
const runMigrator = Migrator.make({})

/** Runs the pending migrations; the ids and names it ran (none when up to date). */
export const migrate: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.zipRight(
    sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`,
    sql.unsafe(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      migration_id integer PRIMARY KEY,
      created_at timestamp with time zone NOT NULL DEFAULT now(),
      name text NOT NULL
    )`)
  ))
  return yield* runMigrator({ loader: Migrator.fromRecord(MIGRATIONS as Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>), table: MIGRATIONS_TABLE })
})

/**
 * Runs the migrations when the layer is built, without the pool's statement deadline (a
 * migration may build an index on a large table); provides nothing.
 */
export const layerPostgresMigrations: Layer.Layer<never, Migrator.MigrationError | SqlError, SqlClient.SqlClient> =
  Layer.effectDiscard(Effect.flatMap(Effect.serviceOption(PostgresPool), Option.match({
    onNone: () => migrate,
    onSome: (pool) => withoutQueryDeadline(pool, migrate)
  })).pipe(
    // @effect/sql dies when COMMIT or ROLLBACK fails: a connection lost meanwhile is a failure
    // like any other, which a starting process waits out (layerPostgresFromUrl)
    Effect.catchSomeDefect((defect) => {
      const lost = defect instanceof Migrator.MigrationError ? defect.cause : defect
      return lost instanceof SqlError && isUnavailable(lost) ? Option.some(Effect.fail(lost)) : Option.none()
    })
  ))
