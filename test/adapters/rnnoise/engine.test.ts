/**
 * The RNNoise engine on its own (no ffmpeg between it and the samples, except to make the
 * fixture): the model's delay, its trimming, lengths, channels and chunk seams; and GTCRN
 * through the same engine against the model called directly.
 * Needs ffmpeg on PATH (fixtures are generated, never committed).
 */
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Denoiser, denoiseChunk, FRAME_SIZE, MODEL_DELAY, rnnoiseModule } from "../../../adapters/rnnoise/engine.mjs"
import { ChunkCutter, FloatFrames } from "../../../adapters/rnnoise/pcm.js"
import { bestLag, decodeToFloat, levelDb, makeNoisySpeech, RATE } from "../../support/audio-fixtures.js"

let dir = ""
let mono: Float32Array = new Float32Array(0)
let right: Float32Array = new Float32Array(0)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-rnnoise-engine-"))
  await makeNoisySpeech(join(dir, "mono.wav"), { seconds: 12 })
  await makeNoisySpeech(join(dir, "stereo.wav"), { seconds: 12, channels: 2 })
  mono = await decodeToFloat(join(dir, "mono.wav"))
  const stereo = await decodeToFloat(join(dir, "stereo.wav"))
  right = new Float32Array(stereo.length / 2).map((_, i) => stereo[2 * i + 1]!)
})

afterAll(() => rm(dir, { recursive: true, force: true }))

/** The whole signal through one Denoiser, fed in `pieces` uneven pushes. */
const denoiseAll = (x: Float32Array, channels: number, pieces = 1, strength: number | null = 1, model: "rnnoise" | "gtcrn" = "rnnoise") => {
  const denoiser = new Denoiser(channels, strength, undefined, undefined, model)
  const parts: Array<Float32Array> = []
  const frames = x.length / channels
  for (let p = 0; p < pieces; p++) {
    const from = Math.floor((frames * p * p) / (pieces * pieces)) // uneven sizes
    const to = Math.floor((frames * (p + 1) * (p + 1)) / (pieces * pieces))
    parts.push(denoiser.push(x.subarray(from * channels, to * channels)))
  }
  parts.push(denoiser.end())
  denoiser.close()
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) (out.set(p, at), at += p.length)
  return out
}

const sameSamples = (a: Float32Array, b: Float32Array) => a.length === b.length && a.every((v, i) => v === b[i])

/** The raw model, frame by frame, without trimming. */
const rawModel = (x: Float32Array) => {
  const module = rnnoiseModule()
  const state = module._rnnoise_create(0)
  const buffer = module._malloc(FRAME_SIZE * 4)
  const y = new Float32Array(x.length)
  for (let f = 0; f + FRAME_SIZE <= x.length; f += FRAME_SIZE) {
    const heap = module.HEAPF32.subarray(buffer >> 2, (buffer >> 2) + FRAME_SIZE)
    for (let i = 0; i < FRAME_SIZE; i++) heap[i] = x[f + i]! * 32768
    module._rnnoise_process_frame(state, buffer, buffer)
    for (let i = 0; i < FRAME_SIZE; i++) y[f + i] = heap[i]! / 32768
  }
  module._rnnoise_destroy(state)
  module._free(buffer)
  return y
}

