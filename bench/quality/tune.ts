/**
 * Tuning the adaptive default (adapters/rnnoise/mix.mjs) quickly: RNNoise runs once per case
 * (in this thread, no encoder), its frames are recorded, and each candidate setting of the
 * mixer is replayed over them. Scores are against the noisy input (no MP3 in between), so
 * they differ slightly from bench/quality/main.ts, which runs the real pipeline.
 *
 *   npx tsx bench/quality/tune.ts [corpus dir]
 */
import { readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Denoiser } from "../../adapters/rnnoise/engine.mjs"
import { ADAPTIVE_DEFAULTS, AdaptiveMix, type AdaptiveParams } from "../../adapters/rnnoise/mix.mjs"
import { buildCorpus, type Case, SNRS, STATIONARY } from "./corpus.js"
import { score, silentMask, type Scores } from "./score.js"

const SCALE = 32768
const FRAME = 480

interface Recorded {
  readonly c: Case
  readonly dry: Array<Float32Array>
  readonly wet: Array<Float32Array>
  readonly vad: Array<number>
  readonly mask: Uint8Array
}

/** Recordings are cached next to the corpus (RNNoise's output does not depend on the mixer's settings). */
const cached = async (c: Case): Promise<Recorded> => {
  const file = c.path.replace(/\.wav$/, ".frames")
  const bytes = await readFile(file).catch(() => undefined)
  if (bytes !== undefined) {
    const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))
    const frames = all.length / (2 * FRAME + 1)
    const dry: Array<Float32Array> = []
    const wet: Array<Float32Array> = []
    const vad: Array<number> = []
    for (let f = 0; f < frames; f++) {
      const at = f * (2 * FRAME + 1)
      dry.push(all.slice(at, at + FRAME))
      wet.push(all.slice(at + FRAME, at + 2 * FRAME))
      vad.push(all[at + 2 * FRAME]!)
    }
    return { c, dry, wet, vad, mask: silentMask(c.clean) }
  }
  const r = record(c)
  const all = new Float32Array(r.vad.length * (2 * FRAME + 1))
  for (let f = 0; f < r.vad.length; f++) {
    const at = f * (2 * FRAME + 1)
    all.set(r.dry[f]!, at)
    all.set(r.wet[f]!, at + FRAME)
    all[at + 2 * FRAME] = r.vad[f]!
  }
  await writeFile(file, new Uint8Array(all.buffer))
  return r
}

const record = (c: Case): Recorded => {
  const dry: Array<Float32Array> = []
  const wet: Array<Float32Array> = []
  const vad: Array<number> = []
  const denoiser = new Denoiser(1, null, {}, (_channel, d, w, v, stage) => {
    if (stage !== "before") return
    dry.push(d.slice())
    wet.push(w.slice())
    vad.push(v)
  })
  denoiser.push(c.noisy)
  denoiser.end()
  denoiser.close()
  return { c, dry, wet, vad, mask: silentMask(c.clean) }
}

const replay = (r: Recorded, params: Partial<AdaptiveParams> | "full"): Scores => {
  const out = new Float32Array(r.c.noisy.length)
  const mix = params === "full" ? undefined : new AdaptiveMix(params)
  let at = 0
  for (let f = 0; f < r.wet.length && at < out.length; f++) {
    const frame = r.wet[f]!.slice()
    mix?.process(r.dry[f]!, frame, r.vad[f]!)
    for (let i = 0; i < frame.length && at < out.length; i++, at++) out[at] = Math.max(-1, Math.min(1, frame[i]! / SCALE))
  }
  return score(r.c.clean, r.c.noisy, out, r.mask)
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

const summary = (recorded: ReadonlyArray<Recorded>, params: Partial<AdaptiveParams> | "full") => {
  const rows = recorded.map((r) => ({ r, s: replay(r, params) }))
  const bySnr = SNRS.map((snr) => {
    const at = rows.filter((x) => x.r.c.snr === snr)
    return `${snr}dB Δ${mean(at.map((x) => x.s.siSdrOut - x.s.siSdrIn)).toFixed(2)} fl${mean(at.filter((x) => STATIONARY.includes(x.r.c.noise)).map((x) => x.s.floorReductionDb)).toFixed(1)} lv${mean(at.map((x) => x.s.speechLevelDb)).toFixed(2)}`
  })
  const noises = [...new Set(recorded.map((r) => r.c.noise))]
  const at20 = noises.map((n) => `${n}:${mean(rows.filter((x) => x.r.c.snr === 20 && x.r.c.noise === n).map((x) => x.s.siSdrOut - x.s.siSdrIn)).toFixed(2)}`)
  const low = mean(rows.filter((x) => x.r.c.snr <= 10).map((x) => x.s.siSdrOut - x.s.siSdrIn))
  const minFloor = Math.min(...rows.filter((x) => STATIONARY.includes(x.r.c.noise)).map((x) => x.s.floorReductionDb))
  const floors = STATIONARY.filter((n) => noises.includes(n)).map((n) => {
    const f = rows.filter((x) => x.r.c.noise === n).map((x) => x.s.floorReductionDb)
    return `${n}:${mean(f).toFixed(1)}(min ${Math.min(...f).toFixed(1)})`
  })
  const level = mean(rows.map((x) => x.s.speechLevelDb))
  console.log(`${JSON.stringify(params)}\n  ${bySnr.join(" | ")}\n  0–10 dB Δ${low.toFixed(2)}  level ${level.toFixed(2)}  min stationary floor ${minFloor.toFixed(1)}  at 20 dB ${at20.join(" ")}\n  floors ${floors.join(" ")}`)
}

const dir = process.argv[2] ?? join(tmpdir(), "hush-quality-corpus")
const cases = await buildCorpus(dir, { voices: process.env.TUNE_VOICES === undefined ? undefined : Number(process.env.TUNE_VOICES) })
const t0 = Date.now()
const recorded: Array<Recorded> = []
for (const c of cases) recorded.push(await cached(c))
console.log(`${cases.length} cases recorded in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
summary(recorded, "full")
summary(recorded, ADAPTIVE_DEFAULTS)
const grid: Array<Partial<AdaptiveParams>> = JSON.parse(process.env.TUNE_GRID ?? "[]")
for (const params of grid) summary(recorded, params)
