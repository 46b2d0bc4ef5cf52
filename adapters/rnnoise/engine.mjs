// RNNoise (newer, 0.2-style weights from `@jitsi/rnnoise-wasm/dist/rnnoise-sync.js`) over
// interleaved float PCM at 48 kHz. One WebAssembly instance per thread, one model state per
// channel. Unless `strength` is 0, each channel's mains hum is removed first (hum.mjs),
// which RNNoise leaves. The output is aligned with the input (the delays of both are
// trimmed) and exactly as long as it (the tail is flushed with silence).
//
// Plain JavaScript (types in engine.d.mts) because worker threads load it as is: a
// TypeScript loader in every thread would cost ~50 MB and ~200 ms each.
import createRnnoiseModule from "@jitsi/rnnoise-wasm/dist/rnnoise-sync.js"
import { GTCRN_DELAY, gtcrnModule } from "./gtcrn.mjs"
import { HUM_BLOCK, HUM_DEFAULTS, HumRemover } from "./hum.mjs"
import { makeMix } from "./mix.mjs"

export const SAMPLE_RATE = 48_000
export const FRAME_SIZE = 480
/** RNNoise's delay (newer weights). */
export const MODEL_DELAY = 960
/** Each model's delay, a whole number of frames: the output of frame n is the input of frame n − delay / FRAME_SIZE. */
export const MODEL_DELAYS = Object.freeze({ rnnoise: MODEL_DELAY, gtcrn: GTCRN_DELAY })
/** The hum stage (hum.mjs) delays what the model gets by this much: its look-ahead. */
export const HUM_DELAY = (HUM_DEFAULTS.lookBlocks + 1) * HUM_BLOCK
/** Output lags input by at most this much inside a Denoiser (it is trimmed: callers see aligned output). */
export const LATENCY = Math.max(...Object.values(MODEL_DELAYS)) + HUM_DELAY

// RNNoise works on floats in the 16-bit range; fed −1…1 it barely acts.
const SCALE = 32768
const MAX_IN = 32767

let instance

/** The thread's WebAssembly instance of `model` (both offer RNNoise's low-level API: gtcrn.mjs). */
export const modelModule = (model) => (model === "gtcrn" ? gtcrnModule() : rnnoiseModule())

export const rnnoiseModule = () => {
  if (instance === undefined) {
    // The sync build compiles its embedded WebAssembly during the call.
    const module = createRnnoiseModule()
    if (typeof module._rnnoise_create !== "function" || module.calledRun !== true) {
      throw new Error("the RNNoise WebAssembly module did not initialise synchronously")
    }
    instance = module
  }
  return instance
}

export class Denoiser {
  #module
  #states = []
  #buffers = []
  /** Input of the frame being filled, per channel, already scaled. */
  #pending = []
  #filled = 0
  #skip
  #latency
  #inputSamples = 0
  #outputSamples = 0
  #closed = false
  /** Per channel: the mixer, and the last DRY_FRAMES input frames (the dry signal an output frame is mixed with). */
  #mixes = []
  #history = []
  /** Per channel: the hum stage, before the model (none for strength 0: the input, untouched). */
  #hums = []
  /** The adaptive default mixes back the input without its hum; a fixed strength, the input itself. */
  #dryWithoutHum
  #frames = 0
  /** Observes every mixed frame (the bench's hook); undefined in production. */
  #observe
  /** The model's delay in frames, and the input frames kept for mixing (one more). */
  #delayFrames
  #dryFrames

  constructor(channels, strength = 1, mixParams = undefined, observe = undefined, model = "rnnoise") {
    if (!Number.isInteger(channels) || channels < 1) throw new Error(`invalid channel count ${channels}`)
    if (!(model in MODEL_DELAYS)) throw new Error(`unknown model ${model}`)
    this.channels = channels
    this.#observe = observe
    this.#module = modelModule(model)
    const delay = MODEL_DELAYS[model]
    this.#delayFrames = delay / FRAME_SIZE
    this.#dryFrames = this.#delayFrames + 1
    const hum = strength !== 0
    this.#latency = hum ? delay + HUM_DELAY : delay
    this.#skip = this.#latency
    this.#dryWithoutHum = strength === null || strength === undefined
    for (let c = 0; c < channels; c++) {
      if (hum) this.#hums.push(new HumRemover(FRAME_SIZE))
      this.#states.push(this.#module._rnnoise_create(0))
      this.#buffers.push(this.#module._malloc(FRAME_SIZE * 4))
      this.#pending.push(new Float32Array(FRAME_SIZE))
      // strength 1 is the model alone: no mixer, no copy of the input
      if (strength !== 1) {
        this.#mixes.push(makeMix(strength, mixParams))
        this.#history.push(new Float32Array(this.#dryFrames * FRAME_SIZE))
      }
    }
  }

