/**
 * The decode → RNNoise → MP3 pipeline with real ffmpeg processes and real worker threads,
 * and the RnnoiseProvider over the in-memory blob store. Needs ffmpeg (with libmp3lame) and
 * ffprobe on PATH; fixtures are generated into a temporary directory.
 */
import { execFile } from "node:child_process"
import { createReadStream } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Option, Stream } from "effect"
import { MemoryBlobBackdoor, layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import { defaultChunkSeconds, denoisePcm, denoiseToOutput, type PipelineOptions } from "../../../adapters/rnnoise/pipeline.js"
import { type ChunkPool, makeChunkPool } from "../../../adapters/rnnoise/pool.js"
import { layerRnnoiseProvider } from "../../../adapters/rnnoise/provider.js"
import { RNNOISE } from "../../../core/domain/catalog.js"
import { BlobError, BlobStore } from "../../../core/ports/blob-store.js"
import { DenoiseProvider } from "../../../core/ports/denoise-provider.js"
import {
  bestLag, channel, decodeToFloat, levelDb, makeNoisySpeech, probeAudio, RATE, spans
} from "../../support/audio-fixtures.js"

const SECONDS = 12
/** libmp3lame's encoder delay: an MP3 written to a pipe has no LAME tag telling decoders to skip it. */
/** The MP3's gapless header (mp3-tag.ts) has the decoder drop LAME's delay: none is left. */
const MP3_DELAY = 0

let dir = ""
const path = (name: string) => join(dir, name)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-rnnoise-pipeline-"))
  await Promise.all([
    makeNoisySpeech(path("mono.wav"), { seconds: SECONDS }),
    makeNoisySpeech(path("stereo.wav"), { seconds: SECONDS, channels: 2 })
  ])
  // 36 s of 16-bit stereo in a MOV whose index (moov) follows the data, as ffmpeg writes it
  // by default: 6.9 MB, more than ffmpeg buffers while probing a pipe (5 MB)
  await promisify(execFile)("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-stream_loop", "2",
    "-i", path("stereo.wav"), "-c:a", "pcm_s16le", "-f", "mov", path("late-index.mov")])
}, 60_000)

afterAll(() => rm(dir, { recursive: true, force: true }))

/** The file, read afresh each time the stream runs; `runs` counts the reads. */
const fileStream = (file: string, runs = { count: 0 }): Stream.Stream<Uint8Array, BlobError> =>
  Stream.suspend(() => {
    runs.count++
    return Stream.fromAsyncIterable(createReadStream(file), (cause) => new BlobError({ message: "read failed", cause }))
  }).pipe(Stream.map((chunk) => chunk as Uint8Array))

const collect = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => new Uint8Array(Buffer.concat(Chunk.toArray(chunks))))

const options: PipelineOptions = { bitrateKbps: 192, durationSeconds: SECONDS }
/** An output that ffmpeg encodes (an MP3 is encoded in this process, mp3.ts): for the children's tests. */
const withEncoderChild: PipelineOptions = { ...options, format: "opus" }

/** The pipeline's MP3, written next to the fixtures, and its decoded samples. */
const denoiseFile = (input: string, extra: Partial<PipelineOptions> = {}, runs = { count: 0 }) =>
  Effect.gen(function*() {
    const mp3 = yield* collect(denoiseToOutput(fileStream(path(input), runs), { ...options, ...extra }))
    const out = path(`${input}.denoised.mp3`)
    yield* Effect.promise(() => writeFile(out, mp3))
    return { out, decoded: yield* Effect.promise(() => decodeToFloat(out)) }
  })

const decodedInput = (input: string) => Effect.promise(() => decodeToFloat(path(input)))

