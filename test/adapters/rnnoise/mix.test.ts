/**
 * The dry/wet mixers (adapters/rnnoise/mix.mjs) on synthetic frames, without the model: what
 * `strength` leaves of the noise, and how the adaptive default behaves where there is no
 * voice, where there is one at a low or a high SNR, and with a model that took level.
 */
import { describe, expect, it } from "vitest"
import { ADAPTIVE_DEFAULTS, AdaptiveMix, FixedMix, makeMix } from "../../../adapters/rnnoise/mix.mjs"

const FRAME = 480

/** A deterministic noise-like frame sequence (xorshift), in the 16-bit range at `amplitude`. */
const noiseFrames = (count: number, amplitude: number, seed = 1) => {
  let s = seed
  return Array.from({ length: count }, () =>
    Float32Array.from({ length: FRAME }, () => {
      s ^= s << 13; s ^= s >>> 17; s ^= s << 5
      return ((s >>> 0) / 2 ** 32 - 0.5) * 2 * amplitude
    }))
}

const rms = (frames: ReadonlyArray<Float32Array>) => {
  let sum = 0
  let n = 0
  for (const f of frames) for (const v of f) { sum += v * v; n++ }
  return Math.sqrt(sum / n)
}
const db = (ratio: number) => 20 * Math.log10(ratio)

describe("FixedMix", () => {
  it("strength 0 is the input, 1 the model, between them the noise left is (1 − strength) in amplitude", () => {
    const dry = noiseFrames(1, 1000)[0]!
    const wet = new Float32Array(FRAME) // a model that removed everything
    for (const [strength, left] of [[0, 1], [0.5, 0.5], [0.9, 0.1], [1, 0]] as const) {
      const out = wet.slice()
      new FixedMix(strength).process(dry, out)
      expect(rms([out]) / rms([dry])).toBeCloseTo(left, 6)
    }
    const same = wet.slice()
    new FixedMix(0).process(dry, same)
    expect(same).toEqual(dry)
  })

  it("refuses a strength outside 0…1; null or absent is the adaptive default", () => {
    expect(() => new FixedMix(1.1)).toThrow()
    expect(() => new FixedMix(Number.NaN)).toThrow()
    expect(makeMix(null)).toBeInstanceOf(AdaptiveMix)
    expect(makeMix(undefined)).toBeInstanceOf(AdaptiveMix)
    expect(makeMix(0.3)).toBeInstanceOf(FixedMix)
  })
})

describe("AdaptiveMix (the default)", () => {
  /** Runs `frames` of (dry, wet = dry × wetGain, vad) through a mixer; answers the output frames. */
  const run = (mix: AdaptiveMix, dry: ReadonlyArray<Float32Array>, vad: number, wetGain = 0) =>
    dry.map((d) => {
      const wet = d.map((v) => v * wetGain)
      mix.process(d, wet, vad)
      return wet
    })

  it("where no voice is heard, leaves the noise at the floor (−50 dB), well over 30 dB down", () => {
    const mix = new AdaptiveMix()
    const noise = noiseFrames(300, 500)
    const out = run(mix, noise, 0.02)
    const drop = db(rms(out.slice(50)) / rms(noise.slice(50)))
    expect(drop).toBeLessThan(-45)
    expect(drop).toBeGreaterThan(ADAPTIVE_DEFAULTS.floorDb - 1)
  })

  it("under a voice, mixes back more of the input the cleaner the speech is", () => {
    const share = (snrDb: number) => {
      const mix = new AdaptiveMix()
      run(mix, noiseFrames(200, 100, 3), 0.02) // the noise alone: its level is learnt
      // speech over that noise: the frames' power is the noise's plus the speech's
      const speech = noiseFrames(400, 100 * Math.sqrt(1 + 10 ** (snrDb / 10)), 5)
      const out = run(mix, speech, 0.95) // a model that removed everything
      expect(Math.abs(mix.snrDb - snrDb)).toBeLessThan(1.5)
      return rms(out.slice(300)) / rms(speech.slice(300))
    }
    const low = share(0)
    const mid = share(10)
    const high = share(20)
    expect(low).toBeLessThan(0.06)
    expect(mid).toBeGreaterThan(low)
    expect(high).toBeGreaterThan(mid)
    expect(high).toBeLessThanOrEqual(ADAPTIVE_DEFAULTS.maxDry * 10 ** (ADAPTIVE_DEFAULTS.maxGainDb / 20) + 1e-9)
  })

  it("gives back, within +2 dB, the speech level a model took", () => {
    const mix = new AdaptiveMix()
    run(mix, noiseFrames(100, 10, 7), 0.02)
    const speech = noiseFrames(600, 3000, 9)
    const out = run(mix, speech, 0.95, 10 ** (-1.5 / 20)) // the model took 1.5 dB
    const change = db(rms(out.slice(400)) / rms(speech.slice(400)))
    expect(Math.abs(change)).toBeLessThan(0.3)
    const deaf = new AdaptiveMix()
    run(deaf, noiseFrames(100, 10, 7), 0.02)
    // a model that took 20 dB: at this SNR the mix keeps maxDry of the input, the make-up adds at most maxGainDb
    const quiet = run(deaf, speech, 0.95, 0.1)
    const mixed = db(ADAPTIVE_DEFAULTS.maxDry + (1 - ADAPTIVE_DEFAULTS.maxDry) * 0.1)
    expect(db(rms(quiet.slice(400)) / rms(speech.slice(400)))).toBeCloseTo(mixed + ADAPTIVE_DEFAULTS.maxGainDb, 1)
  })

  it("does not take the noise left under a voice for speech: at 0 dB SNR the speech keeps its level", () => {
    const mix = new AdaptiveMix()
    run(mix, noiseFrames(200, 1000, 7), 0.02) // the noise alone: its level is learnt
    const speech = noiseFrames(600, 1000, 9)
    const noise = noiseFrames(600, 1000, 11)
    const kept = 10 ** (-8 / 20)
    // a model that took 1.5 dB of the speech and left the noise 8 dB down
    const out = speech.map((s, f) => {
      const dry = s.map((v, i) => v + noise[f]![i]!)
      const wet = s.map((v, i) => v * 10 ** (-1.5 / 20) + noise[f]![i]! * kept)
      mix.process(dry, wet, 0.95)
      return wet
    })
    // the speech's share of the output (its projection), over the last 2 s
    let cross = 0
    let power = 0
    for (let f = 400; f < 600; f++) {
      for (let i = 0; i < FRAME; i++) (cross += out[f]![i]! * speech[f]![i]!, power += speech[f]![i]! ** 2)
    }
    expect(Math.abs(db(cross / power))).toBeLessThan(0.3)
  })

  it("changes gradually within a frame: no step at a frame boundary when the voice starts", () => {
    const mix = new AdaptiveMix()
    const dc = (value: number) => new Float32Array(FRAME).fill(value)
    for (let i = 0; i < 100; i++) mix.process(dc(100), new Float32Array(FRAME), 0) // noise alone: ~ floor
    for (let i = 0; i < 100; i++) mix.process(dc(100 * 10 ** (20 / 20)), new Float32Array(FRAME), 0.95)
    const out = new Float32Array(FRAME)
    mix.process(dc(1000), out, 0)
    let largestStep = 0
    for (let i = 1; i < FRAME; i++) largestStep = Math.max(largestStep, Math.abs(out[i]! - out[i - 1]!))
    expect(largestStep).toBeLessThan(5) // a ramp over 480 samples, not a jump
  })
})