describe("RNNoise engine", () => {
  it("the newer weights delay their output by 960 samples; the Denoiser's output is aligned", () => {
    // Over the speech of the first two periods; the peak sits a sample before the frame
    // boundary (the filter's phase), the structural delay is two frames.
    const raw = bestLag(mono, rawModel(mono), 1500, 2.2, 4.8)
    expect(Math.abs(raw - MODEL_DELAY)).toBeLessThanOrEqual(2)
    expect(Math.abs(bestLag(mono, denoiseAll(mono, 1), 200, 2.2, 4.8))).toBeLessThanOrEqual(2)
  })

  it("works in the 16-bit range: noise-only stretches lose more than 30 dB, speech keeps its level", () => {
    const y = denoiseAll(mono, 1)
    for (const [a, b] of [[0.3, 1.7], [5.3, 6.7], [10.3, 11.7]] as const) {
      expect(levelDb(mono, a, b) - levelDb(y, a, b)).toBeGreaterThan(30)
    }
    for (const [a, b] of [[2.3, 4.7], [7.3, 9.7]] as const) {
      expect(Math.abs(levelDb(mono, a, b) - levelDb(y, a, b))).toBeLessThan(2)
    }
  })

  it("answers exactly as many samples as it is given, however the input is split", () => {
    for (const length of [0, 1, 479, 480, 959, 960, 961, 1439, 1440, 1441, 4800, 48_017]) {
      for (const pieces of [1, 2, 7]) {
        const x = mono.subarray(0, length * 2) // read as stereo
        expect(denoiseAll(x, 2, pieces).length).toBe(length * 2)
      }
    }
    // and the split does not change the result
    const x = mono.subarray(0, 5 * RATE)
    expect(sameSamples(denoiseAll(x, 1, 13), denoiseAll(x, 1, 1))).toBe(true)
  })

  it("denoises every channel on its own: stereo = two mono passes, interleaved", () => {
    const n = 5 * RATE
    const stereo = new Float32Array(n * 2)
    for (let i = 0; i < n; i++) (stereo[2 * i] = mono[i]!, stereo[2 * i + 1] = right[i]!)
    const both = denoiseAll(stereo, 2, 5)
    expect(sameSamples(both.filter((_, i) => i % 2 === 0), denoiseAll(mono.subarray(0, n), 1))).toBe(true)
    expect(sameSamples(both.filter((_, i) => i % 2 === 1), denoiseAll(right.subarray(0, n), 1))).toBe(true)
  })

  it("chunks with 1 s of warm-up and a look-ahead join without audible seams", () => {
    const single = denoiseAll(mono, 1)
    const body = 3 * RATE
    const cutter = new ChunkCutter(1, body, RATE, MODEL_DELAY + FRAME_SIZE)
    const tasks = [...cutter.push(mono.subarray(0, 100_000)), ...cutter.push(mono.subarray(100_000)), ...cutter.end()]
    expect(tasks.map((t) => t.take)).toEqual([body, body, body, body])
    const chunked = new Float32Array(mono.length)
    let at = 0
    for (const t of tasks) {
      const out = denoiseChunk(t.pcm, 1, t.skip, t.take)
      chunked.set(out, at)
      at += out.length
    }
    expect(at).toBe(mono.length)
    let maxJump = 0
    for (let i = 1; i < single.length; i++) maxJump = Math.max(maxJump, Math.abs(single[i]! - single[i - 1]!))
    for (const seam of [body, 2 * body, 3 * body]) {
      // the half second after a seam differs from a single pass by far less than the speech level (−18 dBFS)
      const diff = new Float32Array(RATE / 2).map((_, i) => chunked[seam + i]! - single[seam + i]!)
      expect(levelDb(diff, 0, 0.5)).toBeLessThan(-45)
      expect(Math.abs(chunked[seam]! - chunked[seam - 1]!)).toBeLessThanOrEqual(maxJump)
    }
  })

  it("removes mains hum, which the model alone leaves, before the model (strength 1 and the default)", () => {
    // the fixture plus 50 Hz hum and harmonics, 6 dB over its pink noise
    const hummed = mono.map((v, i) => {
      const t = i / RATE
      return v + 0.02 * (Math.sin(2 * Math.PI * 50 * t) + 0.5 * Math.sin(2 * Math.PI * 100 * t + 1) + 0.4 * Math.sin(2 * Math.PI * 150 * t + 2))
    })
    for (const strength of [1, null]) {
      const y = denoiseAll(hummed, 1, 3, strength)
      for (const [a, b] of [[0.3, 1.7], [5.3, 6.7], [10.3, 11.7]] as const) {
        expect(levelDb(hummed, a, b) - levelDb(y, a, b)).toBeGreaterThan(30)
      }
      for (const [a, b] of [[2.3, 4.7], [7.3, 9.7]] as const) {
        expect(Math.abs(levelDb(mono, a, b) - levelDb(y, a, b))).toBeLessThan(2)
      }
    }
  })

  it("strength 0 gives back the input sample for sample: no hum stage, no model", () => {
    const hummed = mono.map((v, i) => v + 0.02 * Math.sin((2 * Math.PI * 50 * i) / RATE) + 0.01 * Math.sin((2 * Math.PI * 150 * i) / RATE))
    expect(sameSamples(denoiseAll(hummed, 1, 3, 0), hummed)).toBe(true)
  })
})

