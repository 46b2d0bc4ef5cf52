/**
 * The WAVs the pipeline reads itself (adapters/rnnoise/wav-input.ts) give, bit for bit, what
 * its decoding ffmpeg gives (the same arguments, `decodeArgs`), and the pipeline then starts no
 * ffmpeg for an MP3 output (encoded in this process, mp3.ts) instead of two. Needs ffmpeg on PATH.
 */
import { spawn } from "node:child_process"
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { SAMPLE_RATE } from "../../../adapters/rnnoise/engine.mjs"
import { parseWavHeader } from "../../../adapters/rnnoise/pcm.js"
import { decodeArgs, denoiseToOutput } from "../../../adapters/rnnoise/pipeline.js"
import { BITSTREAM_WINDOW, sniffPlainWav, WavSamples } from "../../../adapters/rnnoise/wav-input.js"
import { makeNoisySpeech } from "../../support/audio-fixtures.js"

let dir = ""
const path = (name: string) => join(dir, name)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-wav-input-"))
  const codecs: ReadonlyArray<readonly [string, 1 | 2, ReadonlyArray<string>]> = [
    ["s16-mono.wav", 1, ["-c:a", "pcm_s16le", "-f", "wav"]],
    ["s16-stereo.wav", 2, ["-c:a", "pcm_s16le", "-f", "wav"]],
    ["s24-stereo.wav", 2, ["-c:a", "pcm_s24le", "-f", "wav"]],
    ["s32-mono.wav", 1, ["-c:a", "pcm_s32le", "-f", "wav"]],
    ["f32-stereo.wav", 2, ["-c:a", "pcm_f32le", "-f", "wav"]],
    ["s16-mono.mp3", 1, ["-c:a", "libmp3lame", "-f", "mp3"]]
  ]
  // loud enough that s32 samples need rounding to a float
  await Promise.all(codecs.map(([name, channels, codec]) => makeNoisySpeech(path(name), { seconds: 4, channels, noise: 0.3, codec })))
}, 60_000)

afterAll(() => rm(dir, { recursive: true, force: true }))

/** The pipeline's decoding ffmpeg on `bytes`: its float samples, as bytes. */
const ffmpegDecode = (bytes: Uint8Array, maxSeconds?: number) =>
  new Promise<Uint8Array>((resolve, reject) => {
    const child = spawn("ffmpeg", decodeArgs("pipe:0", maxSeconds))
    const chunks: Array<Buffer> = []
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => chunks.push(c))
    child.stderr.on("data", (c: Buffer) => { stderr += c.toString() })
    child.stdin.on("error", () => {})
    child.on("error", reject)
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`ffmpeg: ${stderr}`))
      const all = new Uint8Array(Buffer.concat(chunks))
      const format = parseWavHeader(all)
      if (format === "more") return reject(new Error("no WAV header"))
      resolve(all.subarray(format.dataOffset))
    })
    child.stdin.end(bytes)
  })

/** WavSamples on `bytes`, pushed in pieces of odd sizes (as a store's reads may come). */
const readHere = (bytes: Uint8Array, maxSeconds?: number) => {
  const format = sniffPlainWav(bytes, SAMPLE_RATE, true)
  if (format === undefined || format === "more") throw new Error(`not read here: ${format}`)
  const wav = new WavSamples(format, maxSeconds === undefined ? Infinity : Math.round(Number(maxSeconds.toFixed(3)) * SAMPLE_RATE))
  const parts: Array<Buffer> = []
  for (let at = 0, piece = 1; at < bytes.length && !wav.done; at += piece, piece = (piece * 7 + 3) % 9_973 + 1) {
    const samples = wav.push(bytes.subarray(at, at + piece))
    parts.push(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength))
  }
  return { format, bytes: new Uint8Array(Buffer.concat(parts)) }
}

const expectSame = (here: Uint8Array, ffmpeg: Uint8Array) => {
  expect(here.length).toBe(ffmpeg.length)
  expect(Buffer.compare(here, ffmpeg)).toBe(0)
}

// --- hand-made files -------------------------------------------------------------------------

const chunk = (id: string, body: Uint8Array, declared = body.length) => {
  const out = new Uint8Array(8 + body.length + (body.length & 1))
  out.set(new TextEncoder().encode(id))
  new DataView(out.buffer).setUint32(4, declared, true)
  out.set(body, 8)
  return out
}
const concat = (...parts: Array<Uint8Array>) => new Uint8Array(Buffer.concat(parts))

