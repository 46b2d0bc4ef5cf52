import { Context, Effect } from "effect"

/**
 * Runs an effect as one atomic unit against the repositories: all of its writes land or none
 * do, and wallet locks taken inside it are held until it ends. Postgres maps this to a
 * transaction; the memory adapter to one lock plus a snapshot it restores on failure.
 */
export class Transactor extends Context.Tag("hush/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {}

export const transactionally = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Transactor, (t) => t.withTransaction(self))
