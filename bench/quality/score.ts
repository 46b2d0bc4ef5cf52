/**
 * Scores of a processed recording against the clean speech it was made from:
 *   - SI-SDR (scale-invariant signal-to-distortion ratio, dB), of the input and of the output;
 *   - noise-floor reduction: how much quieter the output is than the input where nobody speaks;
 *   - speech level change: the gain of the clean speech within the output (the SI-SDR
 *     projection's scale, in dB): what a listener hears as "quieter" or "louder" speech.
 * The output is aligned to the input first (an MP3 starts with its encoder's delay).
 */
import { RATE } from "./corpus.js"

const dot = (a: Float32Array, b: Float32Array, from = 0, to = a.length) => {
  let s = 0
  for (let i = from; i < to; i++) s += a[i]! * b[i]!
  return s
}

export const siSdr = (estimate: Float32Array, reference: Float32Array) => {
  const alpha = dot(estimate, reference) / dot(reference, reference)
  let target = 0
  let error = 0
  for (let i = 0; i < reference.length; i++) {
    const t = alpha * reference[i]!
    const e = estimate[i]! - t
    target += t * t
    error += e * e
  }
  return { db: 10 * Math.log10(target / error), alpha }
}

/** The lag (0…maxLag samples) by which `y` trails `x`, by cross-correlation over a 1-second window of speech. */
export const lagOf = (x: Float32Array, y: Float32Array, maxLag = 2400, from = 2 * RATE) => {
  const to = from + RATE
  let best = 0
  let bestValue = -Infinity
  for (let lag = 0; lag <= maxLag; lag++) {
    let s = 0
    for (let i = from; i < to; i++) s += x[i]! * (y[i + lag] ?? 0)
    if (s > bestValue) {
      bestValue = s
      best = lag
    }
  }
  return best
}

/** `y` shifted back by `lag`, cut or padded to `length`. */
export const aligned = (y: Float32Array, lag: number, length: number) => {
  const out = new Float32Array(length)
  out.set(y.subarray(lag, lag + length))
  return out
}

/** Samples where the clean track is silent, 200 ms away from any speech (20 ms frames). */
export const silentMask = (clean: Float32Array): Uint8Array => {
  const frame = RATE / 50
  const frames = Math.floor(clean.length / frame)
  const loud: Array<boolean> = []
  for (let f = 0; f < frames; f++) {
    let s = 0
    for (let i = f * frame; i < (f + 1) * frame; i++) s += clean[i]! * clean[i]!
    loud.push(s / frame > 1e-8) // above −80 dBFS
  }
  const guard = 10
  const mask = new Uint8Array(clean.length)
  for (let f = 0; f < frames; f++) {
    let quiet = true
    for (let g = Math.max(0, f - guard); g <= Math.min(frames - 1, f + guard); g++) if (loud[g]) quiet = false
    if (quiet) mask.fill(1, f * frame, (f + 1) * frame)
  }
  return mask
}

const maskedLevelDb = (x: Float32Array, mask: Uint8Array) => {
  let s = 0
  let n = 0
  for (let i = 0; i < x.length; i++) {
    if (mask[i] === 1) {
      s += x[i]! * x[i]!
      n++
    }
  }
  return 10 * Math.log10(Math.max(s / Math.max(1, n), 1e-20))
}

export interface Scores {
  readonly siSdrIn: number
  readonly siSdrOut: number
  readonly floorReductionDb: number
  readonly speechLevelDb: number
}

/** `output` already aligned with `noisy` and as long. */
export const score = (clean: Float32Array, noisy: Float32Array, output: Float32Array, mask: Uint8Array = silentMask(clean)): Scores => {
  const input = siSdr(noisy, clean)
  const out = siSdr(output, clean)
  return {
    siSdrIn: input.db,
    siSdrOut: out.db,
    floorReductionDb: maskedLevelDb(noisy, mask) - maskedLevelDb(output, mask),
    speechLevelDb: 20 * Math.log10(Math.max(out.alpha, 1e-6))
  }
}
