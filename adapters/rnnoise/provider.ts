/**
 * The built-in runner: RNNoise on this machine's CPUs. Reads the input object, streams it
 * through the pipeline and writes the MP3 output object, never holding either whole. One
 * long job uses every core: its chunks are denoised on a pool of worker threads.
 */
import { availableParallelism } from "node:os"
import { Effect, Layer, Option, Ref, Stream } from "effect"
import { RNNOISE } from "../../core/domain/catalog.js"
import { BlobError, BlobStore } from "../../core/ports/blob-store.js"
import { DenoiseProvider, ProviderFailure } from "../../core/ports/denoise-provider.js"
import { denoiseToMp3 } from "./pipeline.js"
import { makeChunkPool } from "./pool.js"

export const BUILTIN_RUNNER = "builtin"

export interface RnnoiseProviderOptions {
  /** Worker threads shared by the jobs of this process; 1 denoises in the calling thread. Default: every core. */
  readonly threads?: number
  readonly ffmpegPath?: string
  readonly chunkSeconds?: number
  readonly warmupSeconds?: number
}

export const makeRnnoiseProvider = (options: RnnoiseProviderOptions = {}): Layer.Layer<DenoiseProvider, never, BlobStore> =>
  Layer.scoped(DenoiseProvider, Effect.gen(function*() {
    const store = yield* BlobStore
    const threads = Math.max(1, Math.floor(options.threads ?? availableParallelism()))
    const pool = threads > 1 ? yield* makeChunkPool(threads) : undefined
    return {
      providers: [BUILTIN_RUNNER],
      denoise: (request) =>
        Effect.gen(function*() {
          if (request.model !== RNNOISE.id) {
            return yield* new ProviderFailure({ message: `the built-in runner does not run model '${request.model}'`, retryable: false })
          }
          // BlobStore.write accepts only storage errors from its body: a pipeline failure
          // travels through it as a BlobError and is recovered here.
          const failure = yield* Ref.make(Option.none<ProviderFailure>())
          const output = denoiseToMp3(store.read(request.inputKey), {
            bitrateKbps: request.bitrateKbps,
            durationSeconds: request.durationSeconds,
            onProgress: request.onProgress,
            ffmpegPath: options.ffmpegPath,
            pool,
            chunkSeconds: options.chunkSeconds,
            warmupSeconds: options.warmupSeconds
          }).pipe(
            Stream.catchTag("ProviderFailure", (error) =>
              Stream.fromEffect(Ref.set(failure, Option.some(error)).pipe(
                Effect.zipRight(Effect.fail(new BlobError({ message: error.message, cause: error })))
              )))
          )
          const written = yield* store.write(request.outputKey, output, { contentType: "audio/mpeg" }).pipe(
            // A storage fault (input or output) is this service's failure, not the provider's.
            Effect.catchAll((error) =>
              Effect.flatMap(Ref.get(failure), Option.match({ onSome: Effect.fail, onNone: () => Effect.die(error) })))
          )
          return { sizeBytes: written.sizeBytes }
        })
    }
  }))

/** Every core of this machine. */
export const RnnoiseProvider: Layer.Layer<DenoiseProvider, never, BlobStore> = makeRnnoiseProvider()
