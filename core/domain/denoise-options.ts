/**
 * The options of a denoise job (decisions.md, Denoise options): how hard noise is pushed down,
 * the output format and an optional loudness target. None of them changes the price.
 */
import { Schema } from "effect"

export const OutputFormat = Schema.Literal("mp3", "wav", "flac", "opus")
export type OutputFormat = typeof OutputFormat.Type

export const DEFAULT_OUTPUT_FORMAT: OutputFormat = "mp3"

/** EBU R128 integrated loudness targets a job may ask for, in LUFS; the true peak stays at or below this. */
export const LOUDNESS_MIN_LUFS = -31
export const LOUDNESS_MAX_LUFS = -9
export const TRUE_PEAK_CEILING_DBTP = -1

export interface FormatSpec {
  readonly extension: string
  readonly contentType: string
  /** The encoder's bitrate for lossy formats; null for lossless ones (their bitrate follows the audio). */
  readonly bitrateKbps: number | null
}

export const OUTPUT_FORMATS: { readonly [format in OutputFormat]: FormatSpec } = {
  mp3: { extension: "mp3", contentType: "audio/mpeg", bitrateKbps: 192 },
  wav: { extension: "wav", contentType: "audio/wav", bitrateKbps: null },
  flac: { extension: "flac", contentType: "audio/flac", bitrateKbps: null },
  opus: { extension: "opus", contentType: "audio/ogg", bitrateKbps: 96 }
}

export class JobOptionsRecord extends Schema.Class<JobOptionsRecord>("JobOptionsRecord")({
  /** 0…1, or null: the service's adaptive default. */
  strength: Schema.NullOr(Schema.Number),
  format: OutputFormat,
  /** Integrated loudness target in LUFS, or null: level unchanged. */
  loudness: Schema.NullOr(Schema.Number)
}) {}

export const DEFAULT_JOB_OPTIONS = new JobOptionsRecord({ strength: null, format: DEFAULT_OUTPUT_FORMAT, loudness: null })

/**
 * The bitrate a job shows for its output: the encoder's for lossy formats, the average of the
 * stored bytes over the audio's length for lossless ones.
 */
export const outputBitrateKbps = (format: OutputFormat, sizeBytes: number, durationSeconds: number, lossyKbps?: number) => {
  const fixed = OUTPUT_FORMATS[format].bitrateKbps
  if (fixed !== null) return lossyKbps ?? fixed
  return durationSeconds > 0 ? Math.round((sizeBytes * 8) / 1000 / durationSeconds) : 0
}
