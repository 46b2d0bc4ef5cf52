/** The public status page's component checks, cached briefly so polling it costs little. */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { TestSample } from "../../../core/domain/deployment.js"
import { BlobStore } from "../../../core/ports/blob-store.js"
import { AccountRepo, JobRepo } from "../../../core/ports/repositories.js"
import { PublicStatus } from "../../../core/schema/index.js"
import { toIso } from "../../../core/time.js"

type ComponentState = "ok" | "degraded" | "down" | "unknown"

export class StatusProbe extends Context.Tag("hush/api/StatusProbe")<StatusProbe, {
  readonly report: (now: number) => Effect.Effect<PublicStatus>
}>() {}

const CACHE_MS = 5_000
const CHECK_TIMEOUT = Duration.seconds(2)

const check = <E, R>(probe: Effect.Effect<unknown, E, R>): Effect.Effect<ComponentState, never, R> =>
  probe.pipe(
    Effect.timeout(CHECK_TIMEOUT),
    Effect.as("ok" as const),
    Effect.catchAllCause(() => Effect.succeed("down" as const))
  )

export const layerStatusProbe = (options: { readonly gpuConfigured: boolean }) =>
  Layer.effect(StatusProbe, Effect.gen(function*() {
    const context = yield* Effect.context<AccountRepo | JobRepo | BlobStore | TestSample>()
    let cached: { at: number; value: PublicStatus } | null = null
    const measure = (now: number) =>
      Effect.gen(function*() {
        const sample = yield* TestSample
        const [database, queue, storage] = yield* Effect.all([
          check(Effect.flatMap(AccountRepo, (accounts) => accounts.get("acct_status_probe"))),
          check(Effect.flatMap(JobRepo, (jobs) => jobs.lapsedLeases(now, 1))),
          check(Effect.flatMap(BlobStore, (blobs) => blobs.stat(sample.mp3.storageKey)).pipe(Effect.flatMap(Option.match({
            onNone: () => Effect.fail("sample missing"),
            onSome: Effect.succeed
          }))))
        ], { concurrency: "unbounded" })
        const components = { api: "ok" as const, database, queue, storage, gpu: options.gpuConfigured ? "ok" as const : "unknown" as const }
        const states = Object.values(components)
        const status = database === "down" ? "down" : states.some((s) => s === "down" || s === "degraded") ? "degraded" : "ok"
        return new PublicStatus({ status, components, updated_at: toIso(now) })
      }).pipe(Effect.provide(context))
    return {
      report: (now) =>
        cached !== null && now - cached.at < CACHE_MS
          ? Effect.succeed(cached.value)
          : Effect.tap(measure(now), (value) => Effect.sync(() => { cached = { at: now, value } }))
    }
  }))
