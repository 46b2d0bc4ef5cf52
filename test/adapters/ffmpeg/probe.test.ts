import { execFileSync } from "node:child_process"
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeStream } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Layer, Stream } from "effect"
import { AudioProbe, AudioRejected } from "../../../core/ports/audio.js"
import { BlobError } from "../../../core/ports/blob-store.js"
import { checkFfmpegAvailable, FFMPEG_MISSING_MESSAGE, layerFfmpegAudioProbe } from "../../../adapters/ffmpeg/probe.js"
import { TEST_MODE_SAMPLE_DURATION_SECONDS, TEST_MODE_SAMPLE_PATH, TEST_MODE_SAMPLE_SIZE_BYTES } from "../../../adapters/ffmpeg/sample.js"
import { junk } from "../../e2e/helpers.js"

let dir = ""
const file = (name: string) => join(dir, name)
const ffmpeg = (...args: Array<string>) => execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", ...args])
const headerDuration = (path: string) =>
  Number(execFileSync("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]).toString().trim())

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hush-probe-test-"))
  ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=3", "-ac", "2", file("3s.wav"))
  ffmpeg("-f", "lavfi", "-i", "anoisesrc=duration=60:sample_rate=48000", "-ac", "2", file("60s.wav"))
  ffmpeg("-f", "lavfi", "-i", "sine=frequency=330:sample_rate=44100:duration=5", "-c:a", "libmp3lame", "-b:a", "128k", file("5s.mp3"))
  const mp3 = readFileSync(file("5s.mp3"))
  writeFileSync(file("truncated.mp3"), mp3.subarray(0, Math.floor(mp3.length / 2)))
  // ffmpeg's default MP4 layout puts the index (moov) after the data: not decodable from a pipe.
  ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=20", "-c:a", "aac", file("20s.m4a"))
  const hasX264 = execFileSync("ffmpeg", ["-hide_banner", "-encoders"]).toString().includes("libx264")
  ffmpeg("-f", "lavfi", "-i", "testsrc=duration=2:size=160x120:rate=10", "-c:v", hasX264 ? "libx264" : "mpeg4",
    "-movflags", "+faststart", file("video-only.mp4"))
  // Seeded, not random: fresh random bytes now and then look like a container ffmpeg knows.
  writeFileSync(file("random.bin"), junk(64 * 1024))
  writeFileSync(file("empty.wav"), new Uint8Array(0))
  writeFileSync(file("notes.txt"), "This is not audio.\n".repeat(200))
  ffmpeg("-f", "lavfi", "-i", "sine=duration=4", file("segment.wav"))
  writeFileSync(file("playlist.wav"), [
    "#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:4", "#EXT-X-MEDIA-SEQUENCE:0",
    "#EXTINF:4.0,", file("segment.wav"), "#EXTINF:4.0,", `file:${file("segment.wav")}`, "#EXT-X-ENDLIST", ""
  ].join("\n"))
}, 60_000)

afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

const fromFile = (path: string, chunkSize = 64 * 1024) =>
  NodeStream.fromReadable<BlobError>(
    () => createReadStream(path, { highWaterMark: chunkSize }),
    (cause) => new BlobError({ message: "read failed", cause })
  )

const probeWith = (layer: Layer.Layer<AudioProbe>) => (input: Stream.Stream<Uint8Array, BlobError>) =>
  Effect.flatMap(AudioProbe, (audio) => audio.probe(input)).pipe(Effect.provide(layer))
const probe = probeWith(layerFfmpegAudioProbe())

const rejection = (input: Stream.Stream<Uint8Array, BlobError>) =>
  Effect.flip(probe(input)).pipe(Effect.map((error) => {
    expect(error).toBeInstanceOf(AudioRejected)
    return error as AudioRejected
  }))

/** ffmpeg processes whose parent is this test process (Linux /proc). */
const ffmpegChildren = () =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? []
      return comm === "ffmpeg" && rest?.split(" ")[1] === String(process.pid)
    } catch {
      return false
    }
  })

