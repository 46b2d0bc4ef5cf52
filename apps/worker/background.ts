/**
 * The worker's duties as one layer: the job loop (claims under leases, runs the model), the
 * webhook delivery loop (./webhooks.ts) and the lifecycle sweeper on a schedule. `npm start` includes it; `npm run worker` runs it alone.
 * Closing the layer's scope stops claiming and hands a running job back (see loop.ts).
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { hostname } from "node:os"
import { sweepAccounts } from "../../core/services/account-sweep.js"
import { sweepLifecycle } from "../../core/services/lifecycle.js"
import { runWorker } from "./loop.js"
import { runDeliveries } from "./webhooks.js"

export interface WorkerOptions {
  /** The most jobs at once (WORKER_CONCURRENCY; default and rule in loop.ts). */
  readonly concurrency?: number
  /** Pause after finding the queue empty. Default 1 second. */
  readonly pollInterval?: Duration.DurationInput
  /** How often the sweeper runs. Default 10 minutes. */
  readonly sweepEvery?: Duration.DurationInput
  /** Webhook attempts in flight at once (default in ./webhooks.ts). */
  readonly webhookConcurrency?: number
  /** The blob store's own housekeeping, run with each sweep (apps/runtime storageLayers). */
  readonly housekeeping?: Effect.Effect<void, unknown>
}

export const workerOwner = () => `worker-${hostname()}-${process.pid}`

export const layerWorker = (options: WorkerOptions = {}) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const owner = workerOwner()
    yield* Effect.logInfo(`worker ${owner} claiming live jobs`)
    yield* Effect.forkScoped(runWorker({ owner, concurrency: options.concurrency, pollInterval: options.pollInterval }))
    yield* Effect.forkScoped(runDeliveries({ owner, concurrency: options.webhookConcurrency, pollInterval: options.pollInterval }))
    const sweep = Effect.zipLeft(sweepLifecycle, Effect.zip(sweepAccounts, options.housekeeping ?? Effect.void)).pipe(
      Effect.tap((swept) =>
        swept.purgedFiles + swept.expiredOutputs + swept.sweptStaging > 0 ? Effect.logInfo("lifecycle sweep", swept) : Effect.void),
      Effect.catchAllCause((cause) => Effect.logError("lifecycle sweep failed", cause))
    )
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(options.sweepEvery ?? Duration.minutes(10))))
  }))