/** Noise-only stretches ≥ 30 dB quieter, speech within 2 dB, in one channel; `y` is realigned by `lag`. */
const expectDenoised = (x: Float32Array, y: Float32Array, lag: number) => {
  // a lag of a sample or two either way (the MP3's own blur): y moved back by it
  const aligned = lag >= 0 ? y.subarray(lag) : new Float32Array(y.length - lag).fill(0, 0, -lag).map((_, i) => i < -lag ? 0 : y[i + lag]!)
  const { speech, noise } = spans(SECONDS)
  for (const [a, b] of noise) expect(levelDb(x, a, b) - levelDb(aligned, a, b), `noise ${a}–${b} s`).toBeGreaterThanOrEqual(30)
  for (const [a, b] of speech) expect(Math.abs(levelDb(x, a, b) - levelDb(aligned, a, b)), `speech ${a}–${b} s`).toBeLessThan(2)
}

/** ffmpeg processes that are children of this test process. */
const ffmpegChildren = () =>
  promisify(execFile)("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)]).then(
    ({ stdout }) => stdout.split("\n").filter((line) => line.includes("ffmpeg")),
    () => [] // ps exits 1 when there are none
  )

const noFfmpegLeft = Effect.promise(async () => {
  for (let i = 0; i < 50; i++) {
    if ((await ffmpegChildren()).length === 0) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return false
})

describe("denoiseToOutput", () => {
  it.live("mono in this thread: a valid MP3 as long as the input, noise removed, speech kept, no model delay", () =>
    Effect.gen(function*() {
      const { out, decoded } = yield* denoiseFile("mono.wav")
      const input = yield* decodedInput("mono.wav")
      expect(yield* Effect.promise(() => probeAudio(out))).toEqual({ codec: "mp3", channels: 1, sampleRate: RATE })
      // the gapless header has the decoder drop the encoder's delay and its last frame's padding
      expect(decoded.length).toBe(input.length)
      // no lag left: RNNoise's 960 samples were trimmed, LAME's 1105 are dropped by the decoder
      const lag = bestLag(input, decoded, 1500, 2.2, 4.8)
      expect(Math.abs(lag - MP3_DELAY)).toBeLessThanOrEqual(3)
      expectDenoised(input, decoded, lag)
    }))

  it.live("stereo on worker threads: stays stereo, every channel denoised on its own", () =>
    Effect.scoped(Effect.gen(function*() {
      const pool = yield* makeChunkPool(2)
      const { out, decoded } = yield* denoiseFile("stereo.wav", { pool, chunkSeconds: 3 })
      const input = yield* decodedInput("stereo.wav")
      expect((yield* Effect.promise(() => probeAudio(out))).channels).toBe(2)
      for (const c of [0, 1]) {
        const x = channel(input, 2, c)
        const y = channel(decoded, 2, c)
        // joint-stereo coding blurs the peak by a few samples; the model's 960 are gone
        const lag = bestLag(x, y, 1500, 2.2, 4.8)
        expect(Math.abs(lag - MP3_DELAY)).toBeLessThanOrEqual(10)
        expectDenoised(x, y, lag)
      }
    })), 90_000)

  it.live("chunks on worker threads join the single-thread output without seams", () =>
    Effect.scoped(Effect.gen(function*() {
      const input = yield* decodedInput("mono.wav")
      // pieces of odd sizes, as a decoder writes them
      const pieces = Stream.range(0, Math.ceil(input.length / 9_999) - 1).pipe(
        Stream.map((i) => input.slice(i * 9_999, (i + 1) * 9_999))
      )
      const run = (extra: Partial<PipelineOptions>) =>
        Effect.map(Stream.runCollect(denoisePcm(pieces, 1, { ...options, ...extra })), (chunks) => {
          const parts = Chunk.toArray(chunks)
          const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
          parts.reduce((at, p) => (all.set(p, at), at + p.length), 0)
          return all
        })
      const single = yield* run({})
      const pool = yield* makeChunkPool(2)
      const chunked = yield* run({ pool, chunkSeconds: 3, warmupSeconds: 1 })
      expect(chunked.length).toBe(input.length)
      expect(single.length).toBe(input.length)
      let maxJump = 0
      for (let i = 1; i < single.length; i++) maxJump = Math.max(maxJump, Math.abs(single[i]! - single[i - 1]!))
      for (const seam of [3, 6, 9].map((s) => s * RATE)) {
        const diff = new Float32Array(RATE / 2).map((_, i) => chunked[seam + i]! - single[seam + i]!)
        expect(levelDb(diff, 0, 0.5)).toBeLessThan(-45) // speech is at −18 dBFS
        expect(Math.abs(chunked[seam]! - chunked[seam - 1]!)).toBeLessThanOrEqual(maxJump)
      }
    })))

  it.live("by default a short job is one chunk without warm-up; a long one is split over the threads", () =>
    Effect.scoped(Effect.gen(function*() {
      const input = yield* decodedInput("mono.wav")
      const real = yield* makeChunkPool(2)
      const tasks: Array<{ readonly skip: number; readonly take: number }> = []
      // the real pool, recording the tasks it is given
      const pool: ChunkPool = { size: 2, run: (task) => Effect.suspend(() => (tasks.push({ skip: task.skip, take: task.take }), real.run(task))) }
      const run = (durationSeconds: number) =>
        Effect.map(Stream.runCollect(denoisePcm(Stream.make(input.slice()), 1, { ...options, durationSeconds, pool })), (chunks) =>
          Chunk.toArray(chunks).reduce((n, c) => n + c.length, 0))
      // 12 s validated: one task, nothing skipped (no warm-up), the whole input taken
      expect(yield* run(SECONDS)).toBe(input.length)
      expect(tasks).toEqual([{ skip: 0, take: input.length }])
      // up to 30 s: the whole job (and a second of headroom); longer: split over the threads, 5–30 s
      expect(defaultChunkSeconds(13, 2)).toBe(14)
      expect(defaultChunkSeconds(30, 2)).toBe(31)
      expect(defaultChunkSeconds(40, 2)).toBe(20)
      expect(defaultChunkSeconds(40, 8)).toBe(5)
      expect(defaultChunkSeconds(600, 2)).toBe(30)
      // a job said to be 31 s long, on 8 threads: 5 s chunks, so these 12 s are three tasks, the
      // later two with a warm-up before their body
      tasks.length = 0
      const eight: ChunkPool = { ...pool, size: 8 }
      expect(yield* Effect.map(Stream.runCollect(denoisePcm(Stream.make(input.slice()), 1, { ...options, durationSeconds: 31, pool: eight })), (chunks) =>
        Chunk.toArray(chunks).reduce((n, c) => n + c.length, 0))).toBe(input.length)
      expect(tasks.length).toBe(3)
      expect(tasks[0]!.skip).toBe(0)
      expect(tasks.slice(1).every((t) => t.skip > 0)).toBe(true)
    })))

  it.live("reports progress as the audio goes through, up to 1", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      yield* collect(denoiseToOutput(fileStream(path("mono.wav")), {
        ...options,
        onProgress: (fraction) => Effect.sync(() => void seen.push(fraction))
      }))
      expect(seen.length).toBeGreaterThan(10)
      expect(seen.every((f, i) => f > 0 && f <= 1 && (i === 0 || f > seen[i - 1]!))).toBe(true)
      expect(seen.at(-1)).toBeGreaterThan(0.99)
    }))

  it.live("an MP4/MOV whose index follows the data is decoded from a spooled copy", () =>
    Effect.scoped(Effect.gen(function*() {
      const runs = { count: 0 }
      const pool = yield* makeChunkPool(2)
      const { decoded } = yield* denoiseFile("late-index.mov", { durationSeconds: 36, pool }, runs)
      expect(runs.count).toBe(2) // once through the pipe, once into the temporary file
      expect(Math.abs(decoded.length / 2 / RATE - 36)).toBeLessThan(0.05)
    })), 90_000) // 36 s of stereo through decoder, spool and pool: ~30 s on a loaded 2-core machine

  it.live("decoding stops at maxInputSeconds: a 12-second input allowed 3 seconds gives 3 seconds of output", () =>
    Effect.gen(function*() {
      const { decoded } = yield* denoiseFile("mono.wav", { durationSeconds: 2, maxInputSeconds: 3 })
      // the MP3's gapless header gives back exactly what was decoded (-t to the millisecond)
      expect(decoded.length).toBe(3 * RATE)
    }))

  it.live("undecodable or empty input → ProviderFailure (not retryable), no ffmpeg left running", () =>
    Effect.gen(function*() {
      const garbage = new Uint8Array(4096).map((_, i) => (i * 7919) % 256)
      for (const input of [Stream.make(garbage), Stream.empty]) {
        const error = yield* Effect.flip(collect(denoiseToOutput(input, options)))
        expect(error).toMatchObject({ _tag: "ProviderFailure", retryable: false })
        expect(error.message).toMatch(/could not be decoded|no audio/)
      }
      expect(yield* noFfmpegLeft).toBe(true)
    }))

  it.live("no ffmpeg → a defect that says how to install it", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(collect(denoiseToOutput(fileStream(path("mono.wav")), { ...withEncoderChild, ffmpegPath: "/nonexistent/ffmpeg" })))
      expect(exit._tag === "Failure" && exit.cause._tag === "Die" && String(exit.cause.defect)).toMatch(/ffmpeg is not installed/)
    }))

  it.live("an input read error fails the output with that error", () =>
    Effect.gen(function*() {
      const wav = yield* Effect.promise(() => readFile(path("mono.wav")))
      const broken = Stream.make(new Uint8Array(wav.subarray(0, 200_000))).pipe(
        Stream.concat(Stream.fail(new BlobError({ message: "connection reset" })))
      )
      const error = yield* Effect.flip(collect(denoiseToOutput(broken, withEncoderChild)))
      expect(error).toMatchObject({ _tag: "BlobError", message: "connection reset" })
      expect(yield* noFfmpegLeft).toBe(true)
    }))

  it.live("interruption while every process waits (input stalled) completes and kills the encoder's ffmpeg", () =>
    Effect.gen(function*() {
      const wav = yield* Effect.promise(() => readFile(path("mono.wav")))
      const stalled = Stream.make(new Uint8Array(wav.subarray(0, 50_000))).pipe(Stream.concat(Stream.never))
      const result = yield* collect(denoiseToOutput(stalled, withEncoderChild)).pipe(Effect.timeout("1 second"), Effect.option)
      expect(Option.isNone(result)).toBe(true)
      expect(yield* noFfmpegLeft).toBe(true)
    }))

  it.live("stopping the output early (interruption) kills the encoder's ffmpeg", () =>
    Effect.gen(function*() {
      const first = yield* collect(Stream.take(denoiseToOutput(fileStream(path("mono.wav")), withEncoderChild), 1))
      expect(first.length).toBeGreaterThan(0)
      expect(yield* noFfmpegLeft).toBe(true)
    }))
})

