/**
 * EBU R128 / ITU-R BS.1770 measurement and a true-peak limiter whose effect on loudness is
 * known before it runs (decisions.md, Denoise options: Accuracy and Report).
 *
 * A loudness target is reached in two passes over the denoised audio (encode.ts): the first
 * (while it is spooled to disk) measures it and gathers `LimiterStats`; between the passes
 * `solveGain` finds the one gain that, with the limiter, lands on the target; the second applies
 * gain and `Limiter` on the way to the encoder. The limiter's gain at each instant is
 * min(1, ceiling / (gain × envelope)), where the envelope (`PeakEnvelope`) depends on the
 * audio only, never on the gain: so the first pass can tell, for any gain, how much energy the
 * limiter will take from each 400 ms block, and the loudness after it. Memory is fixed whatever
 * the length (histograms, no per-block lists).
 *
 * Everything runs at 48 kHz (the models' rate), on interleaved float samples (−1…1).
 */

import { AudioReportRecord, oneDecimal, QUIETEST_LOUDNESS_LUFS, QUIETEST_PEAK_DBTP } from "../../core/domain/audio-report.js"

export const RATE = 48_000

// K-weighting (BS.1770-4, 48 kHz): a high shelf, then a high-pass
const SHELF = { b0: 1.53512485958697, b1: -2.69169618940638, b2: 1.19839281085285, a1: -1.69065929318241, a2: 0.73248077421585 }
const HIGHPASS = { b0: 1, b1: -2, b2: 1, a1: -1.99004745483398, a2: 0.99007225036621 }

const SUB_BLOCK = RATE / 10 // 100 ms: the hop of the 400 ms gating blocks
const BLOCK_SUBS = 4
const ABSOLUTE_GATE = -70
const RELATIVE_GATE = -10
const LUFS_OFFSET = -0.691

/** Levels in dB (LUFS or dBFS) are binned from FLOOR_DB up, BINS_PER_DB a dB. */
const FLOOR_DB = -140
const TOP_DB = 20
const FINE_BINS_PER_DB = 100
const COARSE_BINS_PER_DB = 2

const toDb = (power: number) => (power > 0 ? 10 * Math.log10(power) : -Infinity)
const binOf = (db: number, perDb: number, bins: number) => Math.max(0, Math.min(bins - 1, Math.floor((db - FLOOR_DB) * perDb)))

/** One channel's K-weighting filter (two biquads, direct form I). */
class KFilter {
  private x1 = 0; private x2 = 0; private y1 = 0; private y2 = 0
  private u1 = 0; private u2 = 0; private v1 = 0; private v2 = 0
  next(x: number): number {
    const s = SHELF.b0 * x + SHELF.b1 * this.x1 + SHELF.b2 * this.x2 - SHELF.a1 * this.y1 - SHELF.a2 * this.y2
    this.x2 = this.x1; this.x1 = x; this.y2 = this.y1; this.y1 = s
    const h = s - 2 * this.u1 + this.u2 - HIGHPASS.a1 * this.v1 - HIGHPASS.a2 * this.v2
    this.u2 = this.u1; this.u1 = s; this.v2 = this.v1; this.v1 = h
    return h
  }

  /** Adds the K-weighted square of channel `c` of each of `frames` interleaved frames to `out`. */
  energies(samples: Float32Array, c: number, channels: number, frames: number, out: Float64Array) {
    for (let i = 0; i < frames; i++) {
      const k = this.next(samples[i * channels + c]!)
      out[i]! += k * k
    }
  }
}

// True peak: 4× oversampling by a windowed-sinc interpolator (BS.1770-4 Annex 2 asks for at
// least 4×; 16 taps a phase). Phase 0 is the sample itself (the sinc is 0 at other integers).
const TP_TAPS = 16
const TP_HALF = TP_TAPS / 2
const TP_PHASES: ReadonlyArray<Float64Array> = [1, 2, 3].map((phase) => {
  const taps = new Float64Array(TP_TAPS)
  let sum = 0
  for (let k = 0; k < TP_TAPS; k++) {
    // position of tap k relative to the interpolated point, in input samples
    const t = k - TP_HALF + 1 - phase / 4
    const sinc = Math.sin(Math.PI * t) / (Math.PI * t)
    const window = 0.5 + 0.5 * Math.cos((Math.PI * t) / (TP_HALF + 0.5))
    taps[k] = sinc * window
    sum += taps[k]!
  }
  for (let k = 0; k < TP_TAPS; k++) taps[k]! /= sum
  return taps
})
/** How far an interpolated point can exceed the largest sample under the filter: the sum of |taps|. */
const TP_BOUND = Math.max(...TP_PHASES.map((taps) => taps.reduce((s, t) => s + Math.abs(t), 0)))
/** The true-peak estimate of a sample lags its arrival by this many samples. */
export const TRUE_PEAK_DELAY = TP_HALF

