/**
 * Noisy "speech" made by ffmpeg alone (no files committed): every 5 seconds, 2 s of pink
 * noise only, then 3 s of a voiced, syllable-like signal (a gliding 150 Hz harmonic tone,
 * amplitude-modulated at 4 Hz) over the same noise, about 23 dB above it. RNNoise keeps it
 * as it keeps speech (level within 1 dB) and removes the noise-only stretches.
 */
import { execFile, spawn } from "node:child_process"
import { promisify } from "node:util"

const run = promisify(execFile)
const QUIET = ["-hide_banner", "-nostats", "-loglevel", "error", "-nostdin", "-y"]

export const RATE = 48_000
export const PERIOD_SECONDS = 5
/** Within each period: noise only before this second, speech over noise after it. */
export const SPEECH_FROM = 2

/** Where speech is and where only noise is, within `seconds`, trimmed by `margin` at the edges. */
export const spans = (seconds: number, margin = 0.3) => {
  const speech: Array<readonly [number, number]> = []
  const noise: Array<readonly [number, number]> = []
  for (let t = 0; t < seconds; t += PERIOD_SECONDS) {
    noise.push([t + margin, Math.min(seconds, t + SPEECH_FROM) - margin])
    if (t + SPEECH_FROM < seconds) speech.push([t + SPEECH_FROM + margin, Math.min(seconds, t + PERIOD_SECONDS) - margin])
  }
  return { speech: speech.filter(([a, b]) => b > a), noise: noise.filter(([a, b]) => b > a) }
}

/** A voiced tone at `f0` Hz (with a slow glide), in syllables, during the speech part of each period. */
const voice = (f0: number) => {
  const phase = `(${f0}*t+${f0 / 5}*(1-cos(PI*t))/PI)`
  const harmonics = Array.from({ length: 8 }, (_, i) => `sin(${2 * (i + 1)}*PI*${phase})/${i + 1}`).join("+")
  return `0.25*gte(mod(t,${PERIOD_SECONDS}),${SPEECH_FROM})*pow(sin(4*PI*t),2)*(${harmonics})`
}

export interface NoisySpeechOptions {
  readonly seconds: number
  readonly channels?: 1 | 2
  /** Pink-noise amplitude; 0.05 is about −40 dBFS RMS. */
  readonly noise?: number
  /** Container and codec of the file, by ffmpeg arguments; default 16-bit WAV. */
  readonly codec?: ReadonlyArray<string>
}

/**
 * ffmpeg arguments that write the fixture to `path`. Stereo: the right channel has its own
 * voice (110 Hz) and noise, so that a swap or a mix of channels shows.
 */
export const noisySpeechArgs = (path: string, options: NoisySpeechOptions) => {
  const { seconds, channels = 1, noise = 0.05, codec = ["-c:a", "pcm_s16le", "-f", "wav"] } = options
  const source = (expr: string, seed: number) => [
    "-f", "lavfi", "-i", `aevalsrc=exprs='${expr}':s=${RATE}:d=${seconds}`,
    "-f", "lavfi", "-i", `anoisesrc=color=pink:amplitude=${noise}:seed=${seed}:r=${RATE}:d=${seconds}`
  ]
  const graph = channels === 1
    ? "[0][1]amix=inputs=2:normalize=0[out]"
    : "[0][1]amix=inputs=2:normalize=0[l];[2][3]amix=inputs=2:normalize=0[r];[l][r]join=inputs=2:channel_layout=stereo[out]"
  return [
    ...QUIET,
    ...source(voice(150), 7),
    ...(channels === 2 ? source(voice(110), 11) : []),
    "-filter_complex", graph, "-map", "[out]", ...codec, path
  ]
}

export const makeNoisySpeech = async (path: string, options: NoisySpeechOptions) => {
  await run("ffmpeg", noisySpeechArgs(path, options))
}

/** Decodes any audio (a path or bytes) to interleaved float PCM at 48 kHz, keeping its channels. */
export const decodeToFloat = (input: string | Uint8Array): Promise<Float32Array> =>
  new Promise((resolve, reject) => {
    const child = spawn("ffmpeg", [...QUIET.filter((a) => a !== "-nostdin"), "-i", typeof input === "string" ? input : "pipe:0",
      "-f", "f32le", "-ar", String(RATE), "pipe:1"])
    const chunks: Array<Buffer> = []
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => chunks.push(c))
    child.stderr.on("data", (c: Buffer) => { stderr += c.toString() })
    child.on("error", reject)
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`ffmpeg decode failed: ${stderr}`))
      const all = Buffer.concat(chunks)
      resolve(new Float32Array(all.buffer.slice(all.byteOffset, all.byteOffset + all.length)))
    })
    child.stdin.on("error", () => {})
    if (typeof input === "string") child.stdin.end()
    else child.stdin.end(input)
  })

/** Integrated loudness (LUFS) and true peak (dBTP) as ffmpeg's ebur128 reads them: an independent meter. */
export const loudnessOf = async (file: string) => {
  const { stderr } = await run("ffmpeg", ["-hide_banner", "-nostats", "-nostdin", "-i", file, "-af", "ebur128=peak=true", "-f", "null", "-"],
    { maxBuffer: 64 * 1024 * 1024 })
  const summary = stderr.slice(stderr.lastIndexOf("Summary:"))
  return {
    integrated: Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)?.[1]),
    truePeak: Number(/True peak:\s+Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary)?.[1])
  }
}

export interface ProbedAudio {
  readonly codec: string
  readonly channels: number
  readonly sampleRate: number
}

export const probeAudio = async (path: string): Promise<ProbedAudio> => {
  const { stdout } = await run("ffprobe", ["-v", "error", "-select_streams", "a:0",
    "-show_entries", "stream=codec_name,channels,sample_rate", "-of", "json", path])
  const stream = JSON.parse(stdout).streams[0]
  return { codec: stream.codec_name, channels: stream.channels, sampleRate: Number(stream.sample_rate) }
}

/** One channel of interleaved PCM. */
export const channel = (pcm: Float32Array, channels: number, index: number) => {
  const out = new Float32Array(Math.floor(pcm.length / channels))
  for (let i = 0; i < out.length; i++) out[i] = pcm[i * channels + index]!
  return out
}

/** RMS level in dBFS of a mono signal over [from, to) seconds. */
export const levelDb = (x: Float32Array, from: number, to: number) => {
  const a = Math.floor(from * RATE)
  const b = Math.min(x.length, Math.floor(to * RATE))
  let sum = 0
  for (let i = a; i < b; i++) sum += x[i]! * x[i]!
  return 10 * Math.log10(sum / Math.max(1, b - a) + 1e-30)
}

/** The lag (in samples, −maxLag…maxLag) at which `y` best matches `x`, over [from, to) seconds of x. */
export const bestLag = (x: Float32Array, y: Float32Array, maxLag: number, from: number, to: number) => {
  const a = Math.max(maxLag, Math.floor(from * RATE))
  const b = Math.min(Math.floor(to * RATE), x.length, y.length - maxLag)
  let best = 0
  let bestScore = -Infinity
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let score = 0
    for (let i = a; i < b; i++) score += x[i]! * y[i + lag]!
    if (score > bestScore) {
      bestScore = score
      best = lag
    }
  }
  return best
}
