/**
 * The in-process MP3 encoder (adapters/rnnoise/mp3.ts): what it writes decodes (ffmpeg) as an
 * MP3 of the input's channels and length plus LAME's delay, each channel where it was, and as
 * the audio ffmpeg's own libmp3lame makes of the same input (the encoder it replaces); it takes
 * chunks of any whole-frame size; a reused encoder starts afresh. Needs ffmpeg on PATH.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Stream } from "effect"
import { encodeMp3, encodesInProcess, IN_PROCESS_MAX_SECONDS } from "../../../adapters/rnnoise/mp3.js"
import { infoFrameBytes, lameBitrate } from "../../../adapters/rnnoise/mp3-tag.js"
import { bestLag, channel, decodeToFloat, probeAudio, RATE } from "../../support/audio-fixtures.js"

/** libmp3lame's encoder delay (no LAME tag tells a decoder to skip it) and its last frame's padding at most. */
const MP3_DELAY = 1105
const MP3_FRAME = 1152

const run = promisify(execFile)

let dir = ""
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-mp3-"))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

/**
 * `seconds` of interleaved PCM: a sweep from 200 Hz up to 2 kHz on the left, down on the right
 * (stereo). A sweep never repeats, so the lag at which it matches its decoding is unique.
 */
const sweeps = (seconds: number, channels: 1 | 2) => {
  const frames = Math.round(seconds * RATE)
  const pcm = new Float32Array(frames * channels)
  const rate = 1_800 / seconds // Hz a second
  for (let i = 0; i < frames; i++) {
    const t = i / RATE
    pcm[i * channels] = 0.25 * Math.sin(2 * Math.PI * (200 * t + (rate * t * t) / 2))
    if (channels === 2) pcm[i * 2 + 1] = 0.25 * Math.sin(2 * Math.PI * (2_000 * t - (rate * t * t) / 2))
  }
  return pcm
}

/** The PCM as byte chunks of the given frame counts, cycling through them. */
const chunked = (pcm: Float32Array, channels: number, frameCounts: ReadonlyArray<number>) => {
  const bytes = new Uint8Array(pcm.buffer)
  const out: Array<Uint8Array> = []
  for (let at = 0, n = 0; at < bytes.length; n++) {
    const size = frameCounts[n % frameCounts.length]! * channels * 4
    out.push(bytes.slice(at, at + size))
    at += size
  }
  return out
}

const encode = (chunks: ReadonlyArray<Uint8Array>, channels: number, kbps: number, onWritten?: (bytes: Uint8Array) => void) =>
  Effect.map(Stream.runCollect(encodeMp3(Stream.fromIterable(chunks), channels, kbps, onWritten)), (out) => Buffer.concat(Chunk.toArray(out)))

describe("the gapless tag frame's reserved size", () => {
  it("follows the bitrate LAME writes: the nearest of the table, the lower on a tie", () => {
    expect([100, 104, 128, 20, 330, 113].map(lameBitrate)).toEqual([96, 96, 128, 32, 320, 112])
    // a 100 kbps request is written as 96 kbps frames: 288 bytes at 48 kHz, not 300
    expect(infoFrameBytes(100, 48_000)).toBe(288)
    expect(infoFrameBytes(128, 44_100)).toBe(417)
  })
})

