/**
 * The connection pool behind `PgClient`/`SqlClient`, made here rather than by
 * `PgClient.layer` so that its connections run every parameterized statement as a named
 * (prepared) one: PostgreSQL parses and plans each distinct statement once per connection
 * instead of on every execution. Measured side by side on the 2-core machine, PostgreSQL on
 * the same cores as the API: a test-mode create (4 statements) +40 % a second, a poll +5 %.
 *
 * Names come from one table per pool (`hush_0`, `hush_1`, … by statement text), so a name
 * always means the same text on every connection. At most `MAX_NAMED_STATEMENTS` texts are
 * named; further ones run unnamed, so a statement spelled with a varying number of
 * parameters cannot grow what every connection keeps without bound. Each name's result shape
 * is kept too (result-shapes.ts, the one place that touches node-postgres's unexported fields).
 *
 * `preparedStatements: false` turns naming off, for a pooler that cannot carry named
 * statements across its server connections (PgBouncer in transaction mode before 1.21, or
 * with `max_prepared_statements = 0`): `DATABASE_PREPARED_STATEMENTS=off`.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Duration, Effect, Layer } from "effect"
import pg from "pg"
import { namedStatementClass } from "./result-shapes.js"

export const MAX_NAMED_STATEMENTS = 1_000

export interface PostgresPoolOptions {
  /** Connections the pool holds at most (default 10). */
  readonly maxConnections?: number | undefined
  readonly applicationName?: string | undefined
  /** How long a connection may take to open or to come free (default: the first 5 s, later ones unbounded, as PgClient.layer). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Named statements (default true). */
  readonly preparedStatements?: boolean | undefined
}

/** Where to connect: a URL, or its parts. */
export type PostgresConnection =
  | { readonly url: string }
  | {
    readonly host: string
    readonly port: number
    readonly user?: string | undefined
    readonly password?: string | undefined
    readonly database?: string | undefined
  }

type Query = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown

/**
 * A `pg.Client` class whose text queries with parameters and a callback (how `@effect/sql-pg`
 * runs every statement) carry a name by their text (the first `max` texts); anything else
 * passes through unchanged.
 */
export const namingClient = (max = MAX_NAMED_STATEMENTS): typeof pg.Client => {
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined && names.size < max) names.set(text, name = `hush_${names.size}`)
    return name
  }
  const NamedStatement = namedStatementClass()
  const query: Query = pg.Client.prototype.query as Query
  class NamingClient extends pg.Client {}
  const named: Query = function(config, values, callback) {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0 && typeof callback === "function") {
      const name = nameOf(config)
      if (name !== undefined) {
        // a Query made from the text and named after, not from a config object: node-postgres
        // copies a config object through its property descriptors (~1.5 % of a create)
        const statement = new NamedStatement(config, values, callback as never) as pg.Query & { name?: string }
        statement.name = name
        return query.call(this, statement)
      }
    }
    return query.call(this, config, values, callback)
  }
  Object.defineProperty(NamingClient.prototype, "query", { value: named, writable: true, configurable: true })
  return NamingClient
}

/** The pool under `PgClient`, for statements run straight on it (statements.ts). */
export class PostgresPool extends Context.Tag("hush/PostgresPool")<PostgresPool, pg.Pool>() {}

/**
 * `PgClient`, `SqlClient` and `PostgresPool` over a pool of ours; the pool is checked with
 * `SELECT 1` when built and ended with the layer (after the client's own finalizers).
 */
export const postgresPoolLayer = (connection: PostgresConnection, options: PostgresPoolOptions = {}) =>
  Layer.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const pool = new pg.Pool({
            ...("url" in connection
              ? { connectionString: connection.url }
              : { host: connection.host, port: connection.port, user: connection.user, password: connection.password, database: connection.database }),
            max: options.maxConnections ?? 10,
            application_name: options.applicationName ?? "hush",
            ...(options.connectTimeout === undefined ? {} : { connectionTimeoutMillis: Duration.toMillis(options.connectTimeout) }),
            Client: options.preparedStatements === false ? pg.Client : namingClient()
          })
          // a connection that fails while idle is dropped by the pool; the error has no caller to go to
          pool.on("error", () => {})
          try {
            await pool.query("SELECT 1")
          } catch (cause) {
            await pool.end().catch(() => {})
            throw cause
          }
          return pool
        },
        catch: (cause) => new SqlError({ cause, message: "PostgreSQL: failed to connect" })
      }).pipe(Effect.timeoutFail({
        duration: options.connectTimeout ?? Duration.seconds(5),
        onTimeout: () => new SqlError({ cause: new Error("connection timed out"), message: "PostgreSQL: connection timed out" })
      })),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ),
    (pool) => Layer.merge(PgClient.layerFromPool({ acquire: Effect.succeed(pool) }), Layer.succeed(PostgresPool, pool))
  ))
