/**
 * The wire format of the GPU provider protocol, version 1 (docs/gpu-provider-protocol.md is
 * the description a GPU host implements). Hush is the client; the GPU host is the server.
 */
import { Schema } from "effect"
import type { OutputFormat } from "../../core/domain/denoise-options.js"

/** Sent with every request, so a host can refuse a version it does not speak. */
export const PROTOCOL_HEADER = "hush-gpu-protocol"
export const PROTOCOL_VERSION = "1"

export const RemoteStatus = Schema.Literal("queued", "running", "succeeded", "failed")
export type RemoteStatus = typeof RemoteStatus.Type

/** `{id, status, …}`: the answer to submit, poll and cancel. Unknown fields are ignored. */
export const RemoteJob = Schema.Struct({
  id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  status: RemoteStatus,
  /** 0…1 while queued or running. */
  progress: Schema.optional(Schema.NullOr(Schema.Number)),
  /** Present when `failed`. */
  error: Schema.optional(Schema.NullOr(Schema.Struct({
    code: Schema.optional(Schema.NullOr(Schema.String)),
    message: Schema.optional(Schema.NullOr(Schema.String))
  }))),
  /** Present when `succeeded`: the ETag the output PUT was answered with, and the `ref` it was given. */
  output: Schema.optional(Schema.NullOr(Schema.Struct({
    etag: Schema.optional(Schema.NullOr(Schema.String)),
    ref: Schema.optional(Schema.NullOr(Schema.String)),
    size_bytes: Schema.optional(Schema.NullOr(Schema.Number))
  })))
})
export type RemoteJob = typeof RemoteJob.Type

/** The body of `POST {base}/v1/jobs`; the idempotency key (our job id) travels in `Idempotency-Key`. */
export interface Submission {
  readonly model: string
  readonly input: {
    /** A signed GET of the input audio (any format ffmpeg reads). */
    readonly url: string
    readonly duration_seconds: number
  }
  readonly output: {
    /** A signed URL to send the whole output to, once, with `method` and exactly `headers`. */
    readonly url: string
    readonly method: "PUT"
    readonly headers: Readonly<Record<string, string>>
    /** The largest body the URL accepts. */
    readonly max_bytes: number
    readonly format: OutputFormat
    readonly content_type: string
    /** mp3 and opus: the encoder's bitrate; wav and flac: the bound the size was computed from. */
    readonly bitrate_kbps: number
    /** EBU R128 integrated target (LUFS) with a −1 dBTP ceiling, or null: level unchanged. */
    readonly loudness_lufs: number | null
    /** Opaque; returned unchanged in the succeeded job's `output.ref`. */
    readonly ref: string
  }
  /** 0…1: the noise left is at least (1 − strength) of the input's in amplitude; null: the host's default, never worse than the input on clean speech. */
  readonly strength: number | null
  /** When both URLs stop working (ISO 8601). */
  readonly expires_at: string
}

export const decodeRemoteJob = Schema.decodeUnknownEither(RemoteJob)
