/**
 * SQL failures become defects (the repository ports fail only with defects), each with a message
 * that says which operation failed and why: the SQLSTATE, the constraint and the server's text.
 * A database that could not be reached, went away or stopped answering is a
 * `DependencyUnavailable` (core/ports/unavailable.ts): callers answer 503 or try again later.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Data, Effect } from "effect"
import { DependencyUnavailable } from "../../core/ports/unavailable.js"

/** A fault of the database or of the data it was given: never a domain outcome. */
export class PostgresFault extends Data.TaggedError("PostgresFault")<{
  readonly operation: string
  readonly message: string
  /** SQLSTATE, when the server answered with one (e.g. 23514 check_violation). */
  readonly code: string | null
  readonly constraint: string | null
  readonly cause?: unknown
}> {}

const SQLSTATE_NAMES: Record<string, string> = {
  "23505": "unique_violation",
  "23514": "check_violation",
  "23502": "not_null_violation",
  "23503": "foreign_key_violation",
  "40001": "serialization_failure",
  "40P01": "deadlock_detected",
  "P0001": "raise_exception",
  "57014": "query_canceled",
  "08006": "connection_failure"
}

interface DriverError {
  readonly code?: unknown
  readonly constraint?: unknown
  readonly detail?: unknown
  readonly message?: unknown
  readonly table?: unknown
}

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null)

/**
 * SQLSTATEs of a session the server could not open or ended: connection exceptions (class 08,
 * but 08P01, a protocol violation, is a bug), the server shutting down or starting
 * (57P01–57P03), too many connections (53300).
 */
const UNAVAILABLE_SQLSTATE = /^(08(?!P01)...|57P0[123]|53300)$/

/** What node-postgres and the OS say when the connection failed, without a SQLSTATE. */
const UNAVAILABLE_MESSAGE =
  /connection terminated|not queryable|timeout|timed out|did not answer|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|socket hang up|connect(ion)? (error|closed)/i

/** The error under an SqlError (node-postgres's), or the error itself. */
const driverOf = (error: unknown): DriverError => error instanceof SqlError ? (error.cause as DriverError) ?? {} : (error as DriverError) ?? {}

/** Whether a driver error says the database was unreachable or stopped answering, not that it refused the statement. */
export const isUnavailable = (error: unknown): boolean => {
  const driver = driverOf(error)
  const code = text(driver.code)
  // a SQLSTATE is the server's verdict; other codes are the OS's (ECONNREFUSED…)
  if (code !== null && /^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_SQLSTATE.test(code)
  return UNAVAILABLE_MESSAGE.test(`${code ?? ""} ${text(driver.message) ?? ""}`)
}

/**
 * Describes a driver error (node-postgres DatabaseError or anything else) as a PostgresFault,
 * or, when the database was unreachable, as DependencyUnavailable.
 */
export const toFault = (operation: string, error: unknown): PostgresFault | DependencyUnavailable => {
  const fault = describeFault(operation, error)
  return isUnavailable(error) ? new DependencyUnavailable({ dependency: "database", message: fault.message, cause: fault }) : fault
}

const describeFault = (operation: string, error: unknown): PostgresFault => {
  const driver = driverOf(error)
  const code = text(driver.code)
  const constraint = text(driver.constraint)
  const parts = [
    code === null ? null : `${SQLSTATE_NAMES[code] ?? "sqlstate"} ${code}`,
    constraint === null ? null : `constraint ${constraint}`,
    text(driver.table) === null ? null : `table ${driver.table as string}`
  ].filter((p): p is string => p !== null)
  const reason = text(driver.message) ?? (error instanceof SqlError ? error.message : String(error))
  const detail = text(driver.detail)
  return new PostgresFault({
    operation,
    code,
    constraint,
    message: `${operation} failed${parts.length > 0 ? ` (${parts.join(", ")})` : ""}: ${reason}${detail === null ? "" : ` — ${detail}`}`,
    cause: error
  })
}

/** Runs a statement; any SQL failure becomes a defect naming the operation. */
export const orFault = (operation: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
  Effect.catchAll(self, (error) => Effect.die(toFault(operation, error)))

/** A defect for data the database accepted but the adapter must refuse (e.g. a lost update). */
export const refuse = (operation: string, message: string) =>
  Effect.die(new PostgresFault({ operation, code: null, constraint: null, message: `${operation} refused: ${message}` }))
