/**
 * A dependency that did not answer (decisions.md, Faults): the database unreachable or silent,
 * object storage timing out or answering 5xx. Adapters report it so (the database adapter as a
 * defect `DependencyUnavailable`, object storage as a `BlobError` with `unavailable`), never as
 * a fault of the request or of the data. What that means to callers:
 *   - an API request answers `503 service_unavailable` with `Retry-After`, never 500;
 *   - a worker, a validation or the sweeper tries again later, with backoff, inside its lease.
 */
import { Cause, Clock, Data, Duration, Effect, Exit } from "effect"
import { BlobError } from "./blob-store.js"

export type Dependency = "database" | "storage"

export class DependencyUnavailable extends Data.TaggedError("DependencyUnavailable")<{
  readonly dependency: Dependency
  /** What failed and how (for the logs only: it names hosts and operations). */
  readonly message: string
  readonly cause?: unknown
}> {}

/** The dependency an error says was unreachable, if it says so. */
export const unavailableDependency = (error: unknown): Dependency | undefined => {
  if (error instanceof DependencyUnavailable) return error.dependency
  if (error instanceof BlobError && error.unavailable === true) return "storage"
  return undefined
}

/** The first unreachable dependency among a cause's failures and defects. */
export const unavailableIn = (cause: Cause.Cause<unknown>): Dependency | undefined => {
  for (const error of [...Cause.failures(cause), ...Cause.defects(cause)]) {
    const dependency = unavailableDependency(error)
    if (dependency !== undefined) return dependency
  }
  return undefined
}

/** The pause before retry `attempt` (1, 2, …): 500 ms, doubling, at most 10 s. */
export const unavailableBackoff = (attempt: number) => Duration.millis(Math.min(10_000, 500 * 2 ** Math.min(attempt - 1, 5)))

/**
 * Runs `self` again, after `unavailableBackoff`, while it fails or dies because a dependency was
 * unavailable, until `forMs` have passed since the first such failure; then its last outcome
 * stands. Any other outcome stands at once. `self` must be safe to run again: each move it makes
 * checks the state it finds (a job's status and lease, a file's status) before changing it.
 */
export const retryWhileUnavailable = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  options: { readonly forMs: number; readonly what: string }
): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    let firstAt: number | undefined
    for (let attempt = 1;; attempt++) {
      const exit = yield* Effect.exit(self)
      if (Exit.isSuccess(exit)) return exit.value
      const dependency = unavailableIn(exit.cause)
      const now = yield* Clock.currentTimeMillis
      firstAt ??= now
      if (dependency === undefined || now - firstAt >= options.forMs) return yield* exit
      const pause = unavailableBackoff(attempt)
      yield* Effect.logWarning(`${options.what}: ${dependency} unavailable; trying again in ${Duration.toMillis(pause)} ms`)
      yield* Effect.sleep(pause)
    }
  })