/**
 * Per sample frame, the largest absolute value over every channel of the sample and the three
 * points the 4× interpolation puts between it and the next one, TRUE_PEAK_DELAY frames late.
 * The interpolation is skipped where it cannot matter: where even its bound (TP_BOUND × the
 * largest sample under the filter) stays under `floor` (what the caller has no use for).
 */
class TruePeak {
  /** Per channel: the last TP_TAPS − 1 samples, then the chunk's. */
  private readonly tails: Array<Float64Array>
  private work = new Float64Array(0)
  private bounds = new Float64Array(0)

  constructor(readonly channels: number) {
    this.tails = Array.from({ length: channels }, () => new Float64Array(TP_TAPS - 1))
  }

  /** `out[i]` gets the true peak of frame (first frame of `samples`) + i − TRUE_PEAK_DELAY. */
  process(samples: ArrayLike<number>, frames: number, out: Float64Array, floor: number) {
    const channels = this.channels
    const keep = TP_TAPS - 1
    if (this.work.length < keep + frames) this.work = new Float64Array(keep + frames)
    const x = this.work
    const [p1, p2, p3] = TP_PHASES as [Float64Array, Float64Array, Float64Array]
    out.fill(0, 0, frames)
    const skipBelow = floor / TP_BOUND
    if (this.bounds.length < keep + frames) this.bounds = new Float64Array(keep + frames)
    const bounds = this.bounds
    for (let c = 0; c < channels; c++) {
      const tail = this.tails[c]!
      x.set(tail)
      for (let i = 0; i < frames; i++) x[keep + i] = samples[i * channels + c]!
      // the largest |x| under the filter at i (x[i … i + 15]): the max of a suffix max over
      // the block of 16 that i is in and a prefix max over the next block
      const n = keep + frames
      for (let start = 0; start < n; start += TP_TAPS) {
        const end = Math.min(n, start + TP_TAPS)
        let m = 0
        for (let j = end - 1; j >= start; j--) {
          const v = x[j]!
          const a = v < 0 ? -v : v
          if (a > m) m = a
          bounds[j] = m // suffix max within the block
        }
      }
      let prefix = 0
      for (let i = 0; i < frames; i++) {
        const j = i + TP_TAPS - 1 // the filter's last sample
        if (j % TP_TAPS === 0) prefix = 0
        const v = x[j]!
        const a = v < 0 ? -v : v
        if (a > prefix) prefix = a
        const local = j % TP_TAPS === TP_TAPS - 1 ? bounds[i]! : (bounds[i]! > prefix ? bounds[i]! : prefix)
        const centre = x[i + TP_HALF - 1]!
        const ac = centre < 0 ? -centre : centre
        let peak = ac > out[i]! ? ac : out[i]!
        if (local >= skipBelow && local * TP_BOUND > peak) {
          let s1 = 0
          let s2 = 0
          let s3 = 0
          for (let k = 0; k < TP_TAPS; k++) {
            const v = x[i + k]!
            s1 += p1[k]! * v
            s2 += p2[k]! * v
            s3 += p3[k]! * v
          }
          if (s1 < 0) s1 = -s1
          if (s2 < 0) s2 = -s2
          if (s3 < 0) s3 = -s3
          if (s1 > peak) peak = s1
          if (s2 > peak) peak = s2
          if (s3 > peak) peak = s3
        }
        out[i] = peak
      }
      tail.set(x.subarray(frames, frames + keep))
    }
  }
}

/** Lookahead and release of the limiter's envelope. */
export const ATTACK_SAMPLES = 240 // 5 ms
const RELEASE_SECONDS = 0.1
const RELEASE = Math.exp(-1 / (RELEASE_SECONDS * RATE))
/** The envelope of a sample frame is known this many frames after it arrived. */
export const ENVELOPE_DELAY = TRUE_PEAK_DELAY + ATTACK_SAMPLES

/**
 * The limiter's peak envelope: never below the true peak of any sample it covers, rising
 * linearly over ATTACK_SAMPLES before a peak (a lookahead max, then a moving average of it:
 * the mean of maxima over windows that all hold the peak is at least the peak) and falling
 * exponentially after it. It depends on the audio only, not on any gain; below `floor` it is
 * not exact (the caller has no use for it there), never above it.
 */
