import { Schema } from "effect"
import { JobErrorCode, JobStatus, Mode, Task } from "../domain/enums.js"
import { LOUDNESS_MAX_LUFS, LOUDNESS_MIN_LUFS, OutputFormat } from "../domain/denoise-options.js"
import { constant, field, Micros, nextCursorField, Text, Timestamp } from "./common.js"

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
  strength: field(Schema.NullOr(Strength), "The `strength` asked for; null: the service's default, chosen per file so that clean speech is never made worse."),
  output: field(Schema.Struct({
    format: field(Format, "The output's format: `mp3` unless another was asked for."),
    loudness: field(Schema.NullOr(Loudness), "The loudness target asked for, in LUFS; null: the level is left as it is.")
  }).annotations({ identifier: "JobOutputOptions", description: "The output's format and loudness." }), "The output's format and loudness target.")
}).annotations({ identifier: "JobOptions", description: "The options the job runs with: those asked for, defaults filled in." })
export type JobOptions = typeof JobOptions.Type

export const JobInput = Schema.Struct({
  file: field(Schema.String, "The input file's id (`file_…`)."),
  duration_seconds: field(Schema.Number, "The input audio's length in seconds, as validated.")
}).annotations({ identifier: "JobInput", description: "The audio the job denoises." })
export type JobInput = typeof JobInput.Type

export const JobOutput = Schema.Struct({
  format: field(Schema.String, "`mp3`, `wav`, `flac` or `opus`."),
  bitrate_kbps: field(Schema.Int, "The output's bitrate in kbit/s (192 for MP3, 96 for Opus; the average for WAV and FLAC)."),
  size_bytes: field(Schema.Int, "The output file's size in bytes."),
  expires_at: field(Schema.NullOr(Timestamp), "When the output is deleted: 7 days after the job finished. Get a download link before then.")
}).annotations({ identifier: "JobOutput", description: "The denoised audio of a succeeded job (download it through `GET /v1/jobs/{job_id}/output`)." })
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
  estimated_micros: field(Micros, "The job's exact price in micros of a US dollar (1,000,000 = $1), held from available credit when the job was created. 0 in test mode."),
  charged_micros: field(Schema.NullOr(Micros), "What was charged, in micros: the estimate once the job succeeded, 0 if it failed or was canceled, null while it runs."),
  display: field(Schema.String, "The charge (or, while the job runs, the estimate) as dollars, e.g. `$0.0036`.")
}).annotations({ identifier: "JobCost", description: "What the job costs. Only a succeeded job is charged." })
export type JobCost = typeof JobCost.Type

export const JobReceipt = Schema.Struct({
  billable_seconds: field(Schema.Int, "Seconds billed: the audio's length rounded up to a whole second, at least the model's `pricing.min_units`."),
  minimum_applied: field(Schema.Boolean, "True when the model's minimum (`pricing.min_units` seconds) was billed instead of the audio's length."),
  unit_price_micros: field(Micros, "The model's price per second, in micros."),
  pricing_version: field(Schema.Int, "The version of the model's pricing the job was priced with."),
  charged_micros: field(Schema.NullOr(Micros), "What was charged, in micros (`billable_seconds × unit_price_micros` on success, 0 otherwise); null while the job runs."),
  ledger_txn_id: field(Schema.NullOr(Schema.String), "The ledger entry of the charge (`txn_…`); null until the job is charged, and always in test mode.")
}).annotations({ identifier: "JobReceipt", description: "How the price was worked out." })
export type JobReceipt = typeof JobReceipt.Type

export const JobError = Schema.Struct({
  code: field(JobErrorCode, "`internal_error` (a fault of the service) or `provider_error` (the GPU provider failed). Nothing is charged either way."),
  message: field(Schema.String, "A readable explanation of the failure.")
}).annotations({ identifier: "JobError", description: "Why a job failed." })
export type JobError = typeof JobError.Type

