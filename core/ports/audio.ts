import { Context, Data, Effect, Stream } from "effect"
import type { BlobError } from "./blob-store.js"

/** The upload is not usable audio: it becomes `rejected` with `invalid_audio`. */
export class AudioRejected extends Data.TaggedError("AudioRejected")<{
  readonly reason: "undecodable" | "no_audio" | "empty" | "timeout" | "too_long"
  readonly message: string
}> {}

export interface ProbeResult {
  /** Taken from the decoded samples, never from the container's header. */
  readonly durationSeconds: number
}

/**
 * What the length a container's header declares allows, asked once the header is read and before
 * decoding: a time limit for the whole probe (it can only shorten `timeLimitMs`), or `"too_long"`
 * to refuse the file at once. Headers lie (a truncated MP3 declares twice what decodes), so the
 * declared length sets the decoder's budget only: the measured duration is still the decoded one.
 */
export type DeclaredDurationVerdict = (declaredSeconds: number) => number | "too_long"

export interface ProbeOptions {
  /** The whole probe's time limit (the adapter's default when absent); past it the upload is rejected. */
  readonly timeLimitMs?: number | undefined
  /** Not asked when the header declares no length (a stream): `timeLimitMs` alone applies. */
  readonly onDeclaredDuration?: DeclaredDurationVerdict | undefined
}

export class AudioProbe extends Context.Tag("hush/AudioProbe")<AudioProbe, {
  /** Decodes the whole stream with bounded memory and a time limit (shortened by a declared length: ProbeOptions). */
  readonly probe: (
    input: Stream.Stream<Uint8Array, BlobError>,
    options?: ProbeOptions
  ) => Effect.Effect<ProbeResult, AudioRejected | BlobError>
}>() {}
