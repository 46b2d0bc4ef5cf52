/**
 * The quality corpus, generated here (never committed): espeak-ng voices reading Harvard
 * sentences, with pauses, mixed with noises at fixed SNRs. Every random choice has a fixed
 * seed, so the same tools make the same corpus.
 *
 * Each case is 13 s at 48 kHz mono: 1.5 s of noise alone, then sentences separated by 0.8 s
 * pauses, then noise alone to the end. Noises: stationary (white, pink, brown, mains hum with
 * harmonics, fan) and non-stationary (babble of six other voices, keyboard-like clatter).
 * SNR is active speech power (the clean track where it speaks) over the noise's mean power.
 */
import { execFile } from "node:child_process"
import { mkdir, readFile, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

export const RATE = 48_000
export const SECONDS = 13
const LENGTH = RATE * SECONDS
const LEAD = 1.5
const GAP = 0.8
/** Clean speech is set to this active level (dBFS), a usual recording level. */
const SPEECH_LEVEL_DB = -26

export const VOICES = ["en-us+m3", "en-gb+f3", "en-us+f2", "en-gb-scotland+m1"] as const
export const NOISES = ["white", "pink", "brown", "hum", "fan", "babble", "clatter"] as const
export type Noise = (typeof NOISES)[number]
export const STATIONARY: ReadonlyArray<Noise> = ["white", "pink", "brown", "hum", "fan"]
export const SNRS = [0, 5, 10, 20] as const

/** Harvard sentences (IEEE 1969), lists 1–3: public domain. */
const SENTENCES = [
  "The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.",
  "It's easy to tell the depth of a well.", "These days a chicken leg is a rare dish.",
  "Rice is often served in round bowls.", "The juice of lemons makes fine punch.",
  "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
  "Four hours of steady work faced us.", "A large size in stockings is hard to sell.",
  "The boy was there when the sun rose.", "A rod is used to catch pink salmon.",
  "The source of the huge river is the clear spring.", "Kick the ball straight and follow through.",
  "Help the woman get back to her feet.", "A pot of tea helps to pass the evening.",
  "Smoky fires lack flame and heat.", "The soft cushion broke the man's fall.",
  "The salt breeze came across from the sea.", "The girl at the booth sold fifty bonds.",
  "The small pup gnawed a hole in the sock.", "The fish twisted and turned on the bent hook.",
  "Press the pants and sew a button on the vest.", "The swan dive was far short of perfect.",
  "The beauty of the view stunned the young boy.", "Two blue fish swam in the tank.",
  "Her purse was full of useless trash.", "The colt reared and threw the tall rider.",
  "It snowed, rained, and hailed the same morning.", "Read verse out loud for pleasure."
] as const

/** A small seeded PRNG (mulberry32). */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const f32 = (bytes: Buffer) => new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))

/** ffmpeg → mono f32 at 48 kHz, exactly `LENGTH` samples (padded with silence). */
const ffmpegPcm = async (args: ReadonlyArray<string>): Promise<Float32Array> => {
  const { stdout } = await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", ...args,
    "-ac", "1", "-ar", String(RATE), "-f", "f32le", "pipe:1"], { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 })
  const out = new Float32Array(LENGTH)
  const pcm = f32(stdout)
  out.set(pcm.subarray(0, LENGTH))
  return out
}

const speak = async (dir: string, voice: string, text: string, speed: number): Promise<Float32Array> => {
  const wav = join(dir, `tts-${voice}-${speed}-${text.length}-${text.slice(0, 12).replace(/\W/g, "")}.wav`)
  await run("espeak-ng", ["-v", voice, "-s", String(speed), "-w", wav, text])
  const { stdout } = await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", wav,
    "-ac", "1", "-ar", String(RATE), "-f", "f32le", "pipe:1"], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 })
  return f32(stdout)
}

