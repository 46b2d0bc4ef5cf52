/**
 * The Transactor as a PostgreSQL transaction (`sql.withTransaction`, READ COMMITTED): every
 * repository call inside runs on the transaction's one connection; a failure or a defect rolls
 * it all back; a nested call is a SAVEPOINT, so it joins the outer transaction (its writes go
 * if the outer one fails) and, if it fails itself, undoes only its own writes.
 *
 * While the pool has no free connection a new transaction waits for one (node-postgres queues
 * `connect` without a time limit unless `connectTimeout` is set), so many concurrent
 * transactions queue rather than fail. Never hold one across external work (storage, ffmpeg).
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option } from "effect"
import { Transactor } from "../../core/ports/transactor.js"
import { toFault } from "./errors.js"

export const layerPostgresTransactor = Layer.effect(
  Transactor,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      sql.withTransaction(self).pipe(
        // BEGIN, COMMIT, ROLLBACK or SAVEPOINT failed: the repositories themselves only ever die
        Effect.catchAll((error) =>
          error instanceof SqlError ? Effect.die(toFault("Transactor.withTransaction", error)) : Effect.fail(error as E)
        ),
        // @effect/sql dies when COMMIT fails (its answer lost with the connection): described the same way
        Effect.catchSomeDefect((defect) =>
          defect instanceof SqlError ? Option.some(Effect.die(toFault("Transactor.withTransaction", defect))) : Option.none()
        )
      )
  }))
)