export class PeakEnvelope {
  private readonly truePeak: TruePeak
  private peaks = new Float64Array(0)
  // sliding maximum over the last ATTACK_SAMPLES + 1 true peaks (a monotonic deque in a ring)
  private readonly values = new Float64Array(ATTACK_SAMPLES + 2)
  private readonly indices = new Float64Array(ATTACK_SAMPLES + 2)
  private head = 0
  private size = 0
  // moving average of the maxima
  private readonly maxima = new Float64Array(ATTACK_SAMPLES + 1)
  private sum = 0
  private released = 0
  private n = 0

  constructor(channels: number) {
    this.truePeak = new TruePeak(channels)
  }

  /**
   * `out[i]` gets the envelope of frame (first of `samples`) + i − ENVELOPE_DELAY; exact where
   * the true peaks under it reach `floor`.
   */
  process(samples: ArrayLike<number>, frames: number, out: Float64Array, floor: number) {
    if (this.peaks.length < frames) this.peaks = new Float64Array(frames)
    this.truePeak.process(samples, frames, this.peaks, floor)
    const cap = this.values.length
    const span = ATTACK_SAMPLES + 1
    for (let i = 0; i < frames; i++) {
      const peak = this.peaks[i]!
      const n = this.n++
      // drop smaller values from the back, then the expired front
      while (this.size > 0 && this.values[(this.head + this.size - 1) % cap]! <= peak) this.size--
      const back = (this.head + this.size) % cap
      this.values[back] = peak
      this.indices[back] = n
      this.size++
      while (this.indices[this.head]! <= n - span) {
        this.head = (this.head + 1) % cap
        this.size--
      }
      const max = this.values[this.head]! // max over true peaks n − ATTACK … n
      const slot = n % span
      this.sum += max - this.maxima[slot]!
      this.maxima[slot] = max
      const mean = this.sum > 0 ? this.sum / span : 0
      const decayed = this.released * RELEASE
      this.released = mean > decayed ? mean : decayed
      out[i] = this.released
    }
  }
}

/** Integrated loudness (gated, BS.1770) from a histogram of 400 ms block powers. */
class GatedBlocks {
  private static readonly BINS = (TOP_DB - FLOOR_DB) * FINE_BINS_PER_DB
  private readonly counts = new Float64Array(GatedBlocks.BINS)
  private readonly powers = new Float64Array(GatedBlocks.BINS)

  add(power: number) {
    const bin = binOf(LUFS_OFFSET + toDb(power), FINE_BINS_PER_DB, GatedBlocks.BINS)
    this.counts[bin]! += 1
    this.powers[bin]! += power
  }

  integrated(): number {
    const gateBin = (lufs: number) => Math.ceil((lufs - FLOOR_DB) * FINE_BINS_PER_DB)
    const meanFrom = (from: number) => {
      let count = 0
      let power = 0
      for (let b = Math.max(0, from); b < GatedBlocks.BINS; b++) {
        count += this.counts[b]!
        power += this.powers[b]!
      }
      return count > 0 ? power / count : 0
    }
    const ungated = meanFrom(gateBin(ABSOLUTE_GATE))
    if (ungated <= 0) return -Infinity
    const relative = LUFS_OFFSET + toDb(ungated) + RELATIVE_GATE
    return LUFS_OFFSET + toDb(meanFrom(gateBin(Math.max(ABSOLUTE_GATE, relative))))
  }
}

/** How loud 100 ms stretches are: the noise floor is a low percentile of it. */
class LevelHistogram {
  private static readonly BINS = (TOP_DB - FLOOR_DB) * 10
  private readonly counts = new Float64Array(LevelHistogram.BINS)
  private total = 0
  add(db: number) {
    this.counts[binOf(db, 10, LevelHistogram.BINS)]! += 1
    this.total++
  }
  /** The level below which `fraction` of the stretches lie (dB), or undefined without any. */
  percentile(fraction: number): number | undefined {
    if (this.total === 0) return undefined
    let seen = 0
    for (let b = 0; b < LevelHistogram.BINS; b++) {
      seen += this.counts[b]!
      if (seen >= fraction * this.total) return FLOOR_DB + (b + 0.5) / 10
    }
    return TOP_DB
  }
}

/** The noise floor: the level under which 10 % of the 100 ms stretches lie. */
const NOISE_FLOOR_PERCENTILE = 0.1