  push(input) {
    const out = new Float32Array(this.#ready(input.length / this.channels) * this.channels)
    this.pushInto(input, out, 0)
    return out
  }

  end() {
    const out = new Float32Array((this.#inputSamples - this.#outputSamples) * this.channels)
    this.endInto(out, 0)
    return out
  }

  pushInto(input, out, at) {
    if (input.length % this.channels !== 0) throw new Error("input must hold whole sample frames")
    const frames = input.length / this.channels
    this.#inputSamples += frames
    return this.#consume(input, frames, out, at)
  }

  endInto(out, at) {
    const missing = this.#inputSamples - this.#outputSamples
    if (missing <= 0) return 0
    // Whatever is pending, the latency + FRAME_SIZE of silence completes every output; the hum
    // stage leaves that silence out of its estimates.
    for (const hum of this.#hums) hum.end()
    const pad = this.#latency + FRAME_SIZE
    const tail = new Float32Array(this.#ready(pad) * this.channels)
    this.#consume(new Float32Array(pad * this.channels), pad, tail, 0)
    out.set(tail.subarray(0, missing * this.channels), at * this.channels)
    this.#outputSamples = this.#inputSamples
    return missing
  }

  close() {
    if (this.#closed) return
    this.#closed = true
    for (let c = 0; c < this.channels; c++) {
      this.#module._rnnoise_destroy(this.#states[c])
      this.#module._free(this.#buffers[c])
    }
  }

  /** Output sample frames that `frames` more input frames complete. */
  #ready(frames) {
    return Math.max(0, Math.floor((this.#filled + frames) / FRAME_SIZE) * FRAME_SIZE - this.#skip)
  }

  // Output frame positions trail input positions by the latency, and each frame's input is
  // copied into the WebAssembly heap before its output is written: `out` may be `input`.
  #consume(input, samples, out, at) {
    if (this.#closed) throw new Error("the denoiser is closed")
    const channels = this.channels
    const frames = Math.floor((this.#filled + samples) / FRAME_SIZE)
    // Read after the mallocs: a heap growth replaces the view.
    let heap = this.#module.HEAPF32
    let read = 0 // sample frames of `input` consumed
    let written = 0 // sample frames written to `out` from `at`
    for (let f = 0; f < frames; f++) {
      const take = FRAME_SIZE - this.#filled
      const drop = Math.min(this.#skip, FRAME_SIZE)
      let fed = true
      for (let c = 0; c < channels; c++) {
        const pointer = this.#buffers[c]
        const base = pointer >> 2
        if (this.#filled > 0) heap.set(this.#pending[c].subarray(0, this.#filled), base)
        for (let i = 0, j = read * channels + c, k = base + this.#filled; i < take; i++, j += channels, k++) {
          const v = input[j] * SCALE
          heap[k] = v > MAX_IN ? MAX_IN : v < -SCALE ? -SCALE : v
        }
        const frame = heap.subarray(base, base + FRAME_SIZE)
        const hum = this.#hums[c]
        // While the hum stage's delay line fills, there is nothing for the model (all is dropped).
        if (hum !== undefined && !hum.process(frame)) {
          fed = false
          continue
        }
        const mixed = this.#mixes.length > 0
        if (mixed) {
          const dry = hum === undefined || this.#dryWithoutHum ? frame : hum.raw
          this.#history[c].set(dry, (this.#frames % this.#dryFrames) * FRAME_SIZE)
        }
        const vad = this.#module._rnnoise_process_frame(this.#states[c], pointer, pointer)
        // a model may grow its memory while it runs (GTCRN): the view is read again
        if (heap.buffer !== this.#module.HEAPF32.buffer) heap = this.#module.HEAPF32
        // Frames before the model's delay has passed are dropped: nothing to mix.
        if (mixed && this.#frames >= this.#delayFrames) {
          const at = ((this.#frames - this.#delayFrames) % this.#dryFrames) * FRAME_SIZE
          const dry = this.#history[c].subarray(at, at + FRAME_SIZE)
          const wet = heap.subarray(base, base + FRAME_SIZE)
          if (this.#observe !== undefined) this.#observe(c, dry, wet, vad, "before")
          this.#mixes[c].process(dry, wet, vad)
          if (this.#observe !== undefined) this.#observe(c, dry, wet, vad, "after")
        }
        for (let i = drop, j = (at + written) * channels + c, k = base + drop; i < FRAME_SIZE; i++, j += channels, k++) {
          const v = heap[k] / SCALE
          out[j] = v > 1 ? 1 : v < -1 ? -1 : v
        }
      }
      if (fed) this.#frames++
      read += take
      written += FRAME_SIZE - drop
      this.#skip -= drop
      this.#filled = 0
    }
    // Keep the partial frame for the next call.
    const rest = samples - read
    for (let c = 0; c < channels; c++) {
      const pending = this.#pending[c]
      for (let i = 0, j = read * channels + c; i < rest; i++, j += channels) {
        const v = input[j] * SCALE
        pending[this.#filled + i] = v > MAX_IN ? MAX_IN : v < -SCALE ? -SCALE : v
      }
    }
    this.#filled += rest
    this.#outputSamples += written
    return written
  }
}

// In place: the chunk's buffer comes back holding the output, nothing else is allocated
// (a worker thread then keeps no garbage between chunks).
export const denoiseChunk = (pcm, channels, skip, take, strength = 1, model = "rnnoise") => {
  const denoiser = new Denoiser(channels, strength, undefined, undefined, model)
  try {
    const written = denoiser.pushInto(pcm, pcm, 0)
    denoiser.endInto(pcm, written)
    return pcm.subarray(skip * channels, (skip + take) * channels)
  } finally {
    denoiser.close()
  }
}
