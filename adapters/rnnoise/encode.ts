/**
 * Denoised PCM → the output format, with an optional loudness target (decisions.md, Denoise
 * options). Memory stays bounded whatever the length:
 *   - MP3 and Ogg Opus stream out of the encoder as they are made;
 *   - WAV and FLAC are written to a temporary file first, so that the encoder can finish
 *     their headers (a piped WAV says "size unknown", a piped FLAC has no length): a player
 *     shows their duration and seeks in them;
 *   - a loudness target needs the whole recording measured before its one gain is known: the
 *     denoised audio is spooled to a temporary FLAC (24-bit) while ffmpeg's `ebur128` measures
 *     it, then read back through that gain and a true-peak limiter into the encoder.
 */
import { createReadStream } from "node:fs"
import { mkdtemp, open, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, type Exit, Fiber, Stream } from "effect"
import { OUTPUT_FORMATS, type OutputFormat, TRUE_PEAK_CEILING_DBTP } from "../../core/domain/denoise-options.js"
import type { StepSpan } from "../../core/observability/steps.js"
import type { ChildLimits } from "../ffmpeg/process.js"
import { type Child, feed, firstError, spawnChild, unexpected } from "./child.js"
import { encodeMp3, encodesInProcess } from "./mp3.js"
import { SAMPLE_RATE } from "./engine.mjs"

export interface EncodeOptions {
  readonly format: OutputFormat
  /** MP3 only; Opus has its own (OUTPUT_FORMATS). */
  readonly mp3BitrateKbps: number
  /** The job's validated duration: a short MP3 is encoded in this process (mp3.ts). */
  readonly audioSeconds: number
  /** Integrated loudness target in LUFS, or null: the level is left as it is. */
  readonly loudness: number | null
  readonly ffmpegPath: string
  readonly childLimits: ChildLimits
  /** Called with `recycle`-able byte chunks once the encoder (or spool) has them. */
  readonly onWritten?: ((bytes: Uint8Array) => void) | undefined
  /** The `job.encode` step: from the first encoder's start (the loudness measurement's, if any) to the output's last byte made. */
  readonly step?: StepSpan | undefined
}

const QUIET = ["-hide_banner", "-nostats", "-loglevel", "error"]

/** The encoders' output is read in pieces this big, not packet by packet (child.ts, ChildOptions). */
const ENCODED_CHUNK_BYTES = 64 * 1024

/**
 * The limiter works on 4× oversampled audio (so that it sees the peaks between samples) a
 * little under the ceiling: resampling back and, for lossy formats, the encoder's own ripple
 * can each add a few tenths of a dB (measured in test/e2e/denoise-options.test.ts).
 */
const LIMIT_MARGIN_DB: { readonly [format in OutputFormat]: number } = { mp3: 1.0, opus: 1.0, wav: 0.5, flac: 0.5 }
const OVERSAMPLED_RATE = 4 * SAMPLE_RATE

/**
 * To a pipe ffmpeg flushes after every packet by default: an MP3 came out in one read per
 * 26 ms frame (~500 for 13 s), each a stream element, a file write and a hash update in the
 * server. Without the flushes it comes in 32 KiB pieces, the same bytes (MP3 and FLAC; the Ogg
 * muxer cuts its pages differently without them, so Opus keeps them).
 */
const NO_PACKET_FLUSH = ["-flush_packets", "0"]

/** The streamed formats. */
const codecArgs = (format: "mp3" | "opus", mp3BitrateKbps: number): ReadonlyArray<string> =>
  format === "mp3"
    ? ["-c:a", "libmp3lame", "-b:a", `${mp3BitrateKbps}k`, ...NO_PACKET_FLUSH, "-f", "mp3"]
    : ["-c:a", "libopus", "-b:a", `${OUTPUT_FORMATS.opus.bitrateKbps}k`, "-f", "ogg"]

/** Formats whose header tells the length: written to a temporary file whose header is completed at the end. */
const needsSeekableOutput = (format: OutputFormat) => format === "wav" || format === "flac"

/** The one gain that brings `measured` LUFS to `target`; none for silence (ebur128 reports −70). */
export const loudnessGainDb = (measured: number, target: number): number =>
  Number.isFinite(measured) && measured > -70 ? target - measured : 0

/** `ebur128`'s summary: "Integrated loudness: … I: -23.4 LUFS". */
export const parseIntegratedLoudness = (stderr: string): number | undefined => {
  const summary = stderr.slice(stderr.lastIndexOf("Summary:"))
  const match = /I:\s+(-?(?:\d+(?:\.\d+)?|inf))\s+LUFS/.exec(summary)
  if (match === null) return undefined
  return match[1] === "-inf" ? -Infinity : Number(match[1])
}