export interface Measured {
  /** Integrated loudness, LUFS (−Infinity for silence). */
  readonly integratedLufs: number
  /** Highest true peak, dBTP (−Infinity for silence). */
  readonly truePeakDbtp: number
  /** K-weighted level of the quietest stretches (dB), undefined when shorter than 100 ms. */
  readonly noiseFloorDb: number | undefined
  /** Sample frames measured. */
  readonly frames: number
}

/**
 * A streaming loudness meter over interleaved samples: integrated loudness, true peak and the
 * noise floor. With `stats`, it also gathers what `solveGain` needs (LimiterStats).
 */
export class LoudnessMeter {
  private readonly filters: Array<KFilter>
  private readonly envelope: PeakEnvelope
  private readonly blocks = new GatedBlocks()
  private readonly levels = new LevelHistogram()
  /** Energy of the last sub-blocks (a 400 ms block is four of them). */
  private readonly subPowers: Array<number> = []
  private subEnergy = 0
  private subFrames = 0
  // per-frame K-weighted energy, and the envelope (ENVELOPE_DELAY frames late)
  private energies = new Float64Array(0)
  private envelopes = new Float64Array(0)
  private readonly delayed = new Float64Array(ENVELOPE_DELAY)
  private peak = 0
  private frames = 0

  /** `truePeak` false: no true peak (reported as −Infinity), for a fraction of the cost. */
  constructor(readonly channels: number, private readonly stats?: LimiterStats, private readonly truePeak = true) {
    this.filters = Array.from({ length: channels }, () => new KFilter())
    this.envelope = new PeakEnvelope(channels)
  }

  push(samples: Float32Array): void {
    const channels = this.channels
    const frames = samples.length / channels
    if (this.energies.length < frames) {
      this.energies = new Float64Array(frames)
      this.envelopes = new Float64Array(frames)
    }
    const energies = this.energies
    energies.fill(0, 0, frames)
    for (let c = 0; c < channels; c++) this.filters[c]!.energies(samples, c, channels, frames, energies)
    const stats = this.stats
    if (this.truePeak || stats !== undefined) {
      // the report needs the highest peak only; the limiter, peaks it may act on (solveGain: at most MAX_GAIN_REDUCTION_DB under the highest)
      const floor = stats !== undefined ? this.peak * 10 ** (-MAX_GAIN_REDUCTION_DB / 20) / 2 : this.peak
      this.envelope.process(samples, frames, this.envelopes, floor)
      for (let i = 0; i < frames; i++) if (this.envelopes[i]! > this.peak) this.peak = this.envelopes[i]!
    }
    for (let i = 0; i < frames; i++) {
      if (stats !== undefined) {
        // the energy of frame n − ENVELOPE_DELAY meets its envelope
        const n = this.frames + i
        const slot = n % ENVELOPE_DELAY
        if (n >= ENVELOPE_DELAY) stats.addFrame(this.delayed[slot]!, this.envelopes[i]!)
        this.delayed[slot] = energies[i]!
      }
      this.subEnergy += energies[i]!
      if (++this.subFrames === SUB_BLOCK) this.closeSubBlock()
    }
    this.frames += frames
  }

  private closeSubBlock() {
    const power = this.subEnergy / SUB_BLOCK
    this.levels.add(LUFS_OFFSET + toDb(Math.max(power, 1e-30)))
    this.subPowers.push(power)
    if (this.subPowers.length > BLOCK_SUBS) this.subPowers.shift()
    this.subEnergy = 0
    this.subFrames = 0
    if (this.subPowers.length === BLOCK_SUBS) {
      const block = (this.subPowers[0]! + this.subPowers[1]! + this.subPowers[2]! + this.subPowers[3]!) / BLOCK_SUBS
      this.blocks.add(block)
      this.stats?.closeBlock(block)
    } else {
      this.stats?.closeBlock(undefined)
    }
  }

  /** What was measured; the true peak includes the last frames (their envelope still pending). */
  result(): Measured {
    let peak = this.peak
    if (this.truePeak) {
      // flush the true-peak and envelope pipeline with silence: the peaks of the last frames
      const out = new Float64Array(ENVELOPE_DELAY + 1)
      this.envelope.process(new Float32Array((ENVELOPE_DELAY + 1) * this.channels), ENVELOPE_DELAY + 1, out, peak)
      for (const value of out) if (value > peak) peak = value
    }
    return {
      integratedLufs: this.blocks.integrated(),
      truePeakDbtp: peak > 0 ? 20 * Math.log10(peak) : -Infinity,
      noiseFloorDb: this.levels.percentile(NOISE_FLOOR_PERCENTILE),
      frames: this.frames
    }
  }
}

