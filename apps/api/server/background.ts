/**
 * Work the API starts but does not wait for: validating completed uploads and finishing
 * test-mode jobs. Fibers run in the server's scope, so shutdown interrupts them cleanly; a
 * file left `validating` by a shutdown is picked up again at the next start.
 */
import { Context, Duration, Effect, FiberSet, Layer, Schedule } from "effect"
import { validateFile } from "../../../core/services/files.js"
import { finishTestJob } from "../../../core/services/worker.js"
import type { AudioProbe } from "../../../core/ports/audio.js"
import type { BlobStore } from "../../../core/ports/blob-store.js"
import type { FileRepo, JobRepo, WalletRepo } from "../../../core/ports/repositories.js"
import type { Transactor } from "../../../core/ports/transactor.js"
import type { IdGenerator } from "../../../core/ports/ids.js"
import { LimitsConfig } from "../../../core/domain/limits.js"
import { retryWhileUnavailable } from "../../../core/ports/unavailable.js"
import type { JobRecord } from "../../../core/domain/records.js"
import type { TestSample } from "../../../core/domain/deployment.js"
import { LifecycleRepo } from "../../../core/ports/lifecycle.js"
import type { WebhookRepo } from "../../../core/ports/webhooks.js"
import { makeFairShare } from "./fair-share.js"

export class Background extends Context.Tag("hush/api/Background")<Background, {
  /** Schedules the validation of a completed upload; its account shares the decoders fairly with the others. */
  readonly validate: (file: { readonly id: string; readonly accountId: string }) => Effect.Effect<void>
  /** Finishes a test job the request just created, with its event (worker.ts, submitDenoiseJob and finishTestJob). */
  readonly finishTestJob: (job: JobRecord) => Effect.Effect<void>
}>() {}

/** At most this many interrupted validations are resumed at start; the rest wait for a later start. */
const RESUMED_AT_START = 1_000

type Needs =
  | AudioProbe | BlobStore | FileRepo | JobRepo | WalletRepo | Transactor | IdGenerator | LimitsConfig | TestSample | WebhookRepo

/**
 * At most this many validations decode at once; each is one ffmpeg process. They are shared
 * fairly (./fair-share.ts): an account holds a second decoder only while no other account waits.
 */
const VALIDATION_CONCURRENCY = 2

/** Storage faults during validation are retried; the audio's own verdict is final. */
const storageRetry = Schedule.exponential(Duration.millis(200)).pipe(Schedule.intersect(Schedule.recurs(4)))

export const layerBackground = Layer.scoped(Background, Effect.gen(function*() {
  const context = yield* Effect.context<Needs>()
  const fibers = yield* FiberSet.make()
  const decoders = yield* makeFairShare(VALIDATION_CONCURRENCY)
  const run = <E>(label: string, work: Effect.Effect<unknown, E, Needs>) =>
    FiberSet.run(fibers, work.pipe(
      Effect.catchAllCause((cause) => Effect.logError(`${label} failed`, cause)),
      Effect.provide(context)
    )).pipe(Effect.asVoid)
  const validate = (file: { readonly id: string; readonly accountId: string }) =>
    run(`validation of ${file.id}`, Effect.flatMap(LimitsConfig, ({ dependencyOutageMs }) =>
      // storage or the database unreachable: tried again with backoff for up to dependencyOutageMs
      // (decisions.md, Faults); the file stays validating meanwhile, and a verdict is written once
      retryWhileUnavailable(
        decoders.run(file.accountId, validateFile(file.id).pipe(Effect.retry(storageRetry))),
        { forMs: dependencyOutageMs, what: `validating ${file.id}` }
      )))
  // validations a stop interrupted resume now
  const stalled = yield* Effect.flatMap(LifecycleRepo, (repo) => repo.validatingFiles(RESUMED_AT_START))
  yield* Effect.forEach(stalled, validate, { discard: true })
  return {
    validate,
    finishTestJob: (job) => run(`test-mode job ${job.id}`, finishTestJob(job.id))
  }
}))
