/**
 * `GET /readyz`: whether this node can serve now: its database, blob store and rate-limit
 * store answer (each within 2 s), and it is not draining (shutting down). A load balancer
 * takes a node out on 503; `/v1/health` stays a pure liveness answer.
 */
import { Context, Duration, Effect, Layer, Option, Ref } from "effect"
import { TestSample } from "../../../../core/domain/deployment.js"
import { ServiceUnavailable } from "../../../../core/errors.js"
import { BlobStore } from "../../../../core/ports/blob-store.js"
import { RateLimiter } from "../../../../core/ports/rate-limiter.js"
import { AccountRepo } from "../../../../core/ports/repositories.js"

export type CheckState = "ok" | "down"
export interface ReadinessReport {
  readonly ready: boolean
  readonly checks: { readonly database: CheckState; readonly storage: CheckState; readonly rate_limit_store: CheckState; readonly draining: boolean }
}

/** Set when the node starts shutting down: from then on it is not ready, though it still answers. */
export class Draining extends Context.Tag("hush/api/Draining")<Draining, Ref.Ref<boolean>>() {}

/** The flag, set by the API layer's finalizer: the first thing to happen when the node stops. */
export const layerDraining = Layer.scoped(Draining, Effect.gen(function*() {
  const draining = yield* Ref.make(false)
  yield* Effect.addFinalizer(() => Ref.set(draining, true))
  return draining
}))

const TIMEOUT = Duration.seconds(2)

const check = <E, R>(probe: Effect.Effect<unknown, E, R>): Effect.Effect<CheckState, never, R> =>
  probe.pipe(Effect.timeout(TIMEOUT), Effect.as("ok" as const), Effect.catchAllCause(() => Effect.succeed("down" as const)))

export const readiness = Effect.gen(function*() {
  const draining = yield* Effect.flatMap(Draining, Ref.get)
  const sample = yield* TestSample
  const [database, storage, rateLimitStore] = yield* Effect.all([
    check(Effect.flatMap(AccountRepo, (accounts) => accounts.get("acct_readiness_probe"))),
    check(Effect.flatMap(BlobStore, (blobs) => blobs.stat(sample.mp3.storageKey)).pipe(Effect.flatMap(Option.match({
      onNone: () => Effect.fail("sample missing"),
      onSome: Effect.succeed
    })))),
    // peek takes no token
    check(Effect.flatMap(RateLimiter, (limiter) => limiter.peek({ key: "readyz:probe", capacity: 1, refillPerSecond: 1 })))
  ], { concurrency: "unbounded" })
  const report: ReadinessReport = {
    ready: !draining && database === "ok" && storage === "ok" && rateLimitStore === "ok",
    checks: { database, storage, rate_limit_store: rateLimitStore, draining }
  }
  return report
})

export const notReady = (report: ReadinessReport) => {
  const failing = Object.entries(report.checks).filter(([, state]) => state === "down" || state === true).map(([name]) => name)
  return new ServiceUnavailable({ detail: `this node is not ready: ${failing.join(", ")}`, retryAfterSeconds: 5 })
}