/**
 * The report (decisions.md) from the input's and the output's measures; `gainDb` the loudness
 * gain, which the noise reduction leaves out (it is the denoiser's: the floor's drop against
 * the programme's level).
 */
export const audioReport = (input: Measured, output: Measured, gainDb: number): AudioReportRecord => {
  const floorIn = input.noiseFloorDb
  const floorOut = output.noiseFloorDb
  return new AudioReportRecord({
    inputLoudnessLufs: oneDecimal(Math.max(QUIETEST_LOUDNESS_LUFS, input.integratedLufs)),
    outputLoudnessLufs: oneDecimal(Math.max(QUIETEST_LOUDNESS_LUFS, output.integratedLufs)),
    outputTruePeakDbtp: oneDecimal(Math.max(QUIETEST_PEAK_DBTP, output.truePeakDbtp)),
    noiseReductionDb: floorIn === undefined || floorOut === undefined ? 0 : oneDecimal(floorIn - (floorOut - gainDb))
  })
}

/**
 * Per 400 ms block level (coarse bins) and envelope level (coarse bins): the K-weighted energy
 * of the frames. Enough to tell, for any gain, the limiter's reduction of each block's energy
 * (the gain reduction of a frame is a function of its envelope alone), hence the loudness.
 */
export class LimiterStats {
  private static readonly BINS = (TOP_DB - FLOOR_DB) * COARSE_BINS_PER_DB
  /** Rows by block level bin: energy by envelope bin. */
  readonly rows = new Map<number, Float64Array>()
  readonly blockCounts = new Map<number, number>()
  /** The energy by envelope bin of the sub-blocks of the block being completed. */
  private readonly subs: Array<Float64Array> = []
  private current = new Float64Array(LimiterStats.BINS)
  /** The highest envelope seen (linear). */
  maxEnvelope = 0

  addFrame(energy: number, envelope: number) {
    if (envelope > this.maxEnvelope) this.maxEnvelope = envelope
    if (energy === 0) return
    this.current[binOf(20 * Math.log10(Math.max(envelope, 1e-12)), COARSE_BINS_PER_DB, LimiterStats.BINS)]! += energy
  }

  /** A sub-block ended; `blockPower` is the mean power of the 400 ms block it completes, if any. */
  closeBlock(blockPower: number | undefined) {
    this.subs.push(this.current)
    if (this.subs.length > BLOCK_SUBS) this.subs.shift()
    this.current = new Float64Array(LimiterStats.BINS)
    if (blockPower === undefined || this.subs.length < BLOCK_SUBS) return
    const level = binOf(LUFS_OFFSET + toDb(Math.max(blockPower, 1e-30)), COARSE_BINS_PER_DB, LimiterStats.BINS)
    let row = this.rows.get(level)
    if (row === undefined) this.rows.set(level, row = new Float64Array(LimiterStats.BINS))
    for (const sub of this.subs) for (let b = 0; b < LimiterStats.BINS; b++) row[b]! += sub[b]!
    this.blockCounts.set(level, (this.blockCounts.get(level) ?? 0) + 1)
  }

  /**
   * The integrated loudness after `gainDb` and the limiter with `ceiling` (linear), LUFS. Each
   * block level bin is gated at its own level after the gain and its mean reduction.
   */
  loudnessAfter(gainDb: number, ceiling: number): number {
    const gain = 10 ** (gainDb / 20)
    const g2 = gain * gain
    const levels: Array<{ readonly lufs: number; readonly count: number; readonly power: number }> = []
    for (const [level, row] of this.rows) {
      let energy = 0
      for (let b = 0; b < row.length; b++) {
        if (row[b] === 0) continue
        const envelope = 10 ** ((FLOOR_DB + (b + 0.5) / COARSE_BINS_PER_DB) / 20)
        energy += row[b]! * Math.min(g2, (ceiling / envelope) ** 2)
      }
      const count = this.blockCounts.get(level)!
      // a block's power is its energy over BLOCK_SUBS × SUB_BLOCK frames
      const power = energy / (BLOCK_SUBS * SUB_BLOCK)
      levels.push({ lufs: LUFS_OFFSET + toDb(power / count), count, power })
    }
    const mean = (gate: number) => {
      let count = 0
      let power = 0
      for (const l of levels) if (l.lufs > gate) { count += l.count; power += l.power }
      return count > 0 ? power / count : 0
    }
    const ungated = mean(ABSOLUTE_GATE)
    if (ungated <= 0) return -Infinity
    return LUFS_OFFSET + toDb(mean(Math.max(ABSOLUTE_GATE, LUFS_OFFSET + toDb(ungated) + RELATIVE_GATE)))
  }
}