describe("the in-process MP3 encoder", () => {
  it("takes jobs up to a minute at LAME's constant bitrates, mono and stereo; nothing else", () => {
    expect(encodesInProcess(128, 1, 13)).toBe(true)
    expect(encodesInProcess(192, 2, IN_PROCESS_MAX_SECONDS)).toBe(true)
    expect(IN_PROCESS_MAX_SECONDS).toBe(60)
    expect(encodesInProcess(192, 2, IN_PROCESS_MAX_SECONDS + 0.5)).toBe(false)
    expect(encodesInProcess(100, 1, 13)).toBe(false)
    expect(encodesInProcess(128, 6, 13)).toBe(false)
  })

  for (const channels of [1, 2] as const) {
    it.live(`${channels === 1 ? "mono" : "stereo"}: an MP3 of the input's length plus the encoder's delay, each sweep in its channel`, () =>
      Effect.gen(function*() {
        const pcm = sweeps(3, channels)
        // chunks smaller and larger than a slice (0.2 s), none a whole number of MP3 frames
        const chunks = chunked(pcm, channels, [1000, 30_011, 9_601, 77])
        const written: Array<Uint8Array> = []
        const mp3 = yield* encode(chunks, channels, 128, (bytes) => written.push(bytes))
        // every chunk handed back once, in order, after it was encoded
        expect(written).toEqual(chunks)
        const file = join(dir, `sweeps-${channels}.mp3`)
        yield* Effect.promise(() => writeFile(file, mp3))
        expect(yield* Effect.promise(() => probeAudio(file))).toEqual({ codec: "mp3", channels, sampleRate: RATE })
        // 128 kb/s: 16,000 bytes a second
        expect(Math.abs(mp3.length - 3 * 16_000)).toBeLessThan(2_000)
        const decoded = yield* Effect.promise(() => decodeToFloat(file))
        const extra = decoded.length / channels - pcm.length / channels
        expect(extra).toBeGreaterThanOrEqual(MP3_DELAY)
        expect(extra).toBeLessThanOrEqual(MP3_DELAY + MP3_FRAME)
        for (let c = 0; c < channels; c++) {
          const x = channel(pcm, channels, c)
          const y = channel(decoded, channels, c)
          expect(bestLag(x, y, 1200, 0.5, 2.5)).toBe(MP3_DELAY)
          if (channels === 2) {
            // the other channel's sweep is not in this one: a rising and a falling sweep correlate to ~0
            const other = channel(pcm, 2, 1 - c)
            let cross = 0
            let own = 0
            for (let i = RATE; i < 2 * RATE; i++) {
              cross += other[i]! * y[i + MP3_DELAY]!
              own += x[i]! * y[i + MP3_DELAY]!
            }
            expect(Math.abs(cross)).toBeLessThan(0.05 * own)
          }
        }
        // ffmpeg's libmp3lame, piped as the pipeline used it: the same audio (measured: −82 dB apart)
        const raw = join(dir, `sweeps-${channels}.f32`)
        const piped = join(dir, `sweeps-${channels}-ffmpeg.mp3`)
        yield* Effect.promise(() => writeFile(raw, pcm))
        yield* Effect.promise(() => run("sh", ["-c", `ffmpeg -v error -f f32le -ar ${RATE} -ac ${channels} -i '${raw}' -c:a libmp3lame -b:a 128k -f mp3 pipe:1 > '${piped}'`]))
        const reference = yield* Effect.promise(() => readFile(piped).then(decodeToFloat))
        expect(reference.length).toBe(decoded.length)
        let difference = 0
        let signal = 0
        for (let i = 0; i < decoded.length; i++) {
          difference += (decoded[i]! - reference[i]!) ** 2
          signal += reference[i]! ** 2
        }
        expect(10 * Math.log10(difference / signal)).toBeLessThan(-60)
      }), 30_000)
  }

  it.live("a reused encoder starts afresh: the same input gives the same bytes, whatever it encoded before", () =>
    Effect.gen(function*() {
      const pcm = sweeps(1, 1)
      const first = yield* encode(chunked(pcm, 1, [4_800]), 1, 192)
      yield* encode(chunked(sweeps(2, 2), 2, [7_000]), 2, 64)
      const again = yield* encode(chunked(pcm, 1, [4_800]), 1, 192)
      expect(again.equals(first)).toBe(true)
    }))

  it.live("a chunk that is not whole frames is a defect, and the encoder is not kept", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(encode([new Uint8Array(6)], 2, 128))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Die").toBe(true)
    }))
})