/** After the gain, peaks are held under the ceiling on the oversampled signal. */
const levelFilter = (gainDb: number, format: OutputFormat) => {
  const limit = 10 ** ((TRUE_PEAK_CEILING_DBTP - LIMIT_MARGIN_DB[format]) / 20)
  return [
    `volume=${gainDb.toFixed(2)}dB:precision=float`,
    `aresample=${OVERSAMPLED_RATE}`,
    `alimiter=limit=${limit.toFixed(5)}:attack=1:release=100:level=false:latency=true`,
    `aresample=${SAMPLE_RATE}`
  ].join(",")
}

const pcmInput = (channels: number) => ["-f", "f32le", "-ar", String(SAMPLE_RATE), "-ac", String(channels), "-i", "pipe:0"]

/**
 * Runs one ffmpeg child fed with `samples` whose stdout goes to `path` (written here: the
 * children write no file themselves, adapters/ffmpeg/process.ts); answers its stderr once it
 * exited well, and how many bytes it wrote.
 */
const runToFile = <E>(ffmpeg: string, args: ReadonlyArray<string>, samples: Stream.Stream<Uint8Array, E>, path: string, at: number, options: EncodeOptions, what: string) =>
  Effect.scoped(Effect.gen(function*() {
    const child = yield* spawnChild(ffmpeg, args, options.childLimits, { stdoutChunkBytes: ENCODED_CHUNK_BYTES })
    const feeder = yield* Effect.fork(feed(child.stdin, samples, options.onWritten))
    const file = yield* Effect.acquireRelease(Effect.promise(() => open(path, at === 0 ? "w" : "r+", 0o600)), (f) => Effect.promise(() => f.close()))
    let written = 0
    yield* Stream.runForEach(child.stdout, (bytes) =>
      Effect.promise(async () => {
        await file.write(bytes, 0, bytes.length, at + written)
        written += bytes.length
      }))
    yield* Fiber.join(feeder)
    const stderr = yield* checkExit(ffmpeg, child, what)
    return { stderr, written }
  }))

const checkExit = (ffmpeg: string, child: Pick<Child, "outcome" | "stderr">, what: string) =>
  Effect.gen(function*() {
    const outcome = yield* child.outcome
    const stderr = child.stderr()
    const fault = unexpected(ffmpeg, outcome, stderr) ??
      (outcome._tag === "Exited" && outcome.code !== 0 ? new Error(`the ${what} failed: ${firstError(stderr)}`) : undefined)
    if (fault !== undefined) return yield* Effect.die(fault)
    return stderr
  })

const fileStream = (path: string): Stream.Stream<Uint8Array> =>
  NodeStream.fromReadable<Error, Uint8Array>(() => createReadStream(path), (error) => error as Error).pipe(Stream.orDie)

/** A canonical 44-byte header for 16-bit PCM at 48 kHz. */
export const wavHeader = (channels: number, dataBytes: number): Uint8Array => {
  if (dataBytes > 0xffff_ffff - 36) throw new Error("the audio is too long for a WAV file")
  const header = new Uint8Array(44)
  const view = new DataView(header.buffer)
  const ascii = (at: number, text: string) => { for (let i = 0; i < 4; i++) header[at + i] = text.charCodeAt(i) }
  ascii(0, "RIFF")
  view.setUint32(4, 36 + dataBytes, true)
  ascii(8, "WAVE")
  ascii(12, "fmt ")
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true) // PCM
  view.setUint16(22, channels, true)
  view.setUint32(24, SAMPLE_RATE, true)
  view.setUint32(28, SAMPLE_RATE * channels * 2, true)
  view.setUint16(32, channels * 2, true)
  view.setUint16(34, 16, true)
  ascii(36, "data")
  view.setUint32(40, dataBytes, true)
  return header
}

/**
 * Writes the total sample count into a FLAC's STREAMINFO (a piped encoder leaves it 0,
 * "unknown", and players then show no duration): 36 bits after rate, channels and depth.
 */
const patchFlacLength = (path: string, samples: number) =>
  Effect.promise(async () => {
    const file = await open(path, "r+")
    try {
      const head = new Uint8Array(26)
      await file.read(head, 0, 26, 0)
      if (String.fromCharCode(...head.subarray(0, 4)) !== "fLaC" || (head[4]! & 0x7f) !== 0) throw new Error("the FLAC encoder wrote no STREAMINFO first")
      const at = 8 + 10 + 3 // fLaC, block header, block sizes and frame sizes, then 20 bits of rate: byte 21 holds 4 bits of the count
      head[at] = (head[at]! & 0xf0) | Math.floor(samples / 2 ** 32) & 0x0f
      new DataView(head.buffer).setUint32(at + 1, samples % 2 ** 32, false)
      await file.write(head, at, 5, at)
    } finally {
      await file.close()
    }
  })

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "hush-encode-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** Counts the bytes that go through. */
const counted = <E>(samples: Stream.Stream<Uint8Array, E>, count: { bytes: number }) =>
  Stream.map(samples, (bytes) => {
    count.bytes += bytes.length
    return bytes
  })