export const activePower = (x: Float32Array) => {
  // 20 ms frames within 40 dB of the loudest frame count as active
  const frame = RATE / 50
  const powers: Array<number> = []
  for (let i = 0; i + frame <= x.length; i += frame) {
    let s = 0
    for (let j = i; j < i + frame; j++) s += x[j]! * x[j]!
    powers.push(s / frame)
  }
  const max = Math.max(...powers)
  const active = powers.filter((p) => p > max * 1e-4)
  return active.reduce((a, b) => a + b, 0) / Math.max(1, active.length)
}

const meanPower = (x: Float32Array) => {
  let s = 0
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!
  return s / x.length
}

const scale = (x: Float32Array, g: number) => {
  for (let i = 0; i < x.length; i++) x[i]! *= g
  return x
}

/** One voice's clean track: sentences with pauses, set to SPEECH_LEVEL_DB. */
const cleanTrack = async (dir: string, voiceIndex: number): Promise<Float32Array> => {
  const out = new Float32Array(LENGTH)
  let at = Math.round(LEAD * RATE)
  for (let k = 0; ; k++) {
    const sentence = SENTENCES[(voiceIndex * 5 + k) % SENTENCES.length]!
    const pcm = await speak(dir, VOICES[voiceIndex]!, sentence, 160)
    if (at + pcm.length > LENGTH - RATE) break
    out.set(pcm, at)
    at += pcm.length + Math.round(GAP * RATE)
  }
  return scale(out, Math.sqrt(10 ** (SPEECH_LEVEL_DB / 10) / activePower(out)))
}

const babble = async (dir: string): Promise<Float32Array> => {
  const out = new Float32Array(LENGTH)
  const talkers = ["en-us+m1", "en-gb+f1", "en-us+m5", "en-gb+f4", "en-029+m2", "en-us+f5"]
  for (const [t, voice] of talkers.entries()) {
    let at = Math.round((t * 0.37) * RATE) % RATE
    for (let k = 0; at < LENGTH; k++) {
      const pcm = await speak(dir, voice, SENTENCES[(t * 7 + k * 3 + 11) % SENTENCES.length]!, 170)
      const gain = 0.05 / Math.sqrt(activePower(pcm) * talkers.length)
      for (let i = 0; i < pcm.length && at + i < LENGTH; i++) out[at + i]! += pcm[i]! * gain
      at += pcm.length + Math.round(0.15 * RATE)
    }
  }
  // the talkers start staggered: the first second is filled from the end
  for (let i = 0; i < RATE; i++) out[i]! += out[LENGTH - RATE + i]!
  return out
}

/** Keyboard-like clatter: short decaying noise bursts at irregular intervals, over a faint room noise. */
const clatter = (seed: number): Float32Array => {
  const out = new Float32Array(LENGTH)
  const rnd = random(seed)
  for (let i = 0; i < LENGTH; i++) out[i] = (rnd() - 0.5) * 0.002
  for (let at = Math.round(0.05 * RATE); at < LENGTH; at += Math.round((0.06 + rnd() * 0.25) * RATE)) {
    const length = Math.round((0.004 + rnd() * 0.012) * RATE)
    const amplitude = 0.2 + rnd() * 0.8
    for (let i = 0; i < length && at + i < LENGTH; i++) out[at + i]! += amplitude * (rnd() * 2 - 1) * Math.exp(-i / (length / 4))
  }
  return out
}

const noiseTrack = async (dir: string, noise: Noise): Promise<Float32Array> => {
  const lavfi = (graph: string) => ffmpegPcm(["-f", "lavfi", "-i", graph, "-t", String(SECONDS)])
  switch (noise) {
    case "white":
    case "pink":
    case "brown":
      return lavfi(`anoisesrc=color=${noise}:amplitude=0.5:seed=${noise.length * 1009}:r=${RATE}:d=${SECONDS}`)
    case "hum":
      return lavfi(`aevalsrc=exprs='0.5*sin(2*PI*50*t)+0.25*sin(2*PI*100*t+1)+0.2*sin(2*PI*150*t+2)+0.1*sin(2*PI*250*t)+0.05*sin(2*PI*350*t)+0.01*(random(0)-0.5)':s=${RATE}:d=${SECONDS}`)
    case "fan":
      return ffmpegPcm(["-f", "lavfi", "-i",
        `anoisesrc=color=brown:amplitude=0.5:seed=77:r=${RATE}:d=${SECONDS},highpass=f=40,lowpass=f=3000[a];` +
        `anoisesrc=color=pink:amplitude=0.1:seed=78:r=${RATE}:d=${SECONDS}[b];` +
        `aevalsrc=exprs='0.03*sin(2*PI*180*t)*(1+0.2*sin(2*PI*0.7*t))':s=${RATE}:d=${SECONDS}[c];` +
        `[a][b][c]amix=inputs=3:normalize=0`, "-t", String(SECONDS)])
    case "babble":
      return babble(dir)
    case "clatter":
      return clatter(4242)
  }
}

