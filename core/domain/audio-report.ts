/**
 * What a succeeded live job measured on its audio (decisions.md, Denoise options: Report):
 * EBU R128 integrated loudness in and out, the output's true peak, and how far the estimated
 * noise floor fell. Numbers to one decimal; absent (null) before success and for test jobs.
 */
import { Schema } from "effect"

export class AudioReportRecord extends Schema.Class<AudioReportRecord>("AudioReportRecord")({
  inputLoudnessLufs: Schema.Number,
  outputLoudnessLufs: Schema.Number,
  outputTruePeakDbtp: Schema.Number,
  noiseReductionDb: Schema.Number
}) {}

/** Levels below these are reported as these: silence has no finite loudness or peak. */
export const QUIETEST_LOUDNESS_LUFS = -70
export const QUIETEST_PEAK_DBTP = -140

/** One decimal, as the report shows it. */
export const oneDecimal = (x: number) => Math.round(x * 10) / 10
