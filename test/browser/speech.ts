/**
 * Real noisy speech for the browser tests: espeak-ng reads two Harvard sentences, ffmpeg puts a
 * second of silence before them and mixes pink noise under everything (speech ~16 dB above
 * it), so the first second is noise alone: where a denoised output must be much quieter. And
 * ffmpeg's own reading of a file: how long it decodes to, and how loud a stretch of it is.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The noise-only lead-in of the fixture, in seconds. */
export const NOISE_LEAD_SECONDS = 1

const scratch: Array<string> = []

/** A folder of its own for a test's files; `removeScratch` (in the file's afterAll) removes them all. */
export const scratchDir = (label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `hush-browser-${label}-`))
  scratch.push(dir)
  return dir
}

export const removeScratch = () => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export const noisySpeech = (name = "noisy speech.wav"): string => {
  const dir = scratchDir("speech")
  const speech = join(dir, "speech.wav")
  const noisy = join(dir, name)
  execFileSync("espeak-ng", ["-v", "en-us", "-s", "150", "-w", speech,
    "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background."])
  execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", speech,
    "-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.06:seed=3:sample_rate=22050",
    "-filter_complex", `[0]adelay=${NOISE_LEAD_SECONDS * 1000},apad=pad_dur=0.5[s];[s][1]amix=inputs=2:normalize=0:duration=first`,
    "-ac", "1", "-c:a", "pcm_s16le", noisy])
  return noisy
}

const RATE = 48_000

/** Every sample ffmpeg decodes from `path`, mixed to mono at 48 kHz (a file that does not decode throws). */
export const decode = (path: string): Float32Array => {
  const pcm = execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-ac", "1", "-ar", String(RATE), "-f", "f32le", "pipe:1"],
    { maxBuffer: 256 * 1024 * 1024 })
  return new Float32Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.byteLength / 4))
}

export const secondsOf = (samples: Float32Array) => samples.length / RATE

/** The RMS level of samples[from s, to s), in dB of full scale. */
export const levelDb = (samples: Float32Array, from: number, to: number) => {
  const slice = samples.subarray(Math.round(from * RATE), Math.round(to * RATE))
  let sum = 0
  for (const x of slice) sum += x * x
  return 10 * Math.log10(sum / Math.max(1, slice.length) + 1e-20)
}