export interface Case {
  readonly voice: string
  readonly noise: Noise
  readonly snr: number
  /** A 16-bit WAV of the noisy mixture: the model's input. */
  readonly path: string
  readonly clean: Float32Array
  readonly noisy: Float32Array
}

const writeWav16 = async (path: string, x: Float32Array) => {
  const data = Buffer.alloc(x.length * 2)
  for (let i = 0; i < x.length; i++) data.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(x[i]! * 32767))), i * 2)
  const header = Buffer.alloc(44)
  header.write("RIFF", 0); header.writeUInt32LE(36 + data.length, 4); header.write("WAVE", 8)
  header.write("fmt ", 12); header.writeUInt32LE(16, 16); header.writeUInt16LE(1, 20); header.writeUInt16LE(1, 22)
  header.writeUInt32LE(RATE, 24); header.writeUInt32LE(RATE * 2, 28); header.writeUInt16LE(2, 32); header.writeUInt16LE(16, 34)
  header.write("data", 36); header.writeUInt32LE(data.length, 40)
  await writeFile(path, Buffer.concat([header, data]))
}

const readWav16 = async (path: string) => {
  const bytes = await readFile(path)
  const out = new Float32Array((bytes.length - 44) / 2)
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(44 + i * 2) / 32767
  return out
}

/** Builds (or reuses, from `dir`) every case: voices × noises × SNRs, optionally a subset. */
export const buildCorpus = async (dir: string, subset?: { voices?: number; noises?: ReadonlyArray<Noise>; snrs?: ReadonlyArray<number> }) => {
  await mkdir(dir, { recursive: true })
  const voices = VOICES.slice(0, subset?.voices ?? VOICES.length)
  const noises = subset?.noises ?? NOISES
  const snrs = subset?.snrs ?? SNRS
  const cleans = await Promise.all(voices.map((_, i) => cleanTrack(dir, i)))
  const noiseTracks = new Map<Noise, Float32Array>()
  for (const noise of noises) noiseTracks.set(noise, await noiseTrack(dir, noise))
  const cases: Array<Case> = []
  for (const [v, voice] of voices.entries()) {
    const clean = cleans[v]!
    const speech = activePower(clean)
    for (const noise of noises) {
      const n = noiseTracks.get(noise)!
      for (const snr of snrs) {
        const path = join(dir, `${voice}-${noise}-${snr}.wav`)
        const g = Math.sqrt(speech / (meanPower(n) * 10 ** (snr / 10)))
        const noisy = new Float32Array(LENGTH)
        for (let i = 0; i < LENGTH; i++) noisy[i] = clean[i]! + g * n[i]!
        let peak = 0
        for (let i = 0; i < LENGTH; i++) peak = Math.max(peak, Math.abs(noisy[i]!))
        // a peaky noise (clatter at 0 dB) would clip: the mixture and its reference go down together
        const fit = peak > 0.99 ? 0.99 / peak : 1
        const exists = await stat(path).then(() => true, () => false)
        if (!exists) await writeWav16(path, fit === 1 ? noisy : scale(noisy, fit))
        const reference = fit === 1 ? clean : scale(clean.slice(), fit)
        cases.push({ voice, noise, snr, path, clean: reference, noisy: await readWav16(path) })
      }
    }
  }
  return cases
}