describe("PCM helpers", () => {
  it("ChunkCutter: chunks cover the input exactly once, each with the audio before and after it", () => {
    for (const [length, body, warmup, lookahead] of [[10_000, 960, 480, 960], [961, 960, 960, 960], [5, 960, 480, 960], [0, 480, 0, 480]]) {
      for (const channels of [1, 2]) {
        const pcm = new Float32Array(length * channels).map((_, i) => i)
        const cutter = new ChunkCutter(channels, body, warmup, lookahead)
        const tasks = [...cutter.push(pcm.subarray(0, 3 * channels)), ...cutter.push(pcm.subarray(3 * channels)), ...cutter.end()]
        let start = 0 // sample frame where the next chunk's body starts
        for (const task of tasks) {
          const first = start - task.skip // the chunk begins with its warm-up
          expect(task.skip).toBe(start === 0 ? 0 : warmup)
          expect(task.pcm[0]).toBe(first * channels)
          const frames = task.pcm.length / channels
          expect(frames).toBe(Math.min(length, start + task.take + lookahead) - first)
          expect(task.pcm.every((v, i) => v === first * channels + i)).toBe(true)
          start += task.take
        }
        expect(start).toBe(length)
      }
    }
  })

  it("FloatFrames reassembles float samples split anywhere, whole frames only", () => {
    const samples = new Float32Array([0.5, -0.25, 1, -1, 0.125, 0.75])
    const bytes = new Uint8Array(samples.buffer)
    const frames = new FloatFrames(2)
    const got: Array<number> = []
    for (const [a, b] of [[0, 3], [3, 9], [9, 10], [10, 24]]) got.push(...frames.push(bytes.subarray(a, b)))
    expect(got).toEqual([...samples])
    expect(frames.samples).toBe(3)
    expect(frames.leftover).toBe(0)
    // aligned whole frames come through as a view; a partial frame waits for the rest
    const again = new FloatFrames(2)
    expect([...again.push(bytes.subarray(0, 20))]).toEqual([0.5, -0.25, 1, -1])
    expect(again.leftover).toBe(4)
    expect([...again.push(bytes.subarray(20))]).toEqual([0.125, 0.75])
  })
})

/**
 * GTCRN called as `@sapphi-red/web-noise-suppressor`'s worklet calls it, without gtcrn.mjs: its
 * own WebAssembly instance, `_gtcrn_process_48k` (export `j`) on 768-sample blocks in −1…1.
 * The output is as the model gives it: late by the model's delay.
 */
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
// (WebAssembly has no types under this project's `lib`: the little used here)
const Wasm = (globalThis as unknown as {
  WebAssembly: {
    Module: new(bytes: Uint8Array) => object
    Instance: new(module: object, imports: object) => { exports: Record<string, (...args: Array<number>) => number> & { c: WasmMemory } }
  }
}).WebAssembly

const rawGtcrn = (x: Float32Array) => {
  const bytes = readFileSync(createRequire(import.meta.url).resolve("@sapphi-red/web-noise-suppressor/gtcrn.wasm"))
  let memory: WasmMemory | undefined
  const grow = (size: number) => {
    memory!.grow(Math.ceil((size - memory!.buffer.byteLength) / 65536))
    return 1
  }
  const exports = new Wasm.Instance(new Wasm.Module(bytes), { a: { a: () => { throw new Error("GTCRN assertion") }, b: grow } }).exports
  memory = exports.c
  exports.d()
  const state = exports.e()
  const input = exports.k(768 * 4)
  const output = exports.k(768 * 4)
  const y = new Float32Array(x.length)
  for (let at = 0; at + 768 <= x.length; at += 768) {
    new Float32Array(memory.buffer).set(x.subarray(at, at + 768), input >> 2)
    exports.j(state, input, output)
    y.set(new Float32Array(memory.buffer).subarray(output >> 2, (output >> 2) + 768), at)
  }
  exports.g(state)
  return y
}

describe("GTCRN in the engine", () => {
  it("is the model itself, moved back by its 890-sample delay: sample for sample, however the input is split", () => {
    // What the bench measures of GTCRN through Hush's pipeline is then what the model does
    // (bench/quality: the same ΔSI-SDR to 0.01 dB as the model run alone, docs/denoise-quality.md).
    const raw = rawGtcrn(mono)
    expect(bestLag(mono, raw, 1500, 2.2, 4.8)).toBe(890)
    for (const pieces of [1, 13]) {
      const y = denoiseAll(mono, 1, pieces, 1, "gtcrn")
      expect(y.length).toBe(mono.length)
      let worst = 0
      // up to the model's last whole block (the raw run leaves the tail unprocessed)
      const end = Math.floor(mono.length / 768) * 768 - 890
      for (let i = 0; i < end; i++) worst = Math.max(worst, Math.abs(y[i]! - raw[i + 890]!))
      // a sample's misalignment, a dropped or repeated sample or a wrong scale would be ~1e-2
      expect(worst).toBeLessThan(1e-5)
    }
  })

  it("removes the noise where nobody speaks and keeps the speech's level (strength 1 and the default)", () => {
    for (const strength of [1, null]) {
      const y = denoiseAll(mono, 1, 3, strength, "gtcrn")
      for (const [a, b] of [[0.3, 1.7], [5.3, 6.7], [10.3, 11.7]] as const) {
        expect(levelDb(mono, a, b) - levelDb(y, a, b)).toBeGreaterThan(8)
      }
      for (const [a, b] of [[2.3, 4.7], [7.3, 9.7]] as const) {
        expect(Math.abs(levelDb(mono, a, b) - levelDb(y, a, b))).toBeLessThan(1)
      }
    }
  })
})
