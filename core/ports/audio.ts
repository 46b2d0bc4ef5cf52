import { Context, Data, Effect, Stream } from "effect"
import type { BlobError } from "./blob-store.js"

/** The upload is not usable audio: it becomes `rejected` with `invalid_audio`. */
export class AudioRejected extends Data.TaggedError("AudioRejected")<{
  readonly reason: "undecodable" | "no_audio" | "empty" | "timeout"
  readonly message: string
}> {}

export interface ProbeResult {
  /** Taken from the decoded samples, never from the container's header. */
  readonly durationSeconds: number
}

export interface ProbeOptions {
  /** The whole probe's time limit (the adapter's default when absent); past it the upload is rejected. */
  readonly timeLimitMs?: number | undefined
}

export class AudioProbe extends Context.Tag("hush/AudioProbe")<AudioProbe, {
  /** Decodes the whole stream with bounded memory and a time limit. */
  readonly probe: (
    input: Stream.Stream<Uint8Array, BlobError>,
    options?: ProbeOptions
  ) => Effect.Effect<ProbeResult, AudioRejected | BlobError>
}>() {}