/** The limiter may take at most this much from the loudest peak: a loud target on peaky audio stops short of it. */
export const MAX_GAIN_REDUCTION_DB = 10

/**
 * The gain (dB) that, followed by the limiter at `ceilingDbtp`, brings the audio measured in
 * `stats` to `targetLufs`; bounded so that the limiter never reduces by more than
 * MAX_GAIN_REDUCTION_DB. 0 for silence.
 */
export const solveGain = (stats: LimiterStats, measuredLufs: number, targetLufs: number, ceilingDbtp: number): number => {
  if (!Number.isFinite(measuredLufs) || measuredLufs <= ABSOLUTE_GATE) return 0
  const ceiling = 10 ** (ceilingDbtp / 20)
  // the statistics gate whole bins of block levels: what that misses (a tenth of a dB or so)
  // is measured at no gain and taken off every prediction
  const bias = stats.loudnessAfter(0, Infinity) - measuredLufs
  const after = (gainDb: number) => stats.loudnessAfter(gainDb, ceiling) - (Number.isFinite(bias) ? bias : 0)
  const highest = stats.maxEnvelope > 0 ? ceilingDbtp + MAX_GAIN_REDUCTION_DB - 20 * Math.log10(stats.maxEnvelope) : Infinity
  let low = targetLufs - measuredLufs - 1
  let high = Math.min(highest, targetLufs - measuredLufs + 30)
  if (high <= low) return high
  if (after(high) <= targetLufs) return high
  // the loudness after the limiter rises with the gain: bisection
  for (let i = 0; i < 40; i++) {
    const mid = (low + high) / 2
    if (after(mid) < targetLufs) low = mid
    else high = mid
  }
  return (low + high) / 2
}

/**
 * Gain then the limiter, streaming: each frame is multiplied by gain × min(1, ceiling /
 * (gain × envelope)). Output lags input by ENVELOPE_DELAY frames; `end` flushes them.
 */
export class Limiter {
  private readonly envelope: PeakEnvelope
  private readonly ring: Float32Array
  private frames = 0

  constructor(readonly channels: number, private readonly gainDb: number, private readonly ceilingDbtp: number) {
    this.envelope = new PeakEnvelope(channels)
    this.ring = new Float32Array((ENVELOPE_DELAY + 1) * channels)
  }

  /** Output for as many frames as are ready (all but the last ENVELOPE_DELAY in all). */
  push(samples: Float32Array): Float32Array {
    const channels = this.channels
    const input = samples.length / channels
    const ready = Math.max(0, Math.min(input, this.frames + input - ENVELOPE_DELAY))
    const out = new Float32Array(ready * channels)
    this.run(samples, input, out)
    return out
  }

  end(): Float32Array {
    const pending = Math.min(this.frames, ENVELOPE_DELAY)
    const out = new Float32Array(pending * this.channels)
    this.run(new Float32Array(ENVELOPE_DELAY * this.channels), ENVELOPE_DELAY, out)
    return out
  }

  private envelopes = new Float64Array(0)

  private run(samples: Float32Array, input: number, out: Float32Array) {
    const channels = this.channels
    const gain = 10 ** (this.gainDb / 20)
    const ceiling = 10 ** (this.ceilingDbtp / 20)
    if (this.envelopes.length < input) this.envelopes = new Float64Array(input)
    // only envelopes over ceiling / gain reduce anything
    this.envelope.process(samples, input, this.envelopes, ceiling / gain / 2)
    const size = ENVELOPE_DELAY + 1
    let written = 0
    for (let i = 0; i < input; i++) {
      const slot = this.frames % size
      for (let c = 0; c < channels; c++) this.ring[slot * channels + c] = samples[i * channels + c]!
      if (this.frames >= ENVELOPE_DELAY && written * channels < out.length) {
        const late = ((slot + 1) % size) * channels
        const envelope = this.envelopes[i]!
        const g = gain * envelope > ceiling ? ceiling / envelope : gain
        for (let c = 0; c < channels; c++) out[written * channels + c] = this.ring[late + c]! * g
        written++
      }
      this.frames++
    }
  }
}