/** A WAVE_FORMAT_EXTENSIBLE `fmt ` of 32-bit float (sub-format 3) or 16-bit PCM (1). */
const extensibleFmt = (channels: number, mask: number, subFormat: 1 | 3, bits: 16 | 32) => {
  const body = new Uint8Array(40)
  const view = new DataView(body.buffer)
  view.setUint16(0, 0xfffe, true)
  view.setUint16(2, channels, true)
  view.setUint32(4, SAMPLE_RATE, true)
  view.setUint32(8, SAMPLE_RATE * channels * (bits / 8), true)
  view.setUint16(12, channels * (bits / 8), true)
  view.setUint16(14, bits, true)
  view.setUint16(16, 22, true)
  view.setUint16(18, bits, true)
  view.setUint32(20, mask, true)
  view.setUint16(24, subFormat, true)
  body.set([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71], 26)
  return chunk("fmt ", body)
}

/** Whole bytes of audio taken from a fixture's data (after its header). */
const samplesOf = async (name: string, bytes: number, from = 0) => {
  const file = new Uint8Array(await readFile(path(name)))
  const format = parseWavHeader(file)
  if (format === "more") throw new Error("no header")
  return file.slice(format.dataOffset + from, format.dataOffset + from + bytes)
}

const riff = (...chunks: Array<Uint8Array>) => {
  const body = concat(new TextEncoder().encode("WAVE"), ...chunks)
  return concat(chunk("RIFF", body))
}

describe("WAV inputs read without ffmpeg", () => {
  for (const name of ["s16-mono.wav", "s16-stereo.wav", "s24-stereo.wav", "s32-mono.wav", "f32-stereo.wav"]) {
    it.live(`${name}: the same samples as the decoding ffmpeg, bit for bit`, () =>
      Effect.promise(async () => {
        const bytes = new Uint8Array(await readFile(path(name)))
        const here = readHere(bytes)
        expect(here.format.encoding).toBe(name.slice(0, 3))
        const ffmpeg = await ffmpegDecode(bytes)
        expect(ffmpeg.length).toBe(4 * SAMPLE_RATE * here.format.channels * 4)
        expectSame(here.bytes, ffmpeg)
      }))
  }

  it.live("with -t (maxInputSeconds): the same number of samples, to the millisecond", () =>
    Effect.promise(async () => {
      const bytes = new Uint8Array(await readFile(path("s16-stereo.wav")))
      for (const seconds of [3, 1.0004, 2.0006, 0.0001]) {
        const ffmpeg = await ffmpegDecode(bytes, seconds)
        expectSame(readHere(bytes, seconds).bytes, ffmpeg)
      }
    }))

  it.live("chunks as ffmpeg walks them: odd-sized chunks before and after the data, a partial frame, a second data chunk, an extensible format", () =>
    Effect.promise(async () => {
      // 6 bytes of a partial frame: the next chunk header follows at an even offset and the
      // second data chunk is read; 5 (odd, then a pad byte): ffmpeg reads the next header at
      // the odd offset, finds no "data" there and stops, and so does the reader here
      for (const [partial, frames] of [[6, 1700], [5, 1000]] as const) {
        const a = await samplesOf("f32-stereo.wav", 8 * 1000 + partial)
        const b = await samplesOf("f32-stereo.wav", 8 * 700, 8 * 5000)
        const file = riff(
          chunk("junk", new Uint8Array(13).fill(7)),
          extensibleFmt(2, 0x3, 3, 32),
          chunk("fact", new Uint8Array(4)),
          chunk("data", a),
          chunk("LIST", new Uint8Array(9).fill(1)),
          chunk("data", b)
        )
        const here = readHere(file)
        expectSame(here.bytes, await ffmpegDecode(file))
        expect(here.bytes.length).toBe(8 * frames)
      }
    }))

  it.live("a data size of 0 (a streamed WAV) reads to the end, as ffmpeg does", () =>
    Effect.promise(async () => {
      // 16-bit stereo: 30,000 frames and half of one more, dropped
      const pcm = await samplesOf("s16-stereo.wav", 4 * 30_000 + 2)
      const fmt = new Uint8Array(16)
      const view = new DataView(fmt.buffer)
      view.setUint16(0, 1, true)
      view.setUint16(2, 2, true)
      view.setUint32(4, SAMPLE_RATE, true)
      view.setUint32(8, SAMPLE_RATE * 4, true)
      view.setUint16(12, 4, true)
      view.setUint16(14, 16, true)
      const file = riff(chunk("fmt ", fmt), chunk("data", pcm, 0))
      const here = readHere(file)
      expect(here.bytes.length).toBe(8 * 30_000)
      expectSame(here.bytes, await ffmpegDecode(file))
    }))

  it.live("left to ffmpeg: another rate, more channels, another codec, an unusual layout, an S/PDIF or DTS sync word", () =>
    Effect.promise(async () => {
      const mono = new Uint8Array(await readFile(path("s16-mono.wav")))
      expect(sniffPlainWav(mono, SAMPLE_RATE, true)).toMatchObject({ channels: 1, encoding: "s16" })
      expect(sniffPlainWav(mono, 44_100, true)).toBeUndefined()
      expect(sniffPlainWav(new Uint8Array(await readFile(path("s16-mono.mp3"))), SAMPLE_RATE, true)).toBeUndefined()
      const pcm = await samplesOf("f32-stereo.wav", 8 * 100)
      expect(sniffPlainWav(riff(extensibleFmt(2, 0x3, 3, 32), chunk("data", pcm)), SAMPLE_RATE, true)).toMatchObject({ channels: 2, encoding: "f32" })
      // front left and front centre: ffmpeg would remix it to stereo
      expect(sniffPlainWav(riff(extensibleFmt(2, 0x5, 3, 32), chunk("data", pcm)), SAMPLE_RATE, true)).toBeUndefined()
      expect(sniffPlainWav(riff(extensibleFmt(3, 0x7, 3, 32), chunk("data", pcm)), SAMPLE_RATE, true)).toBeUndefined()
      // 16-bit data holding an IEC 61937 preamble, or a DTS sync word, anywhere in the probed window
      const s16 = new Uint8Array(mono)
      const dataAt = (parseWavHeader(s16) as { dataOffset: number }).dataOffset
      for (const sync of [[0x72, 0xf8, 0x1f, 0x4e], [0x7f, 0xfe, 0x80, 0x01]]) {
        const marked = new Uint8Array(s16)
        marked.set(sync, dataAt + BITSTREAM_WINDOW - 7)
        expect(sniffPlainWav(marked, SAMPLE_RATE, true)).toBeUndefined()
        // past the window: read here
        const later = new Uint8Array(s16)
        later.set(sync, dataAt + BITSTREAM_WINDOW + 8)
        expect(sniffPlainWav(later, SAMPLE_RATE, true)).toMatchObject({ encoding: "s16" })
      }
      // until the window has arrived, it is not known
      expect(sniffPlainWav(s16.subarray(0, dataAt + 1000), SAMPLE_RATE, false)).toBe("more")
      expect(sniffPlainWav(s16.subarray(0, 20), SAMPLE_RATE, false)).toBe("more")
    }))
})