describe("FfmpegAudioProbe", () => {
  it.live("measures a 3.0 s WAV, fed in small chunks (back-pressure)", () =>
    Effect.gen(function*() {
      const { durationSeconds } = yield* probe(fromFile(file("3s.wav"), 1024))
      expect(durationSeconds).toBeGreaterThan(2.95)
      expect(durationSeconds).toBeLessThan(3.05)
    }))

  it.live("counts decoded samples of a truncated MP3 instead of trusting its header", () =>
    Effect.gen(function*() {
      expect(headerDuration(file("truncated.mp3"))).toBeGreaterThan(4.9) // the header still claims 5 s
      const { durationSeconds } = yield* probe(fromFile(file("truncated.mp3")))
      expect(Math.abs(durationSeconds - 2.5)).toBeLessThan(0.05)
    }))

  it.live("decodes an M4A whose index follows the data (spooled to a temporary file)", () =>
    Effect.gen(function*() {
      const { durationSeconds } = yield* probe(fromFile(file("20s.m4a")))
      expect(Math.abs(durationSeconds - 20)).toBeLessThan(0.05)
    }))

  it.live("measures a 60 s WAV and reports the time taken", () =>
    Effect.gen(function*() {
      const started = performance.now()
      const { durationSeconds } = yield* probe(fromFile(file("60s.wav")))
      console.log(`probe of a 60 s 48 kHz stereo WAV (${statSync(file("60s.wav")).size} bytes): ${Math.round(performance.now() - started)} ms`)
      expect(Math.abs(durationSeconds - 60)).toBeLessThan(0.05)
    }))

  it.live("rejects an MP4 with only a video track as no_audio", () =>
    Effect.gen(function*() {
      const error = yield* rejection(fromFile(file("video-only.mp4")))
      expect(error.reason).toBe("no_audio")
    }))

  it.live("rejects random bytes as undecodable, with ffmpeg's reason", () =>
    Effect.gen(function*() {
      const error = yield* rejection(fromFile(file("random.bin")))
      expect(error.reason).toBe("undecodable")
      expect(error.message).toMatch(/Invalid data found when processing input/)
    }))

  it.live("rejects 16 MiB of random bytes without hanging when ffmpeg stops reading early (EPIPE)", () =>
    Effect.gen(function*() {
      const chunks = Stream.range(1, 256).pipe(Stream.map((seed) => junk(64 * 1024, seed)))
      const error = yield* rejection(chunks)
      expect(error.reason).toBe("undecodable")
    }))

  it.live("stops reading early input when ffmpeg rejects it (EPIPE is not an error by itself)", () =>
    Effect.gen(function*() {
      let pulled = 0
      const garbage = Stream.repeatEffect(Effect.sync(() => {
        pulled += 64 * 1024
        return junk(64 * 1024, pulled) // not zeros: an MP4 atom of size 0 runs to the end
      })).pipe(Stream.take(512))
      const error = yield* rejection(Stream.concat(fromFile(file("video-only.mp4")), garbage))
      expect(error.reason).toBe("no_audio")
      expect(pulled).toBeLessThan(8 * 1024 * 1024) // ffmpeg gave up after the header: the feed stopped too
      // An input that stalls after ffmpeg has decided does not hold the answer back until the time limit.
      const stalled = Stream.concat(fromFile(file("video-only.mp4")), Stream.never)
      const late = yield* Effect.flip(probeWith(layerFfmpegAudioProbe({ timeLimitMs: 5_000 }))(stalled))
      expect(late).toBeInstanceOf(AudioRejected)
      expect((late as AudioRejected).reason).toBe("no_audio")
    }))

  it.live("holds input back while ffmpeg does not read (bounded memory)", () =>
    Effect.gen(function*() {
      let pulled = 0
      const chunk = new Uint8Array(64 * 1024)
      const endless = Stream.repeatEffect(Effect.sync(() => (pulled += chunk.length, chunk)))
      const fiber = yield* Effect.fork(Effect.flip(probeWith(layerFfmpegAudioProbe({ timeLimitMs: 1_000 }))(endless)))
      let children: Array<string> = []
      while (children.length === 0) {
        yield* Effect.sleep("5 millis")
        children = ffmpegChildren()
      }
      process.kill(Number(children[0]), "SIGSTOP") // ffmpeg stops reading: the pipe fills up
      yield* Effect.sleep("100 millis")
      const before = pulled
      yield* Effect.sleep("400 millis")
      expect(pulled - before).toBeLessThan(1024 * 1024) // not one more pipe-full while it is stopped
      expect(pulled).toBeLessThan(16 * 1024 * 1024)
      const error = yield* fiber.await.pipe(Effect.flatten)
      expect((error as AudioRejected).reason).toBe("timeout")
      yield* Effect.sleep("100 millis")
      expect(ffmpegChildren()).toEqual([])
    }))

  it.live("rejects an empty input as empty", () =>
    Effect.gen(function*() {
      expect((yield* rejection(fromFile(file("empty.wav")))).reason).toBe("empty")
      expect((yield* rejection(Stream.empty)).reason).toBe("empty")
    }))

  it.live("rejects a text file as undecodable", () =>
    Effect.gen(function*() {
      expect((yield* rejection(fromFile(file("notes.txt")))).reason).toBe("undecodable")
    }))

  it.live("rejects an HLS playlist named .wav without following it to the valid segment", () =>
    Effect.gen(function*() {
      const error = yield* rejection(fromFile(file("playlist.wav")))
      expect(error.reason).toBe("undecodable")
      expect(error.message).toMatch(/container format not accepted/) // refused by the demuxer whitelist
    }))

  it.live("rejects with timeout past the time limit, and kills ffmpeg", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(probeWith(layerFfmpegAudioProbe({ timeLimitMs: 1 }))(fromFile(file("60s.wav"))))
      expect(error).toBeInstanceOf(AudioRejected)
      expect((error as AudioRejected).reason).toBe("timeout")
      // An input that never ends: only the time limit can stop it, and ffmpeg must not outlive it.
      const head = readFileSync(file("3s.wav")).subarray(0, 64 * 1024)
      const endless = Stream.concat(Stream.make(new Uint8Array(head)), Stream.never)
      const fiber = yield* Effect.fork(Effect.flip(probeWith(layerFfmpegAudioProbe({ timeLimitMs: 300 }))(endless)))
      yield* Effect.sleep("150 millis")
      expect(ffmpegChildren().length).toBe(1)
      const late = yield* fiber.await.pipe(Effect.flatten)
      expect((late as AudioRejected).reason).toBe("timeout")
      yield* Effect.sleep("100 millis")
      expect(ffmpegChildren()).toEqual([])
    }))

  it.live("fails with the input stream's BlobError and kills ffmpeg", () =>
    Effect.gen(function*() {
      const failure = new BlobError({ message: "storage went away" })
      const head = readFileSync(file("60s.wav")).subarray(0, 256 * 1024)
      const input = Stream.concat(Stream.fromChunk(Chunk.of(new Uint8Array(head))), Stream.fail(failure))
      const error = yield* Effect.flip(probe(input))
      expect(error).toBe(failure)
      yield* Effect.sleep("100 millis")
      expect(ffmpegChildren()).toEqual([])
    }))

  it.live("dies with install instructions when the ffmpeg binary is missing", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(probeWith(layerFfmpegAudioProbe({ ffmpegPath: "/nonexistent/ffmpeg" }))(fromFile(file("3s.wav"))))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      if (Exit.isFailure(exit)) expect(String(Cause.squash(exit.cause))).toContain(FFMPEG_MISSING_MESSAGE)
    }))

  it.live("checkFfmpegAvailable: the version, or the install instructions", () =>
    Effect.gen(function*() {
      expect(yield* checkFfmpegAvailable()).toMatch(/^\d+\.\d+/)
      const error = yield* Effect.flip(checkFfmpegAvailable("/nonexistent/ffmpeg"))
      expect(error.message).toBe(FFMPEG_MISSING_MESSAGE)
    }))

  it.live("the shipped test-mode sample decodes to its declared duration", () =>
    Effect.gen(function*() {
      expect(statSync(TEST_MODE_SAMPLE_PATH).size).toBe(TEST_MODE_SAMPLE_SIZE_BYTES)
      const { durationSeconds } = yield* probe(fromFile(TEST_MODE_SAMPLE_PATH))
      // 2.017 s from a pipe: LAME's end padding is only trimmed on seekable input
      expect(Math.abs(durationSeconds - TEST_MODE_SAMPLE_DURATION_SECONDS)).toBeLessThan(0.025)
    }))
})
