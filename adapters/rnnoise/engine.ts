/**
 * RNNoise (newer, 0.2-style weights from `@jitsi/rnnoise-wasm/dist/rnnoise-sync.js`) over
 * interleaved float PCM at 48 kHz. One WebAssembly instance per thread, one model state per
 * channel. The output is aligned with the input (the model's delay is trimmed) and exactly
 * as long as it (the tail is flushed with silence).
 */
import createRnnoiseModule from "@jitsi/rnnoise-wasm/dist/rnnoise-sync.js"

export const SAMPLE_RATE = 48_000
/** RNNoise consumes and produces 10 ms frames. */
export const FRAME_SIZE = 480
/** Output lags input by this many samples with the newer weights (measured in test/rnnoise-engine.test.ts). */
export const MODEL_DELAY = 960

/** RNNoise works on floats in the 16-bit range; fed −1…1 it barely acts. */
const SCALE = 32768
const MAX_IN = 32767

interface RnnoiseModule {
  readonly HEAPF32: Float32Array
  readonly calledRun?: boolean
  _malloc(bytes: number): number
  _free(pointer: number): void
  _rnnoise_create(model: number): number
  _rnnoise_destroy(state: number): void
  /** Denoises one frame (in and out may be the same buffer); answers the voice probability. */
  _rnnoise_process_frame(state: number, out: number, input: number): number
}

let instance: RnnoiseModule | undefined

/** The thread's WebAssembly instance, built on first use (about 15 ms). */
export const rnnoiseModule = (): RnnoiseModule => {
  if (instance === undefined) {
    const module = createRnnoiseModule() as RnnoiseModule
    if (typeof module._rnnoise_create !== "function" || module.calledRun !== true) {
      throw new Error("the RNNoise WebAssembly module did not initialise synchronously")
    }
    instance = module
  }
  return instance
}

/**
 * Streaming denoiser for `channels` interleaved channels. `push` whole sample frames (a
 * multiple of `channels` values); each call answers the output that is ready, and `end`
 * the rest, so that the concatenated output is exactly as long as the input.
 */
export class Denoiser {
  private readonly module = rnnoiseModule()
  private readonly states: Array<number> = []
  private readonly buffers: Array<number> = []
  /** Input of the frame being filled, per channel, already scaled. */
  private readonly pending: Array<Float32Array> = []
  private filled = 0
  private skip = MODEL_DELAY
  private inputSamples = 0
  private outputSamples = 0
  private closed = false

  constructor(readonly channels: number) {
    if (!Number.isInteger(channels) || channels < 1) throw new Error(`invalid channel count ${channels}`)
    for (let c = 0; c < channels; c++) {
      this.states.push(this.module._rnnoise_create(0))
      this.buffers.push(this.module._malloc(FRAME_SIZE * 4))
      this.pending.push(new Float32Array(FRAME_SIZE))
    }
  }

  push(input: Float32Array): Float32Array {
    const channels = this.channels
    if (input.length % channels !== 0) throw new Error("input must hold whole sample frames")
    this.inputSamples += input.length / channels
    return this.consume(input, input.length / channels)
  }

  /** Flushes the model with silence until every input sample has its output. */
  end(): Float32Array {
    const missing = this.inputSamples - this.outputSamples
    if (missing <= 0) return new Float32Array(0)
    // Whatever is pending, MODEL_DELAY + FRAME_SIZE of silence completes every output.
    const pad = MODEL_DELAY + FRAME_SIZE
    const out = this.consume(new Float32Array(pad * this.channels), pad)
    return out.subarray(0, missing * this.channels)
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (let c = 0; c < this.channels; c++) {
      this.module._rnnoise_destroy(this.states[c]!)
      this.module._free(this.buffers[c]!)
    }
  }

  private consume(input: Float32Array, samples: number): Float32Array {
    if (this.closed) throw new Error("the denoiser is closed")
    const channels = this.channels
    const frames = Math.floor((this.filled + samples) / FRAME_SIZE)
    const ready = Math.max(0, frames * FRAME_SIZE - this.skip)
    const out = new Float32Array(ready * channels)
    // Read after the mallocs: a heap growth replaces the view.
    const heap = this.module.HEAPF32
    let read = 0 // sample frames of `input` consumed
    let written = 0 // sample frames of `out` written
    for (let f = 0; f < frames; f++) {
      const take = FRAME_SIZE - this.filled
      const drop = Math.min(this.skip, FRAME_SIZE)
      for (let c = 0; c < channels; c++) {
        const base = this.buffers[c]! >> 2
        if (this.filled > 0) heap.set(this.pending[c]!.subarray(0, this.filled), base)
        for (let i = 0, j = read * channels + c, k = base + this.filled; i < take; i++, j += channels, k++) {
          const v = input[j]! * SCALE
          heap[k] = v > MAX_IN ? MAX_IN : v < -SCALE ? -SCALE : v
        }
        this.module._rnnoise_process_frame(this.states[c]!, this.buffers[c]!, this.buffers[c]!)
        for (let i = drop, j = written * channels + c, k = base + drop; i < FRAME_SIZE; i++, j += channels, k++) {
          const v = heap[k]! / SCALE
          out[j] = v > 1 ? 1 : v < -1 ? -1 : v
        }
      }
      read += take
      written += FRAME_SIZE - drop
      this.skip -= drop
      this.filled = 0
    }
    // Keep the partial frame for the next call.
    const rest = samples - read
    for (let c = 0; c < channels; c++) {
      const pending = this.pending[c]!
      for (let i = 0, j = read * channels + c; i < rest; i++, j += channels) {
        const v = input[j]! * SCALE
        pending[this.filled + i] = v > MAX_IN ? MAX_IN : v < -SCALE ? -SCALE : v
      }
    }
    this.filled += rest
    this.outputSamples += written
    return out
  }
}

/**
 * Denoises a chunk cut from a longer recording: `pcm` holds `skip` sample frames of warm-up
 * (audio just before the chunk, whose output is discarded), the chunk's `take` sample frames,
 * then look-ahead (audio just after it, at least MODEL_DELAY when there is any) so that the
 * chunk's last output samples are computed from the real audio that follows, not silence.
 */
export const denoiseChunk = (pcm: Float32Array, channels: number, skip: number, take: number): Float32Array => {
  const denoiser = new Denoiser(channels)
  try {
    const head = denoiser.push(pcm)
    const tail = denoiser.end()
    const all = new Float32Array(head.length + tail.length)
    all.set(head)
    all.set(tail, head.length)
    return all.slice(skip * channels, (skip + take) * channels)
  } finally {
    denoiser.close()
  }
}
