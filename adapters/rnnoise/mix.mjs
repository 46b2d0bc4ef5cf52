// How much of the model's output replaces the input, frame by frame (decisions.md, Denoise
// options: `strength`). Each mixer gets, per 10 ms frame of one channel, the input ("dry")
// aligned with the model's output ("wet", in place) and RNNoise's voice probability, and
// leaves the mixed frame in `wet`. Samples are in the 16-bit range the engine uses.
//
// Plain JavaScript, like engine.mjs: worker threads load it without a TypeScript loader.

/** A fixed dry/wet mix: what is left of the noise is (1 − strength) of the input's in amplitude. */
export class FixedMix {
  constructor(strength) {
    if (!(strength >= 0 && strength <= 1)) throw new Error(`strength must be within 0…1, not ${strength}`)
    this.strength = strength
  }

  process(dry, wet) {
    const s = this.strength
    if (s === 1) return
    if (s === 0) {
      wet.set(dry)
      return
    }
    for (let i = 0; i < wet.length; i++) wet[i] = dry[i] + s * (wet[i] - dry[i])
  }
}

/**
 * The default (strength absent): never worse than the input on clean speech, nearly the full
 * removal on noisy speech. Measured in bench/quality (docs/denoise-quality.md), RNNoise alone
 * distorts speech that is already clean (SI-SDR below the input's at 20 dB SNR) and takes
 * about 1 dB of its level; where only noise is, it is excellent. So:
 *   - where RNNoise hears no voice, the model's output with a residual-noise floor
 *     (`floorDb` of the input's noise);
 *   - where it hears a voice, some input is mixed back in: the cleaner the speech (a running
 *     estimate of its SNR), the more, since its noise is masked and the model's distortion
 *     is not;
 *   - a slow make-up gain that restores the speech level the model took.
 * Every change is smoothed (per-sample ramps within a frame) so that nothing clicks or pumps.
 * The settings below were chosen with bench/quality/tune.ts (docs/denoise-quality.md).
 */
export const ADAPTIVE_DEFAULTS = Object.freeze({
  /** Noise left where no voice is, relative to the input's: −50 dB (about what the model leaves). */
  floorDb: -50,
  /** Input mixed back under a voice, in amplitude: 10^((snrDb − snrRefDb) / snrSlopeDb), within [floor, maxDry]. */
  snrRefDb: 24,
  snrSlopeDb: 15,
  maxDry: 0.6,
  /** Voice probability above which a frame counts as speech for the estimates. */
  speechVad: 0.6,
  /** …and below which as noise only. */
  noiseVad: 0.2,
  /** Time constants of the running estimates, in frames (10 ms). */
  noiseFrames: 50,
  speechFrames: 150,
  /** How fast the mix follows the voice probability: at once up, this many frames down. */
  releaseFrames: 8,
  /** Make-up gain bounds, dB. */
  maxGainDb: 2,
  /**
   * Noise taken to be left under a voice, relative to the input's noise, dB: the make-up gain
   * counts it out of the output's power in voiced frames, which would otherwise be taken for
   * speech (without it the speech came out 0.8 dB low at 0 dB SNR, 0.3 dB at 20 dB). −8 dB
   * brings the level to the input's at every SNR of bench/quality (tune.ts: −0.13 dB at 0 dB
   * SNR, −0.01 dB at 20 dB); it matters only where the noise is near the speech's level.
   */
  voiceNoiseDb: -8
})

const power = (frame) => {
  let sum = 0
  for (let i = 0; i < frame.length; i++) sum += frame[i] * frame[i]
  return sum / frame.length
}

export class AdaptiveMix {
  #p
  #noise = -1 // running noise power (input, frames without voice); −1 until the first frame
  #speech = 0 // running speech power (input minus noise, frames with voice)
  #speechIn = 0 // running input speech power and output speech power, for the make-up gain
  #speechOut = 0
  #voice = 0 // smoothed voice probability
  #dry = 0 // previous frame's dry fraction
  #gain = 1

  constructor(params = ADAPTIVE_DEFAULTS) {
    this.#p = { ...ADAPTIVE_DEFAULTS, ...params }
  }

  /** Running SNR estimate in dB (for tests and the bench). */
  get snrDb() {
    return this.#noise > 0 ? 10 * Math.log10(Math.max(this.#speech, 1e-9) / this.#noise) : 60
  }

  process(dry, wet, vad) {
    const p = this.#p
    const pDry = power(dry)
    if (this.#noise < 0) this.#noise = pDry
    if (vad < p.noiseVad) this.#noise += (pDry - this.#noise) / p.noiseFrames
    else if (vad > p.speechVad) this.#speech += (Math.max(0, pDry - this.#noise) - this.#speech) / p.speechFrames

    // Voice presence, 0 at or below noiseVad, 1 at or above speechVad: follows a rise at once,
    // a fall over releaseFrames (a faint probability in a pause must not let the noise back in).
    const presence = Math.min(1, Math.max(0, (vad - p.noiseVad) / (p.speechVad - p.noiseVad)))
    this.#voice = presence > this.#voice ? presence : this.#voice + (presence - this.#voice) / p.releaseFrames
    const floor = 10 ** (p.floorDb / 20)
    const underVoice = Math.min(p.maxDry, Math.max(floor, 10 ** ((this.snrDb - p.snrRefDb) / p.snrSlopeDb)))
    const target = floor + this.#voice * (underVoice - floor)

    // Make-up gain from the speech frames: input speech power over what the mix keeps of it.
    const from = this.#dry
    const n = wet.length
    for (let i = 0; i < n; i++) {
      const d = from + ((target - from) * (i + 1)) / n
      wet[i] += d * (dry[i] - wet[i])
    }
    this.#dry = target
    if (vad > p.speechVad) {
      this.#speechIn += (Math.max(0, pDry - this.#noise) - this.#speechIn) / p.speechFrames
      this.#speechOut += (power(wet) - this.#speechOut) / p.speechFrames
    }
    const maxGain = 10 ** (p.maxGainDb / 20)
    const speechOut = this.#speechOut - 10 ** (p.voiceNoiseDb / 10) * Math.max(0, this.#noise)
    const wanted = speechOut > 0 ? Math.min(maxGain, Math.max(1, Math.sqrt(this.#speechIn / speechOut))) : 1
    const g0 = this.#gain
    if (wanted !== 1 || g0 !== 1) {
      for (let i = 0; i < n; i++) wet[i] *= g0 + ((wanted - g0) * (i + 1)) / n
    }
    this.#gain = wanted
  }
}

/** The mixer for a job's `strength`: null (or absent) is the adaptive default. */
export const makeMix = (strength, params) =>
  strength === null || strength === undefined ? new AdaptiveMix(params) : new FixedMix(strength)
