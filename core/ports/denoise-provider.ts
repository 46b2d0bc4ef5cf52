import { Context, Data, Effect } from "effect"

/** The provider could not produce the output: the job fails with `provider_error`, no charge. */
export class ProviderFailure extends Data.TaggedError("ProviderFailure")<{
  readonly message: string
  /** Worth another try (5xx, 429, timeout) as opposed to a definite refusal. */
  readonly retryable: boolean
}> {}

export interface DenoiseRequest {
  readonly jobId: string
  readonly model: string
  readonly inputKey: string
  readonly outputKey: string
  readonly bitrateKbps: number
  readonly durationSeconds: number
  /** Called as work advances, with a fraction 0…1. */
  readonly onProgress: (fraction: number) => Effect.Effect<void>
}

/** Runs a model: reads the input object, writes the MP3 output object. */
export class DenoiseProvider extends Context.Tag("hush/DenoiseProvider")<DenoiseProvider, {
  /** Provider names (as in a model's `provider`) this deployment can run. */
  readonly providers: ReadonlyArray<string>
  readonly denoise: (request: DenoiseRequest) => Effect.Effect<{ readonly sizeBytes: number }, ProviderFailure>
}>() {}