describe("the pipeline on a plain WAV", () => {
  it.live("a short MP3 starts no ffmpeg where an MP3 input starts one (the decoder); a long job, or a bitrate LAME has no constant rate for, starts ffmpeg's encoder", () =>
    Effect.gen(function*() {
      // the children may write no file (RLIMIT_FSIZE 0): each start makes a folder instead
      const starts = path("starts")
      const wrapper = path("ffmpeg-counting")
      yield* Effect.promise(async () => {
        await writeFile(wrapper, `#!/bin/sh\ncase "$*" in *libmp3lame*) kind=encoder ;; *) kind=decoder ;; esac\nmkdir -p '${starts}' && mkdir "${starts}/$kind-$$"\nexec ffmpeg "$@"\n`)
        await chmod(wrapper, 0o755)
      })
      // [input, bitrate, validated duration (s), the ffmpeg started]
      const cases = [
        ["s16-mono.wav", 128, 4, []],
        ["s16-mono.mp3", 128, 4, ["decoder"]],
        ["s16-mono.wav", 100, 4, ["encoder"]],
        ["s16-mono.wav", 128, 61, ["encoder"]]
      ] as const
      for (const [name, bitrateKbps, durationSeconds, expected] of cases) {
        yield* Effect.promise(async () => {
          await rm(starts, { recursive: true, force: true })
          await mkdir(starts)
        })
        const bytes = yield* Effect.promise(() => readFile(path(name)))
        const out = yield* Stream.runCollect(denoiseToOutput(Stream.make(new Uint8Array(bytes)), { bitrateKbps, durationSeconds, ffmpegPath: wrapper }))
        expect([...out].reduce((n, b) => n + b.length, 0)).toBeGreaterThan(3 * 16_000)
        const started = yield* Effect.promise(() => readdir(starts))
        expect(started.map((entry) => entry.split("-")[0]).sort()).toEqual(expected)
      }
    }))

  it.live("an empty WAV (a header, no samples) fails as ffmpeg's would: no audio samples", () =>
    Effect.gen(function*() {
      const header = (yield* Effect.promise(() => readFile(path("s16-mono.wav")))).subarray(0, 100)
      const dataAt = (parseWavHeader(new Uint8Array(header)) as { dataOffset: number }).dataOffset
      const error = yield* Effect.flip(Stream.runDrain(denoiseToOutput(Stream.make(new Uint8Array(header.subarray(0, dataAt))), { bitrateKbps: 128, durationSeconds: 1 })))
      expect(error).toMatchObject({ _tag: "ProviderFailure", retryable: false, message: "the input holds no audio samples" })
    }))
})
