import { Schema } from "effect"
import { JobErrorCode, JobStatus, Mode, Task } from "../domain/enums.js"
import { LOUDNESS_MAX_LUFS, LOUDNESS_MIN_LUFS, OutputFormat } from "../domain/denoise-options.js"
import { constant, Micros, NextCursor, Text, Timestamp } from "./common.js"

const Strength = Schema.Number.pipe(Schema.finite(), Schema.between(0, 1)).annotations({
  description: "How much of the estimated noise is removed, 0–1: what is left is at least (1 − strength) of the input's noise in amplitude (0.9 → −20 dB; 1 removes all it can; 0 returns the input's sound unchanged)."
})

const Loudness = Schema.Number.pipe(Schema.finite(), Schema.between(LOUDNESS_MIN_LUFS, LOUDNESS_MAX_LUFS)).annotations({
  description: "EBU R128 integrated loudness target in LUFS (−31 to −9); the true peak is kept at or below −1 dBTP."
})

const Format = OutputFormat.annotations({
  description: "mp3 (192 kbps), wav (PCM 16-bit), flac, or opus (Ogg, 96 kbps); the output filename's extension follows it."
})

/** The options a job ran with: `strength` null means the service's adaptive default. */
export const JobOptions = Schema.Struct({
  strength: Schema.NullOr(Strength),
  output: Schema.Struct({
    format: Format,
    loudness: Schema.NullOr(Loudness)
  })
}).annotations({ identifier: "JobOptions" })
export type JobOptions = typeof JobOptions.Type

export const JobInput = Schema.Struct({
  /** The file id. */
  file: Schema.String,
  duration_seconds: Schema.Number
}).annotations({ identifier: "JobInput" })
export type JobInput = typeof JobInput.Type

export const JobOutput = Schema.Struct({
  format: Schema.String,
  bitrate_kbps: Schema.Int,
  size_bytes: Schema.Int,
  expires_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "JobOutput" })
export type JobOutput = typeof JobOutput.Type

/** What a succeeded live job measured (decisions.md, Denoise options: Report); numbers to one decimal. */
export const JobReport = Schema.Struct({
  input_loudness_lufs: Schema.Number.annotations({ description: "EBU R128 integrated loudness of the input, LUFS (−70 for silence)." }),
  output_loudness_lufs: Schema.Number.annotations({ description: "EBU R128 integrated loudness of the output, LUFS." }),
  output_true_peak_dbtp: Schema.Number.annotations({ description: "True peak of the output (4× oversampled), dBTP." }),
  noise_reduction_db: Schema.Number.annotations({ description: "How far the estimated noise floor fell (the quietest 10 % of the audio, loudness gain left out), dB." })
}).annotations({
  identifier: "JobReport",
  description: "Levels measured while the job ran; null before success and for test jobs (whose output is the sample clip)."
})
export type JobReport = typeof JobReport.Type

export const JobCost = Schema.Struct({
  estimated_micros: Micros,
  charged_micros: Schema.NullOr(Micros),
  display: Schema.String
}).annotations({ identifier: "JobCost" })
export type JobCost = typeof JobCost.Type

export const JobReceipt = Schema.Struct({
  billable_seconds: Schema.Int,
  minimum_applied: Schema.Boolean,
  unit_price_micros: Micros,
  pricing_version: Schema.Int,
  charged_micros: Schema.NullOr(Micros),
  ledger_txn_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "JobReceipt" })
export type JobReceipt = typeof JobReceipt.Type

export const JobError = Schema.Struct({
  code: JobErrorCode,
  message: Schema.String
}).annotations({ identifier: "JobError" })
export type JobError = typeof JobError.Type

export class Job extends Schema.Class<Job>("Job")({
  id: Schema.String,
  object: constant("job"),
  task: Task,
  /** The model id used. */
  model: Schema.String,
  status: JobStatus,
  /** 0 while queued, rising to 1 while processing, 1 on success. */
  progress: Schema.Number.pipe(Schema.between(0, 1)),
  input: JobInput,
  options: JobOptions,
  output: Schema.NullOr(JobOutput),
  report: Schema.NullOr(JobReport),
  cost: JobCost,
  receipt: JobReceipt,
  error: Schema.NullOr(JobError),
  mode: Mode,
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  finished_at: Schema.NullOr(Timestamp)
}) {}

export class JobPage extends Schema.Class<JobPage>("JobPage")({
  data: Schema.Array(Job),
  next_cursor: NextCursor
}) {}

/** Body of `POST /v1/audio/denoise`. */
export const DenoiseIn = Schema.Struct({
  file: Text.pipe(Schema.minLength(1), Schema.maxLength(64)),
  /** Omitted or null: the task's default model. */
  model: Schema.optional(Schema.NullOr(Text.pipe(Schema.maxLength(200)))),
  /** Omitted or null: the service's default, chosen per file so that clean speech is never made worse. */
  strength: Schema.optional(Schema.NullOr(Strength)),
  output: Schema.optional(Schema.NullOr(Schema.Struct({
    /** Omitted or null: mp3. */
    format: Schema.optional(Schema.NullOr(Format)),
    /** Omitted or null: the level is left as it is. */
    loudness: Schema.optional(Schema.NullOr(Loudness))
  }).annotations({ identifier: "DenoiseOutputIn" })))
}).annotations({ identifier: "DenoiseIn" })
export type DenoiseIn = typeof DenoiseIn.Type

/** Page size for every listing: default 20 (applied by the handler), 1 to 100. */
export const PageLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))

/** Query of `GET /v1/jobs`; URL parameters all arrive as strings. */
export const JobListParams = Schema.Struct({
  limit: Schema.optional(PageLimit),
  /** Opaque, from `next_cursor`; one that does not parse is `400 invalid_request`. */
  cursor: Schema.optional(Text),
  status: Schema.optional(JobStatus),
  model: Schema.optional(Text.pipe(Schema.maxLength(200)))
}).annotations({ identifier: "JobListParams" })
export type JobListParams = typeof JobListParams.Type
