/** The human-readable forms of what the user commands print (`--json` prints the API's own JSON). */
import type { Credits, Job, JobPage, ModelList } from "../../../core/schema/index.js"

/**
 * What a test job's result is (decisions.md, Denoise options, Test mode): said wherever the CLI
 * shows one, so nobody takes the sample for their own audio or thinks they paid for it.
 */
export const TEST_MODE_NOTE =
  "Test mode: the output is Hush's sample clip, not your audio, and nothing was charged (use a hush_live_ key to denoise your own audio)."

const seconds = (value: number) => `${value.toFixed(1)} s`

const signed = (value: number) => (value < 0 ? `−${(-value).toFixed(1)}` : value.toFixed(1))

/** The levels a succeeded live job measured (decisions.md, Report); undefined where there is no report. */
export const formatReport = (job: Job): string | undefined =>
  job.report === null
    ? undefined
    : `loudness ${signed(job.report.input_loudness_lufs)} → ${signed(job.report.output_loudness_lufs)} LUFS, ` +
      `true peak ${signed(job.report.output_true_peak_dbtp)} dBTP, noise floor ${signed(job.report.noise_reduction_db)} dB lower`

export const formatJob = (job: Job): string => [
  `id:        ${job.id}`,
  `status:    ${job.status}${job.status === "processing" ? ` (${Math.round(job.progress * 100)}%)` : ""}`,
  `model:     ${job.model}`,
  `mode:      ${job.mode}`,
  `input:     ${job.input.file} (${seconds(job.input.duration_seconds)})`,
  `cost:      ${job.cost.display}${job.cost.charged_micros === null ? " (estimated)" : " (charged)"}`,
  ...(job.output === null ? [] : [`output:    ${job.output.format}, ${job.output.size_bytes} bytes${job.output.expires_at === null ? "" : `, until ${job.output.expires_at}`}`]),
  ...(job.report === null ? [] : [`report:    ${formatReport(job)}`]),
  ...(job.error === null ? [] : [`error:     ${job.error.code}: ${job.error.message}`]),
  ...(job.mode === "test" ? [`note:      ${TEST_MODE_NOTE}`] : []),
  `created:   ${job.created_at}`,
  ...(job.finished_at === null ? [] : [`finished:  ${job.finished_at}`])
].join("\n")

export const formatJobPage = (page: JobPage): string => {
  if (page.data.length === 0) return "no jobs"
  const rows = page.data.map((job) => [job.id, job.status, job.model, seconds(job.input.duration_seconds), job.cost.display, job.created_at])
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  const lines = rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd())
  if (page.next_cursor !== null) lines.push(`more: hush jobs list --cursor ${page.next_cursor}`)
  return lines.join("\n")
}

export const formatCredits = (credits: Credits): string =>
  `available: ${credits.display}\nbalance:   ${credits.balance_micros} micros\nreserved:  ${credits.reserved_micros} micros (held by running jobs)`

export const formatModels = (list: ModelList): string =>
  list.data.map((model) => `${model.id}  ${model.status}  ${model.pricing.display}  ${model.name}`).join("\n")