export class Job extends Schema.Class<Job>("Job")({
  id: field(Schema.String, "The job's id (`job_…`)."),
  object: constant("job"),
  task: field(Task, "What the job does: `denoise`."),
  model: field(Schema.String, "The model that runs (or ran) the job, `{provider}/{model}`, e.g. `xiph/rnnoise`."),
  status: field(
    JobStatus,
    "`queued` (waiting for a worker), `processing`, then `succeeded`, `failed` or `canceled`. The last three are final."
  ),
  progress: field(Schema.Number.pipe(Schema.between(0, 1)), "From 0 (queued) to 1 (succeeded), rising while processing."),
  input: field(JobInput, "The input file and its length."),
  options: field(JobOptions, "The options the job runs with."),
  output: field(Schema.NullOr(JobOutput), "The denoised audio once the job succeeded; null before, and for failed or canceled jobs."),
  report: field(Schema.NullOr(JobReport), "Levels measured by a succeeded live job; null before success and for test jobs."),
  cost: field(JobCost, "What the job costs and what was charged."),
  receipt: field(JobReceipt, "How the price was worked out."),
  error: field(Schema.NullOr(JobError), "Why the job failed; null unless `status` is `failed`."),
  mode: field(
    Mode,
    "`live` or `test`, from the key that created the job. A test job never runs the model and never costs anything: its output is the service's sample clip, not your audio."
  ),
  created_at: field(Timestamp, "When the job was created (ISO 8601, UTC)."),
  started_at: field(Schema.NullOr(Timestamp), "When a worker started it; null while queued."),
  finished_at: field(Schema.NullOr(Timestamp), "When it succeeded, failed or was canceled; null until then.")
}, { description: "A denoise job: one file through one model. Poll it until `status` is final." }) {}

export class JobPage extends Schema.Class<JobPage>("JobPage")({
  data: field(Schema.Array(Job), "The jobs of this page, newest first."),
  next_cursor: nextCursorField
}, { description: "A page of jobs, newest first." }) {}

/** Body of `POST /v1/audio/denoise`. */
export const DenoiseIn = Schema.Struct({
  file: field(Text.pipe(Schema.minLength(1), Schema.maxLength(64)), "The id of a `ready` file (`file_…`) of the key's mode."),
  model: Schema.optional(Schema.NullOr(Text.pipe(Schema.maxLength(200)))).annotations({
    description: "A model id from `GET /v1/models`, e.g. `xiph/rnnoise`. Omit it (or send null) for the default model, `xiph/rnnoise`."
  }),
  strength: Schema.optional(Schema.NullOr(Strength)).annotations({
    description: "How much of the estimated noise to remove, 0 to 1 (0.9 leaves the noise 20 dB lower; 0 changes nothing). " +
      "Omit it (recommended) for the service's default, chosen per file so that clean speech is never made worse. It never changes the price."
  }),
  output: Schema.optional(Schema.NullOr(Schema.Struct({
    format: Schema.optional(Schema.NullOr(Format)).annotations({
      description: "`mp3` (192 kbps, the default when omitted or null), `wav` (PCM 16-bit), `flac` or `opus` (Ogg, 96 kbps)."
    }),
    loudness: Schema.optional(Schema.NullOr(Loudness)).annotations({
      description: "A target integrated loudness in LUFS, −31 to −9 (e.g. −16 for podcasts), true peak kept at or below −1 dBTP. Omit it (or send null) to leave the level as it is."
    })
  }).annotations({ identifier: "DenoiseOutputIn", description: "The output's format and loudness; every field optional." }))).annotations({
    description: "How to deliver the result. Omit it for an MP3 at the input's level."
  })
}).annotations({ identifier: "DenoiseIn", description: "A denoise job to create: the file, and optionally the model and options." })
export type DenoiseIn = typeof DenoiseIn.Type

/**
 * Page size for every listing: default 20 (applied by the handler), 1 to 100. A query parameter
 * arrives as a string; the reference describes the integer it holds.
 */
export const PageLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))
  .annotations({ jsonSchema: { type: "integer", minimum: 1, maximum: 100 } })

export const pageLimitDescription = "How many items per page, 1 to 100; 20 when omitted."
export const cursorDescription = "The `next_cursor` of the previous page; omit it for the first page. A cursor that is not one is 400 invalid_request."

/** Query of `GET /v1/jobs`; URL parameters all arrive as strings. */
export const JobListParams = Schema.Struct({
  limit: Schema.optional(PageLimit).annotations({ description: pageLimitDescription }),
  /** Opaque, from `next_cursor`; one that does not parse is `400 invalid_request`. */
  cursor: Schema.optional(Text).annotations({ description: cursorDescription }),
  status: Schema.optional(JobStatus).annotations({ description: "Only jobs with this status." }),
  model: Schema.optional(Text.pipe(Schema.maxLength(200))).annotations({ description: "Only jobs of this model id, e.g. `xiph/rnnoise`." })
}).annotations({ identifier: "JobListParams" })
export type JobListParams = typeof JobListParams.Type
