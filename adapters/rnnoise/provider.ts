/**
 * The built-in runner: RNNoise and GTCRN on this machine's CPUs. Reads the input object, streams it
 * through the pipeline and writes the output object, never holding either whole. One
 * long job uses every core: its chunks are denoised on a pool of worker threads.
 */
import { availableParallelism } from "node:os"
import { Duration, Effect, Layer, Option, Ref, Stream } from "effect"
import type { AudioReportRecord } from "../../core/domain/audio-report.js"
import { GTCRN, RNNOISE } from "../../core/domain/catalog.js"
import { OUTPUT_FORMATS } from "../../core/domain/denoise-options.js"
import { makeJobSteps } from "../../core/observability/steps.js"
import { BlobError, BlobStore } from "../../core/ports/blob-store.js"
import { DenoiseProvider, ProviderFailure } from "../../core/ports/denoise-provider.js"
import { DEFAULT_ADDRESS_SPACE_BYTES } from "../ffmpeg/process.js"
import type { EngineModel } from "./engine.mjs"
import { denoiseToOutput } from "./pipeline.js"
import { makeChunkPool } from "./pool.js"

export const BUILTIN_RUNNER = "builtin"

/** The catalog's models this runner runs, and the engine's name for each. */
const BUILTIN_MODELS: { readonly [id: string]: EngineModel } = { [RNNOISE.id]: "rnnoise", [GTCRN.id]: "gtcrn" }

export interface RnnoiseProviderOptions {
  /** Worker threads shared by the jobs of this process; 1 denoises in the calling thread. Default: every core. */
  readonly threads?: number
  readonly ffmpegPath?: string
  readonly chunkSeconds?: number
  readonly warmupSeconds?: number
  /** A job's deadline: this much, plus `deadlinePerAudioSecondMs` per second of validated audio (defaults: 10 minutes + real time). */
  readonly deadlineBaseMs?: number
  readonly deadlinePerAudioSecondMs?: number
}

/**
 * Decoding stops this long after the validated duration: the validation decode and this one
 * may count a few samples apart (resampling, codec delay), never a second.
 */
export const DECODE_MARGIN_SECONDS = 1

/** The pipeline runs 16× real time on one core: real time plus ten minutes is never reached by a job that was priced right. */
const DEFAULT_DEADLINE_BASE_MS = 10 * 60_000
const DEFAULT_DEADLINE_PER_AUDIO_SECOND_MS = 1_000

export const layerRnnoiseProvider = (options: RnnoiseProviderOptions = {}): Layer.Layer<DenoiseProvider, never, BlobStore> =>
  Layer.scoped(DenoiseProvider, Effect.gen(function*() {
    const store = yield* BlobStore
    const threads = Math.max(1, Math.floor(options.threads ?? availableParallelism()))
    const pool = threads > 1 ? yield* makeChunkPool(threads) : undefined
    return {
      providers: [BUILTIN_RUNNER],
      denoise: (request) =>
        Effect.scoped(Effect.gen(function*() {
          const model = BUILTIN_MODELS[request.model]
          if (model === undefined) {
            return yield* new ProviderFailure({ message: `the built-in runner does not run model '${request.model}'`, retryable: false })
          }
          // No input can cost more than it was priced: decoding stops at the validated duration
          // (plus a margin), and the whole job, ffmpeg's CPU time included, has a deadline.
          const deadlineMs = (options.deadlineBaseMs ?? DEFAULT_DEADLINE_BASE_MS) +
            request.durationSeconds * (options.deadlinePerAudioSecondMs ?? DEFAULT_DEADLINE_PER_AUDIO_SECOND_MS)
          // BlobStore.write accepts only storage errors from its body: a pipeline failure
          // travels through it as a BlobError and is recovered here.
          const failure = yield* Ref.make(Option.none<ProviderFailure>())
          let report: AudioReportRecord | null = null
          // decode, denoise and encode overlap (one pulled stream): their spans are marked at
          // their edges inside the pipeline; the upload is the put that pulls them all.
          const attributes = { "hush.job_id": request.jobId, "hush.model": request.model }
          const steps = yield* makeJobSteps(attributes)
          const output = denoiseToOutput(store.read(request.inputKey), {
            bitrateKbps: request.bitrateKbps,
            strength: request.strength,
            model,
            format: request.format,
            loudness: request.loudness,
            durationSeconds: request.durationSeconds,
            onProgress: request.onProgress,
            ffmpegPath: options.ffmpegPath,
            pool,
            chunkSeconds: options.chunkSeconds,
            warmupSeconds: options.warmupSeconds,
            maxInputSeconds: request.durationSeconds + DECODE_MARGIN_SECONDS,
            childLimits: { cpuSeconds: Math.ceil(deadlineMs / 1000), addressSpaceBytes: DEFAULT_ADDRESS_SPACE_BYTES },
            steps,
            onReport: (measured) => { report = measured }
          }).pipe(
            Stream.catchTag("ProviderFailure", (error) =>
              Stream.fromEffect(Ref.set(failure, Option.some(error)).pipe(
                Effect.zipRight(Effect.fail(new BlobError({ message: error.message, cause: error })))
              )))
          )
          const written = yield* store.write(request.outputKey, output, { contentType: OUTPUT_FORMATS[request.format].contentType }).pipe(
            Effect.tap(({ sizeBytes }) => Effect.annotateCurrentSpan("hush.bytes", sizeBytes)),
            Effect.withSpan("job.upload", { attributes: { ...attributes, "hush.format": request.format } }),
            // A storage fault (input or output) is this service's failure, not the provider's.
            Effect.catchAll((error) =>
              Effect.flatMap(Ref.get(failure), Option.match({ onSome: Effect.fail, onNone: () => Effect.die(error) }))),
            // interrupting the write stops both ffmpeg children and leaves no output object
            Effect.timeoutFail({
              duration: Duration.millis(deadlineMs),
              onTimeout: () => new ProviderFailure({ message: `the built-in runner passed its deadline of ${Math.round(deadlineMs / 1000)} s`, retryable: false })
            })
          )
          return { sizeBytes: written.sizeBytes, report }
        }))
    }
  }))
