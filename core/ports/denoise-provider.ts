import { Context, Data, Effect } from "effect"
import type { AudioReportRecord } from "../domain/audio-report.js"
import type { OutputFormat } from "../domain/denoise-options.js"

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
  /** The MP3 bitrate (the model's); other formats have their own (core/domain/denoise-options.ts). */
  readonly bitrateKbps: number
  readonly durationSeconds: number
  /** 0…1, or null: the provider's default, which never makes clean speech worse. */
  readonly strength: number | null
  readonly format: OutputFormat
  /** EBU R128 integrated target in LUFS with a −1 dBTP ceiling, or null: level unchanged. */
  readonly loudness: number | null
  /** Called as work advances, with a fraction 0…1. */
  readonly onProgress: (fraction: number) => Effect.Effect<void>
}

export interface DenoiseResult {
  readonly sizeBytes: number
  readonly report?: AudioReportRecord | null | undefined
}

/** Runs a model: reads the input object, writes the output object in the requested format. */
export class DenoiseProvider extends Context.Tag("hush/DenoiseProvider")<DenoiseProvider, {
  /** Provider names (as in a model's `provider`) this deployment can run. */
  readonly providers: ReadonlyArray<string>
  /** The output's size, and what was measured on the audio where the provider measures it (the built-in runner). */
  readonly denoise: (request: DenoiseRequest) => Effect.Effect<DenoiseResult, ProviderFailure>
}>() {}
