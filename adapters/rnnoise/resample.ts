/**
 * Sample-rate conversion by a rational ratio, streaming and without delay: output frame k is
 * the band-limited input at time k × from / to (a windowed-sinc polyphase filter centred on
 * it), so a click at input time t comes out at output time t, to the nearest sample. Used
 * where the models' 48 kHz and an input's rate differ (decisions.md, Denoise options:
 * Alignment): a 44.1 kHz input is brought to 48 kHz for the model and back for its output.
 */

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))

/** Input frames on each side of an output instant, at a ratio of 1 (more when decimating). */
const HALF_TAPS = 16
/** The pass band ends at this fraction of the lower of the two Nyquist frequencies. */
const BANDWIDTH = 0.94

/** Frames at `to` of `frames` at `from`: the same duration, to the nearest frame. */
export const resampledLength = (frames: number, from: number, to: number) => Math.round((frames * to) / from)

export class Resampler {
  private readonly up: number
  private readonly down: number
  private readonly half: number
  /** Per phase, 2 × half taps: phase p serves output instants at a fractional input offset p / up. */
  private readonly table: Float64Array
  /** Input frames kept: from `base` on (interleaved); earlier ones are no longer needed. */
  private buffer: Float32Array
  private base = 0
  private held = 0
  /** Output frames made so far. */
  private made = 0

  constructor(readonly channels: number, readonly from: number, readonly to: number) {
    const divisor = gcd(from, to)
    this.up = to / divisor
    this.down = from / divisor
    const ratio = Math.min(1, this.up / this.down) * BANDWIDTH
    this.half = Math.ceil(HALF_TAPS / Math.min(1, this.up / this.down))
    const width = 2 * this.half
    this.table = new Float64Array(this.up * width)
    for (let p = 0; p < this.up; p++) {
      let sum = 0
      for (let j = 0; j < width; j++) {
        // the distance of input frame (i0 − half + 1 + j) from the output instant i0 + p / up
        const t = p / this.up + this.half - 1 - j
        const x = Math.PI * ratio * t
        const sinc = t === 0 ? 1 : Math.sin(x) / x
        const w = t / (this.half + 1)
        // Blackman window over ±(half + 1)
        const window = Math.abs(w) >= 1 ? 0 : 0.42 + 0.5 * Math.cos(Math.PI * w) + 0.08 * Math.cos(2 * Math.PI * w)
        this.table[p * width + j] = sinc * window
        sum += sinc * window
      }
      for (let j = 0; j < width; j++) this.table[p * width + j]! /= sum
    }
    this.buffer = new Float32Array(4096 * channels)
  }

  /** The output that the input so far completes. */
  push(samples: Float32Array): Float32Array {
    this.append(samples)
    return this.produce(Infinity)
  }

  /** The rest of the output, so that `total` frames have been made in all (the input's end is padded with silence). */
  end(total: number): Float32Array {
    this.append(new Float32Array((this.half + 1) * this.channels))
    const out = this.produce(total)
    const missing = total - this.made
    if (missing <= 0) return out
    // only when `total` asks for more than the input's duration: silence
    const padded = new Float32Array(out.length + missing * this.channels)
    padded.set(out)
    this.made = total
    return padded
  }

  private append(samples: Float32Array) {
    const channels = this.channels
    const frames = samples.length / channels
    // drop what no output needs any more: frames before the next output's first tap
    const needed = Math.max(0, Math.floor((this.made * this.down) / this.up) - this.half + 1)
    if (needed > this.base) {
      const drop = Math.min(needed - this.base, this.held)
      this.buffer.copyWithin(0, drop * channels, this.held * channels)
      this.base += drop
      this.held -= drop
    }
    if ((this.held + frames) * channels > this.buffer.length) {
      const grown = new Float32Array(Math.max(2 * this.buffer.length, (this.held + frames) * channels))
      grown.set(this.buffer.subarray(0, this.held * channels))
      this.buffer = grown
    }
    this.buffer.set(samples, this.held * channels)
    this.held += frames
  }

  /** Every output frame whose taps are all in hand, up to `limit` frames made in all. */
  private produce(limit: number): Float32Array {
    const { up, down, half, channels, table } = this
    const width = 2 * half
    const available = this.base + this.held
    // output k needs input frames up to floor(k × down / up) + half
    let last = Math.floor(((available - half) * up - 1) / down)
    if (!Number.isFinite(limit)) last = Math.min(last, Number.MAX_SAFE_INTEGER)
    const count = Math.max(0, Math.min(limit - this.made, last + 1 - this.made))
    const out = new Float32Array(count * channels)
    const buffer = this.buffer
    const base = this.base
    for (let o = 0; o < count; o++) {
      const k = this.made + o
      const i0 = Math.floor((k * down) / up)
      const taps = ((k * down) % up) * width
      // taps before the input's start (base 0 only: nothing dropped yet) read silence
      const skip = Math.max(0, base - (i0 - half + 1))
      const from = (i0 - half + 1 + skip - base) * channels
      for (let c = 0; c < channels; c++) {
        let s = 0
        for (let j = skip, at = from + c; j < width; j++, at += channels) s += table[taps + j]! * buffer[at]!
        out[o * channels + c] = s
      }
    }
    this.made += count
    return out
  }
}
