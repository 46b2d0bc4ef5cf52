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
 *
 * Nothing waits on the database without end (decisions.md, Faults): a connection opens, or comes
 * free, within `connectTimeout`, and a statement is answered within `queryTimeout`, else its
 * connection is destroyed (its statement and any queued behind it fail, and the pool drops it).
 * A server that went silent (a partition, a half-open socket) would otherwise hold the
 * statement, and the uninterruptible fiber that waits for it, forever, and leave the pool
 * full of connections that never answer again. Migrations run without the statement deadline
 * (`withoutQueryDeadline`): an index built on a large table may take minutes.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Duration, Effect, Layer } from "effect"
import pg from "pg"
import { namedStatementClass } from "./result-shapes.js"

export const MAX_NAMED_STATEMENTS = 1_000
export const DEFAULT_CONNECT_TIMEOUT = Duration.seconds(10)
export const DEFAULT_QUERY_TIMEOUT = Duration.seconds(10)

export interface PostgresPoolOptions {
  /** Connections the pool holds at most (default 10). */
  readonly maxConnections?: number | undefined
  readonly applicationName?: string | undefined
  /** How long a connection may take to open or to come free (default DEFAULT_CONNECT_TIMEOUT). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** How long a statement may wait for its answer before its connection is destroyed (default DEFAULT_QUERY_TIMEOUT; 0: never). */
  readonly queryTimeout?: Duration.DurationInput | undefined
  /** How long a process starting while the database is unreachable waits for it (layerPostgresFromUrl; default 1 minute). */
  readonly startupWait?: Duration.DurationInput | undefined
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

/** The statement deadline of one pool: its length, and how many callers have it suspended (migrations). */
interface QueryDeadline {
  readonly ms: number
  suspended: number
}

type Callback = (error: Error | null, result?: unknown) => void

/**
 * A `pg.Client` class whose text queries with parameters and a callback (how `@effect/sql-pg`
 * runs every statement) carry a name by their text (the first `max` texts, when `naming`);
 * and whose statements with a callback are answered within the deadline, else the connection
 * is destroyed (its socket, so node-postgres fails every statement on it and the pool drops it).
 */
export const namingClient = (max = MAX_NAMED_STATEMENTS, deadline?: QueryDeadline, naming = true): typeof pg.Client => {
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined && names.size < max) names.set(text, name = `hush_${names.size}`)
    return name
  }
  const NamedStatement = namedStatementClass()
  const query: Query = pg.Client.prototype.query as Query
  class NamingClient extends pg.Client {}
  /** The callback, wrapped so that a statement unanswered past the deadline destroys the connection. */
  const withDeadline = (client: pg.Client, callback: Callback): Callback => {
    if (deadline === undefined || deadline.ms <= 0 || deadline.suspended > 0) return callback
    const timer = setTimeout(() => {
      const socket = (client as unknown as { readonly connection?: { readonly stream?: { destroy(error?: Error): void } } }).connection?.stream
      socket?.destroy(new Error(`PostgreSQL did not answer within ${deadline.ms} ms; the connection was closed`))
    }, deadline.ms)
    return (error, result) => {
      clearTimeout(timer)
      callback(error, result)
    }
  }
  const named: Query = function(config, values, callback) {
    if (typeof callback === "function") callback = withDeadline(this, callback as Callback)
    else if (typeof values === "function") values = withDeadline(this, values as Callback)
    if (naming && typeof config === "string" && Array.isArray(values) && values.length > 0 && typeof callback === "function") {
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

const deadlines = new WeakMap<pg.Pool, QueryDeadline>()

/**
 * Runs `self` with the statement deadline of `pool` suspended (statements started meanwhile,
 * by anyone, have none): for migrations, which run once at start and may be long.
 */
export const withoutQueryDeadline = <A, E, R>(pool: pg.Pool, self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const deadline = deadlines.get(pool)
  if (deadline === undefined) return self
  return Effect.acquireUseRelease(
    Effect.sync(() => deadline.suspended++),
    () => self,
    () => Effect.sync(() => deadline.suspended--)
  )
}

/** The pool under `PgClient`, for statements run straight on it (statements.ts). */
export class PostgresPool extends Context.Tag("hush/PostgresPool")<PostgresPool, pg.Pool>() {}

/**
 * `PgClient`, `SqlClient` and `PostgresPool` over a pool of ours; the pool is checked with
 * `SELECT 1` when built and ended with the layer (after the client's own finalizers).
 */
export const layerPostgresPool = (connection: PostgresConnection, options: PostgresPoolOptions = {}) =>
  Layer.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const deadline: QueryDeadline = { ms: Duration.toMillis(options.queryTimeout ?? DEFAULT_QUERY_TIMEOUT), suspended: 0 }
          const pool = new pg.Pool({
            ...("url" in connection
              ? { connectionString: connection.url }
              : { host: connection.host, port: connection.port, user: connection.user, password: connection.password, database: connection.database }),
            max: options.maxConnections ?? 10,
            application_name: options.applicationName ?? "hush",
            connectionTimeoutMillis: Duration.toMillis(options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT),
            // a peer that vanished is noticed on an idle connection too
            keepAlive: true,
            Client: namingClient(MAX_NAMED_STATEMENTS, deadline, options.preparedStatements !== false)
          })
          deadlines.set(pool, deadline)
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
        duration: options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT,
        onTimeout: () => new SqlError({ cause: new Error("connection timed out"), message: "PostgreSQL: connection timed out" })
      })),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ),
    (pool) => Layer.merge(PgClient.layerFromPool({ acquire: Effect.succeed(pool) }), Layer.succeed(PostgresPool, pool))
  ))
