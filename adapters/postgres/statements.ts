/**
 * The repositories' statements (repositories.ts `rows`) run straight on node-postgres when
 * nothing traces them: on the transaction's connection inside `Transactor.withTransaction`,
 * else on a pooled one, as `@effect/sql-pg` would, with the same rows and the same `SqlError`.
 * `@effect/sql`'s statement path makes, for every statement, a span (a no-op one when tracing
 * is off), a scope for the connection and a fiber-ref change for `withoutTransform`: counted
 * in the runtime's loop, a poll took 290 steps and made 6 contexts with it, 227 and 4 without.
 * A traced fiber keeps that path, and with it the `sql.execute` spans.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, FiberRef, Option } from "effect"
import type pg from "pg"
import { orFault, refuse } from "./errors.js"
import { PostgresPool } from "./pool.js"
import type { Row } from "./table.js"

/** As @effect/sql-pg reads a result: a multi-statement text gives one row list per statement. */
const rowsOf = (result: pg.QueryResult | ReadonlyArray<pg.QueryResult>): ReadonlyArray<unknown> =>
  Array.isArray(result) ? result.map((r: pg.QueryResult) => r.rows ?? []) : (result as pg.QueryResult).rows ?? []

const failed = (cause: unknown) => Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))

/**
 * Whether a connection whose statement failed with `error` can serve the next one: yes after
 * the server refused the statement (a SQLSTATE such as 22012), no when the connection itself
 * went (class 08, or the server shutting the session down: 57P01–57P03) or the failure is not
 * the server's. node-postgres may not have seen the socket close yet when the statement's
 * error arrives, and the pool would hand the dead connection to the next statement.
 */
const keepsConnection = (error: unknown) => {
  const code = (error as { readonly code?: unknown } | null)?.code
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith("08") && !code.startsWith("57P0")
}

/**
 * One statement on a connection of `pool`, given back after it; a connection that fails
 * during it, or whose statement failed with it, is given back broken, so the pool drops it.
 */
const onPooledConnection = (pool: pg.Pool, text: string, params: ReadonlyArray<unknown>) =>
  Effect.async<ReadonlyArray<unknown>, SqlError>((resume) => {
    pool.connect((cause, client, release) => {
      if (cause !== undefined && cause !== null) return resume(failed(cause))
      if (client === undefined) return resume(failed(new Error("no client returned")))
      let done = false
      const onError = (error: Error) => {
        if (done) return
        done = true
        release(error)
        resume(failed(error))
      }
      client.once("error", onError)
      client.query(text, params as Array<unknown>, (error: Error | null, result: pg.QueryResult) => {
        client.off("error", onError)
        if (done) return
        done = true
        if (error === null || error === undefined) {
          release()
          return resume(Effect.succeed(rowsOf(result)))
        }
        release(keepsConnection(error) ? undefined : error)
        resume(failed(error))
      })
    })
  })

/**
 * `text` with `params`, without the client's name transforms; `traced` makes @effect/sql's
 * statement for the same (rows of type `A`, as the caller's text selects them).
 */
export const runStatement = <A>(
  pool: pg.Pool,
  text: string,
  params: ReadonlyArray<unknown>,
  traced: () => Effect.Effect<ReadonlyArray<A>, SqlError>
): Effect.Effect<ReadonlyArray<A>, SqlError> =>
  Effect.withFiberRuntime((fiber) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled)) return traced()
    const transaction = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
    return (transaction._tag === "Some"
      ? transaction.value[0].execute(text, params, undefined)
      : onPooledConnection(pool, text, params)) as Effect.Effect<ReadonlyArray<A>, SqlError>
  })

/** The statements every repository runs, bound to the `SqlClient` and `PostgresPool` in context. */
export const repositoryStatements = Effect.map(Effect.all([SqlClient.SqlClient, PostgresPool]), ([sql, pool]) => {
  /**
   * Rows of a statement, without the client's name transforms (the mappers read snake_case).
   * Uninterruptible: an interrupted fiber stops after the statement, not during it. (Interrupted
   * mid-statement, node-postgres sends pg_cancel_backend over another pooled connection, which
   * waits for a free one when the pool is busy.) Every statement here is a short, indexed one.
   */
  const rows = (operation: string, text: string, params: ReadonlyArray<unknown> = []) =>
    runStatement<Row>(pool, text, params, () => sql.unsafe<Row>(text, params).withoutTransform).pipe(orFault(operation), Effect.uninterruptible)
  const first = <A>(operation: string, text: string, params: ReadonlyArray<unknown>, to: (r: Row) => A) =>
    Effect.map(rows(operation, text, params), (rs) => Option.map(Option.fromNullable(rs[0]), to))
  const many = <A>(operation: string, text: string, params: ReadonlyArray<unknown>, to: (r: Row) => A) =>
    Effect.map(rows(operation, text, params), (rs) => rs.map(to))
  /** A statement that must touch exactly one row (… RETURNING 1). */
  const one = (operation: string, text: string, params: ReadonlyArray<unknown>, what: string) =>
    Effect.flatMap(rows(operation, text, params), (rs) => (rs.length === 1 ? Effect.void : refuse(operation, what)))
  return { sql, rows, first, many, one }
})
