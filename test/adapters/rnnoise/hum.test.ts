/**
 * The hum stage (adapters/rnnoise/hum.mjs) on synthetic signals, without the model: mains hum
 * (50 or 60 Hz and harmonics, on or off its nominal frequency) is removed from the first
 * sample to the last; audio without a stable hum, or with a lone steady tone, passes
 * unchanged; speech under hum is kept.
 */
import { describe, expect, it } from "vitest"
import { HumRemover } from "../../../adapters/rnnoise/hum.mjs"

const RATE = 48_000
const FRAME = 480

/** Mains hum in the 16-bit range: f0 and harmonics 2, 3, 5, 7 (as a ground loop's buzz has). */
const hum = (f0: number, seconds: number, amplitude = 3000) =>
  Float32Array.from({ length: seconds * RATE }, (_, i) => {
    const t = i / RATE
    return amplitude * (Math.sin(2 * Math.PI * f0 * t) + 0.5 * Math.sin(2 * Math.PI * 2 * f0 * t + 1) +
      0.4 * Math.sin(2 * Math.PI * 3 * f0 * t + 2) + 0.2 * Math.sin(2 * Math.PI * 5 * f0 * t) +
      0.1 * Math.sin(2 * Math.PI * 7 * f0 * t + 0.5))
  })

/** Deterministic white noise (xorshift) at `amplitude` peak. */
const noise = (length: number, amplitude: number, seed = 1) => {
  let s = seed
  return Float32Array.from({ length }, () => {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5
    return ((s >>> 0) / 2 ** 32 - 0.5) * 2 * amplitude
  })
}

/**
 * Speech-like: syllables (4 Hz) of a voiced tone whose pitch glides between 107 and 167 Hz,
 * with 12 harmonics falling off, and pauses — steady on no harmonic of 50 or 60 Hz.
 */
const speechLike = (seconds: number, amplitude = 3000) => {
  let phase = 0
  return Float32Array.from({ length: seconds * RATE }, (_, i) => {
    const t = i / RATE
    phase += (2 * Math.PI * (137 + 30 * Math.sin(2 * Math.PI * 0.7 * t))) / RATE
    const voiced = t % 2 < 1.4 ? Math.sin(4 * Math.PI * t) ** 2 : 0
    let v = 0
    for (let k = 1; k <= 12; k++) v += Math.sin(k * phase) / k
    return amplitude * voiced * v
  })
}

const sum = (...xs: ReadonlyArray<Float32Array>) => xs[0]!.map((_, i) => xs.reduce((s, x) => s + x[i]!, 0))

/** The stage as the engine runs it: frame by frame, then padding marked as such; output aligned with the input. */
const run = (x: Float32Array, remover = new HumRemover(FRAME)) => {
  const out = new Float32Array(x.length)
  const frame = new Float32Array(FRAME)
  let written = 0
  for (let at = 0; written < x.length; at += FRAME) {
    if (at === x.length) remover.end()
    frame.fill(0)
    if (at < x.length) frame.set(x.subarray(at, Math.min(x.length, at + FRAME)))
    if (remover.process(frame)) {
      out.set(frame.subarray(0, Math.min(FRAME, x.length - written)), written)
      written += FRAME
    }
  }
  return { out, remover }
}

const powerDb = (x: Float32Array, from = 0, to = x.length) => {
  let s = 0
  for (let i = from; i < to; i++) s += x[i]! * x[i]!
  return 10 * Math.log10(s / (to - from))
}
const diff = (a: Float32Array, b: Float32Array) => a.map((v, i) => v - b[i]!)
const differing = (a: Float32Array, b: Float32Array) => a.reduce((n, v, i) => n + (v === b[i] ? 0 : 1), a.length === b.length ? 0 : 1)

describe("HumRemover", () => {
  it("removes 50 Hz and 60 Hz hum with harmonics by more than 30 dB, from the first 100 ms to the last", () => {
    for (const f0 of [50, 60]) {
      const h = hum(f0, 4)
      const floor = noise(h.length, 3) // a faint background: −80 dB under the hum
      const { out, remover } = run(sum(h, floor))
      const left = diff(out, floor) // what is left of the hum
      expect(powerDb(h) - powerDb(left)).toBeGreaterThan(30)
      expect(powerDb(h, 0, 4800) - powerDb(left, 0, 4800)).toBeGreaterThan(30)
      expect(powerDb(h, h.length - 4800) - powerDb(left, h.length - 4800)).toBeGreaterThan(30)
      expect(remover.active).toBe(5)
    }
  })

  it("follows a mains frequency off its nominal value", () => {
    for (const f0 of [49.95, 50.05, 59.95, 60.05]) {
      const h = hum(f0, 4)
      const { out, remover } = run(h)
      expect(powerDb(h) - powerDb(out)).toBeGreaterThan(30)
      expect(Math.abs(remover.driftHz - (f0 - Math.round(f0 / 10) * 10))).toBeLessThan(0.01)
    }
  })

  it("passes audio without hum unchanged, sample for sample, only delayed", () => {
    for (const x of [speechLike(4), sum(speechLike(4), noise(4 * RATE, 1000)), noise(4 * RATE, 3000, 7)]) {
      const { out, remover } = run(x)
      expect(remover.active).toBe(0)
      expect(differing(out, x)).toBe(0)
    }
  })

  it("leaves a lone steady tone alone, even on a multiple of 50 Hz", () => {
    const tone = Float32Array.from({ length: 4 * RATE }, (_, i) => 3000 * Math.sin((2 * Math.PI * 400 * i) / RATE))
    expect(differing(run(tone).out, tone)).toBe(0)
  })

  it("removes the hum under speech and keeps the speech", () => {
    const speech = speechLike(6)
    const h = hum(50, 6, 1500) // about as loud as the speech: 0 dB SNR
    const { out } = run(sum(speech, h))
    // what differs from the clean speech is far below it (the hum alone was level with it)
    expect(powerDb(speech) - powerDb(diff(out, speech))).toBeGreaterThan(20)
  })

  it("holds a bounded delay line: output lags input by the delay, whatever the length", () => {
    const remover = new HumRemover(FRAME)
    const frame = new Float32Array(FRAME)
    let ready = 0
    for (let i = 0; i < 200; i++) if (remover.process(frame)) ready++
    expect(ready).toBe(200 - remover.delay / FRAME)
    expect(remover.delay).toBe(0.6 * RATE)
  })
})
