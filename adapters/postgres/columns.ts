/**
 * Row schemas' building blocks for repositories that decode with `SqlSchema`: node-postgres
 * returns `bigint`, `count` and `sum` as strings, which must come back as safe integers (a
 * value that is not one is a defect at the boundary, never a rounded number).
 */
import type { Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orFault } from "./errors.js"

export const PgInt = Schema.Union(Schema.Int, Schema.compose(Schema.NumberFromString, Schema.Int))
export const PgIntOrNull = Schema.NullOr(PgInt)

/**
 * A statement (or a SqlSchema query) whose failures are defects naming the operation; not
 * interrupted midway (see repositories.ts: a cancel on PGlite's single connection stalls).
 */
export const run = (operation: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
  self.pipe(orFault(operation), Effect.uninterruptible)

export type Fragment = Statement.Fragment