describe("RnnoiseProvider", () => {
  const provider = (threads: number) => layerRnnoiseProvider({ threads, chunkSeconds: 4 }).pipe(Layer.provideMerge(layerMemoryBlobStore))

  const request = (progress: Array<number>) => ({
    jobId: "job_1",
    model: RNNOISE.id,
    inputKey: "inputs/a.wav",
    outputKey: "outputs/job_1.mp3",
    bitrateKbps: 192,
    durationSeconds: SECONDS,
    strength: null,
    format: "mp3" as const,
    loudness: null,
    onProgress: (fraction: number) => Effect.sync(() => void progress.push(fraction))
  })

  for (const threads of [1, 2]) {
    it.live(`reads the input object and writes the MP3 output object (${threads} thread${threads > 1 ? "s" : ""})`, () =>
      Effect.gen(function*() {
        const door = yield* MemoryBlobBackdoor
        yield* door.putObject("inputs/a.wav", yield* Effect.promise(() => readFile(path("mono.wav"))), "audio/wav")
        const progress: Array<number> = []
        const { sizeBytes } = yield* Effect.flatMap(DenoiseProvider, (p) => p.denoise(request(progress)))
        const stored = yield* Effect.flatMap(BlobStore, (store) => store.stat("outputs/job_1.mp3"))
        expect(Option.getOrThrow(stored).sizeBytes).toBe(sizeBytes)
        // 12 s at 192 kb/s
        expect(sizeBytes).toBeGreaterThan(0.9 * 12 * 24_000)
        expect(progress.at(-1)).toBeGreaterThan(0.99)
        expect((yield* DenoiseProvider).providers).toEqual(["builtin"])
      }).pipe(Effect.provide(provider(threads))))
  }

  it.live("an input longer than its validated duration is decoded only to that duration plus 1 s", () =>
    Effect.gen(function*() {
      const door = yield* MemoryBlobBackdoor
      yield* door.putObject("inputs/a.wav", yield* Effect.promise(() => readFile(path("mono.wav"))), "audio/wav")
      // priced for 2 seconds, the object holds 12
      yield* Effect.flatMap(DenoiseProvider, (p) => p.denoise({ ...request([]), durationSeconds: 2 }))
      const store = yield* BlobStore
      const mp3 = yield* collect(store.read("outputs/job_1.mp3"))
      const out = path("capped.mp3")
      yield* Effect.promise(() => writeFile(out, mp3))
      const seconds = (yield* Effect.promise(() => decodeToFloat(out))).length / RATE
      expect(seconds).toBeGreaterThan(2.99)
      expect(seconds).toBeLessThan(3.1)
    }).pipe(Effect.provide(provider(1))))

  it.live("a job past its deadline → ProviderFailure, no output object: the in-process MP3 encoder gives the timer its turn", () =>
    Effect.gen(function*() {
      const door = yield* MemoryBlobBackdoor
      yield* door.putObject("inputs/a.wav", yield* Effect.promise(() => readFile(path("mono.wav"))), "audio/wav")
      const error = yield* Effect.flip(Effect.flatMap(DenoiseProvider, (p) => p.denoise(request([]))))
      expect(error).toMatchObject({ _tag: "ProviderFailure", retryable: false })
      expect(error.message).toMatch(/deadline/)
      expect(yield* door.keys()).toEqual(["inputs/a.wav"])
      expect(yield* noFfmpegLeft).toBe(true)
    }).pipe(Effect.provide(layerRnnoiseProvider({ threads: 1, deadlineBaseMs: 50, deadlinePerAudioSecondMs: 0 }).pipe(Layer.provideMerge(layerMemoryBlobStore)))))

  it.live("an undecodable input → ProviderFailure and no output object; a missing input → defect", () =>
    Effect.gen(function*() {
      const door = yield* MemoryBlobBackdoor
      yield* door.putObject("inputs/a.wav", new TextEncoder().encode("not audio at all"), "audio/wav")
      const denoise = Effect.flatMap(DenoiseProvider, (p) => p.denoise(request([])))
      expect(yield* Effect.flip(denoise)).toMatchObject({ _tag: "ProviderFailure", retryable: false })
      expect(yield* door.keys()).toEqual(["inputs/a.wav"])
      const other = Effect.flatMap(DenoiseProvider, (p) => p.denoise({ ...request([]), model: "acme/other" }))
      expect((yield* Effect.flip(other))._tag).toBe("ProviderFailure")
      const missing = Effect.flatMap(DenoiseProvider, (p) => p.denoise({ ...request([]), inputKey: "inputs/none.wav" }))
      const exit = yield* Effect.exit(missing)
      expect(exit._tag === "Failure" && exit.cause._tag).toBe("Die")
    }).pipe(Effect.provide(provider(1))))
})