/**
 * The encoded output of `samples` (interleaved f32 PCM at 48 kHz, as bytes). The stream's own
 * failures (E) pass through; a failing or killed encoder is a defect.
 */
export const encodeOutput = <E>(samples: Stream.Stream<Uint8Array, E>, channels: number, options: EncodeOptions): Stream.Stream<Uint8Array, E> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const ffmpeg = options.ffmpegPath
    const format = options.format
    const fed = { bytes: 0 }
    const frames = () => fed.bytes / (4 * channels)
    options.step?.open()
    const closeStep = (exit?: Exit.Exit<unknown, unknown>) =>
      options.step?.close({ "hush.format": format, "hush.audio_seconds": frames() / SAMPLE_RATE, "hush.pcm_bytes": fed.bytes }, exit)
    const dir = needsSeekableOutput(format) || options.loudness !== null ? yield* tempDir : ""

    // The encoder's input: the denoised PCM itself, or the spool read back through the gain.
    let input: { readonly args: ReadonlyArray<string>; readonly samples: Stream.Stream<Uint8Array, E> }
    if (options.loudness === null) {
      input = { args: pcmInput(channels), samples: counted(samples, fed) }
    } else {
      const spool = join(dir, "spool.flac")
      const { stderr } = yield* runToFile(ffmpeg, [
        "-hide_banner", "-nostats", "-loglevel", "info", ...pcmInput(channels),
        "-af", "ebur128=peak=true:framelog=verbose",
        "-c:a", "flac", "-sample_fmt", "s32", "-compression_level", "0", ...NO_PACKET_FLUSH, "-f", "flac", "pipe:1"
      ], counted(samples, fed), spool, 0, options, "loudness measurement")
      const measured = parseIntegratedLoudness(stderr)
      if (measured === undefined) return yield* Effect.dieMessage(`ebur128 reported no integrated loudness: ${stderr.slice(-300)}`)
      input = {
        args: [
          "-nostdin", "-protocol_whitelist", "file", "-i", `file:${spool}`,
          // resampling twice may add or drop a sample: exactly as many as were denoised
          "-af", `${levelFilter(loudnessGainDb(measured, options.loudness), format)},apad=whole_len=${frames()},atrim=end_sample=${frames()}`
        ],
        samples: Stream.empty
      }
    }

    if (format === "wav" || format === "flac") {
      const path = join(dir, `output.${format}`)
      const header = format === "wav" ? 44 : 0
      const codec = format === "wav" ? ["-c:a", "pcm_s16le", "-f", "s16le"] : ["-c:a", "flac", "-sample_fmt", "s16", ...NO_PACKET_FLUSH, "-f", "flac"]
      if (header > 0) yield* Effect.promise(() => writeFile(path, new Uint8Array(header), { mode: 0o600 }))
      const { written } = yield* runToFile(ffmpeg, [...QUIET, ...input.args, ...codec, "pipe:1"], input.samples, path, header, options, `${format} encoder`)
      if (format === "wav") {
        yield* Effect.promise(async () => {
          const file = await open(path, "r+")
          try {
            await file.write(wavHeader(channels, written), 0, 44, 0)
          } finally {
            await file.close()
          }
        })
      } else {
        yield* patchFlacLength(path, frames())
      }
      closeStep()
      return fileStream(path)
    }
    const kbps = options.mp3BitrateKbps
    if (format === "mp3" && options.loudness === null && encodesInProcess(kbps, channels, options.audioSeconds)) {
      return encodeMp3(input.samples, channels, kbps, options.onWritten).pipe(
        Stream.ensuringWith((exit) => Effect.sync(() => closeStep(exit)))
      )
    }
    const encoder = yield* spawnChild(ffmpeg, [...QUIET, ...input.args, ...codecArgs(format, options.mp3BitrateKbps), "pipe:1"], options.childLimits, {
      stdoutChunkBytes: ENCODED_CHUNK_BYTES
    })
    const feeder = yield* Effect.forkScoped(feed(encoder.stdin, input.samples, options.onWritten))
    // The output ends once the encoder has written everything and its input side ended well.
    return Stream.merge(encoder.stdout, Stream.drain(Stream.fromEffect(Fiber.join(feeder)))).pipe(
      Stream.concat(Stream.drain(Stream.fromEffect(checkExit(ffmpeg, encoder, `${format} encoder`).pipe(
        Effect.onExit((exit) => Effect.sync(() => closeStep(exit)))
      ))))
    )
  }))
