// GTCRN (Rong Xiaobin, ICASSP 2024; MIT), the second CPU model: `dist/gtcrn.wasm` of
// `@sapphi-red/web-noise-suppressor` (weights inside, MIT), called as its
// `dist/gtcrn/workletProcessor.js` calls it: `_gtcrn_process_48k(state, in, out)` on blocks of
// 768 samples at 48 kHz in −1…1 (it resamples to its 16 kHz inside). Its output trails its
// input by 890 samples (measured by cross-correlation on speech: 890.006).
//
// It is offered to the Denoiser (engine.mjs) with RNNoise's low-level API, so that one engine
// runs both models (hum stage, strength, chunks): 10 ms frames of 480 samples in the 16-bit
// range, processed in place, answering a voice probability. Frames go through a FIFO into
// 768-sample blocks; the FIFO is primed so that every frame's output is ready when asked and
// the whole delay is a whole number of frames (MODEL_DELAY). GTCRN has no voice detector: the
// probability given is the share of the frame's energy the model kept (what a mask-based model
// keeps is what it takes for speech): 1 at 0 dB, 0 at −15 dB and below.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

const FRAME = 480
const BLOCK = 768
const SCALE = 32768
/** GTCRN's own delay at 48 kHz, samples. */
const NATIVE_DELAY = 890
/** The delay seen by the engine: the FIFO's priming plus GTCRN's, a whole number of frames. */
export const GTCRN_DELAY = 1920
const PRIME = GTCRN_DELAY - NATIVE_DELAY
/** The voice probability: 1 when the model keeps a frame's energy, 0 at this many dB under. */
const KEPT_RANGE_DB = 15

let instance

const load = () => {
  const require = createRequire(import.meta.url)
  const bytes = readFileSync(require.resolve("@sapphi-red/web-noise-suppressor/gtcrn.wasm"))
  let memory
  const imports = {
    a: {
      a: () => { throw new Error("GTCRN: an assertion failed inside the model") },
      // emscripten_resize_heap: grow to at least `size` bytes
      b: (size) => {
        const pages = Math.ceil((size - memory.buffer.byteLength) / 65536)
        try {
          memory.grow(pages)
          return 1
        } catch {
          return 0
        }
      }
    }
  }
  const module = new WebAssembly.Module(bytes)
  const exports = new WebAssembly.Instance(module, imports).exports
  memory = exports.c
  exports.d() // the module's constructors
  return { exports, memory }
}

class Stream {
  constructor(exports) {
    this.state = exports.e()
    if (!this.state) throw new Error("GTCRN: could not create a model state")
    this.input = exports.k(BLOCK * 4)
    this.output = exports.k(BLOCK * 4)
    // up to a block less one sample waits, then a frame arrives
    this.fifoIn = new Float32Array(BLOCK + FRAME)
    this.filled = 0
    // the output queue, primed with silence
    this.fifoOut = new Float32Array(PRIME + 2 * BLOCK)
    this.queued = PRIME
    // the input, delayed as the output is, for the kept-energy ratio
    this.dry = new Float32Array(GTCRN_DELAY + FRAME)
    this.dryAt = 0
  }
}

/** RNNoise's API over GTCRN (see the module comment); one per thread. */
export const gtcrnModule = () => {
  if (instance !== undefined) return instance
  const { exports, memory } = load()
  const streams = new Map()
  let next = 1
  instance = {
    get HEAPF32() {
      return new Float32Array(memory.buffer)
    },
    calledRun: true,
    _malloc: (bytes) => exports.k(bytes),
    _free: (pointer) => exports.f(pointer),
    _rnnoise_create: () => {
      const id = next++
      streams.set(id, new Stream(exports))
      return id
    },
    _rnnoise_destroy: (id) => {
      const s = streams.get(id)
      if (s === undefined) return
      exports.g(s.state)
      exports.f(s.input)
      exports.f(s.output)
      streams.delete(id)
    },
    _rnnoise_process_frame: (id, out, input) => {
      const s = streams.get(id)
      let heap = new Float32Array(memory.buffer)
      const frame = heap.subarray(input >> 2, (input >> 2) + FRAME)
      let power = 0
      for (let i = 0; i < FRAME; i++) {
        const v = frame[i] / SCALE
        s.fifoIn[s.filled + i] = v
        // the dry ring: what this frame's output will be compared with, GTCRN_DELAY later
        const at = (s.dryAt + i) % s.dry.length
        s.dry[at] = v
      }
      s.filled += FRAME
      s.dryAt = (s.dryAt + FRAME) % s.dry.length
      if (s.filled >= BLOCK) {
        heap.set(s.fifoIn.subarray(0, BLOCK), s.input >> 2)
        exports.j(s.state, s.input, s.output)
        heap = new Float32Array(memory.buffer) // the model may have grown the memory
        s.fifoOut.set(heap.subarray(s.output >> 2, (s.output >> 2) + BLOCK), s.queued)
        s.queued += BLOCK
        s.fifoIn.copyWithin(0, BLOCK, s.filled)
        s.filled -= BLOCK
      }
      const target = heap.subarray(out >> 2, (out >> 2) + FRAME)
      let kept = 0
      // the input frame that this output frame corresponds to: GTCRN_DELAY samples earlier
      const from = (s.dryAt - FRAME - GTCRN_DELAY + 2 * s.dry.length) % s.dry.length
      for (let i = 0; i < FRAME; i++) {
        const w = s.fifoOut[i]
        kept += w * w
        const d = s.dry[(from + i) % s.dry.length]
        power += d * d
        target[i] = w * SCALE
      }
      s.fifoOut.copyWithin(0, FRAME, s.queued)
      s.queued -= FRAME
      if (power <= 1e-12) return 0
      const keptDb = 10 * Math.log10(Math.max(kept, 1e-20) / power)
      return Math.max(0, Math.min(1, 1 + keptDb / KEPT_RANGE_DB))
    }
  }
  return instance
}
