/**
 * Denoised PCM → the output format, with an optional loudness target (decisions.md, Denoise
 * options: Accuracy, Alignment, Report). Memory stays bounded whatever the length:
 *   - Ogg Opus streams out of the encoder as it is made;
 *   - WAV, FLAC and MP3 are written to a temporary file first, so that their headers can hold
 *     what is known only at the end: a WAV's and a FLAC's length, an MP3's gapless header
 *     (mp3-tag.ts: its encoder delay and padding give a decoder the input's exact length);
 *   - a loudness target needs the whole recording measured before its one gain is known: the
 *     denoised audio is spooled to a temporary FLAC (24-bit) while it is measured here
 *     (loudness.ts: loudness, and what the limiter will take at any gain), then read back
 *     through that gain and a true-peak limiter with lookahead into the encoder;
 *   - a 44.1 kHz input's output is brought back to 44.1 kHz here (resample.ts), to exactly the
 *     input's length; the output's loudness, true peak and noise floor are measured on the way.
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
import { SAMPLE_RATE } from "./engine.mjs"
import { Limiter, LimiterStats, LoudnessMeter, type Measured, solveGain } from "./loudness.js"
import { infoFrame, infoFrameBytes, Mp3Frames } from "./mp3-tag.js"
import { encodeMp3, encodesInProcess } from "./mp3.js"
import { FloatFrames } from "./pcm.js"
import { Resampler } from "./resample.js"

export interface EncodeOptions {
  readonly format: OutputFormat
  /** MP3 only; Opus has its own (OUTPUT_FORMATS). */
  readonly mp3BitrateKbps: number
  /** The job's validated duration: a short MP3 is encoded in this process (mp3.ts). */
  readonly audioSeconds: number
  /** Integrated loudness target in LUFS, or null: the level is left as it is. */
  readonly loudness: number | null
  /** The output's sample rate: 48 kHz, or 44.1 kHz for a 44.1 kHz input (never for Opus). */
  readonly outputRate: number
  /** The output's exact length in sample frames at `outputRate`: the input's, asked once the input has ended. */
  readonly outputFrames: () => number
  readonly ffmpegPath: string
  readonly childLimits: ChildLimits
  /** Called with `recycle`-able chunks once they have been read (the encoder, the spool or a resampler has them). */
  readonly onWritten?: ((bytes: Uint8Array) => void) | undefined
  /** Called once the output is complete: what was measured on the audio given to the encoder, and the gain applied. */
  readonly onMeasured?: ((output: Measured, gainDb: number) => void) | undefined
  /** The `job.encode` step: from the first encoder's start (the loudness measurement's, if any) to the output's last byte made. */
  readonly step?: StepSpan | undefined
}

const QUIET = ["-hide_banner", "-nostats", "-loglevel", "error"]

/** The encoders' output is read in pieces this big, not packet by packet (child.ts, ChildOptions). */
const ENCODED_CHUNK_BYTES = 64 * 1024

/**
 * Where the limiter holds the true peak, under the −1 dBTP ceiling: our 4× oversampled
 * estimate may read a little under ffmpeg's meter, a resampling to 44.1 kHz may add a few
 * hundredths, and a lossy encoder's ripple a few tenths (measured: test/e2e/denoise-options.test.ts).
 */
const LIMIT_MARGIN_DB: { readonly [format in OutputFormat]: number } = { mp3: 1.0, opus: 1.0, wav: 0.3, flac: 0.3 }

/**
 * To a pipe ffmpeg flushes after every packet by default: an MP3 came out in one read per
 * 26 ms frame (~500 for 13 s), each a stream element, a file write and a hash update in the
 * server. Without the flushes it comes in 32 KiB pieces, the same bytes (MP3 and FLAC; the Ogg
 * muxer cuts its pages differently without them, so Opus keeps them).
 */
const NO_PACKET_FLUSH = ["-flush_packets", "0"]

/** The Ogg Opus stream (at 48 kHz: Opus has no 44.1 kHz mode; its pre-skip and last granule position make its length exact). */
const OPUS_ARGS = ["-c:a", "libopus", "-b:a", `${OUTPUT_FORMATS.opus.bitrateKbps}k`, "-f", "ogg"]
/** Bare MP3 frames: no ID3 tag in front, so that the gapless header (mp3-tag.ts) is the first frame. */
const mp3Args = (kbps: number) => ["-c:a", "libmp3lame", "-b:a", `${kbps}k`, "-id3v2_version", "0", "-write_xing", "0", ...NO_PACKET_FLUSH, "-f", "mp3"]

/**
 * LAME scales what it encodes by −0.26 dB (measured on a sine and on noise, 44.1 and 48 kHz,
 * both our encoders; decoded by ffmpeg): an MP3 is fed this much louder, so that its level is
 * the one measured here (the level left as it was, or the loudness target).
 */
const ENCODER_GAIN_DB: { readonly [format in OutputFormat]: number } = { mp3: -0.26, opus: 0, wav: 0, flac: 0 }

const pcmInput = (channels: number, rate: number) => ["-f", "f32le", "-ar", String(rate), "-ac", String(channels), "-i", "pipe:0"]

const asBytes = (samples: Float32Array) => new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength)

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

/** A canonical 44-byte header for 16-bit PCM. */
export const wavHeader = (channels: number, dataBytes: number, rate: number = SAMPLE_RATE): Uint8Array => {
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
  view.setUint32(24, rate, true)
  view.setUint32(28, rate * channels * 2, true)
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

/** Reads a finished file back as the output, after writing `head` (a header completed at the end) at its start. */
const patchAndStream = (path: string, head: Uint8Array) =>
  Effect.map(Effect.promise(async () => {
    const file = await open(path, "r+")
    try {
      await file.write(head, 0, head.length, 0)
    } finally {
      await file.close()
    }
  }), () => fileStream(path))

/** The decoded spool (f32 PCM at 48 kHz) as whole sample frames. */
const readSpool = (ffmpeg: string, path: string, channels: number, options: EncodeOptions): Stream.Stream<Float32Array> =>
  Stream.unwrapScoped(Effect.map(
    spawnChild(ffmpeg, [...QUIET, "-nostdin", "-protocol_whitelist", "file", "-i", `file:${path}`, "-c:a", "pcm_f32le", "-f", "f32le", "pipe:1"], options.childLimits),
    (child) => {
      const frames = new FloatFrames(channels)
      return child.stdout.pipe(
        Stream.map((bytes) => frames.push(bytes)),
        Stream.filter((samples) => samples.length > 0),
        Stream.concat(Stream.drain(Stream.fromEffect(checkExit(ffmpeg, child, "spool decoder"))))
      )
    }
  ))

/**
 * The stages in this process between the denoised audio and the encoder: the output's meter
 * (report), then the conversion to the output's rate, to exactly `outputFrames` frames.
 */
const toOutputRate = <E>(samples: Stream.Stream<Float32Array, E>, channels: number, meter: LoudnessMeter, options: EncodeOptions) =>
  Stream.suspend(() => {
    const resampler = options.outputRate === SAMPLE_RATE ? undefined : new Resampler(channels, SAMPLE_RATE, options.outputRate)
    const makeUp = 10 ** (-ENCODER_GAIN_DB[options.format] / 20)
    const compensate = (chunk: Float32Array) => {
      if (makeUp !== 1) for (let i = 0; i < chunk.length; i++) chunk[i]! *= makeUp
      return chunk
    }
    return samples.pipe(
      Stream.map((chunk) => {
        meter.push(chunk)
        if (resampler === undefined) return compensate(chunk)
        const out = resampler.push(chunk)
        options.onWritten?.(asBytes(chunk))
        return compensate(out)
      }),
      Stream.concat(Stream.suspend(() => resampler === undefined ? Stream.empty : Stream.make(compensate(resampler.end(options.outputFrames()))))),
      Stream.filter((chunk) => chunk.length > 0)
    )
  })

/**
 * The encoded output of `samples` (interleaved f32 PCM at 48 kHz, the denoised audio). The
 * stream's own failures (E) pass through; a failing or killed encoder is a defect.
 */
export const encodeOutput = <E>(samples: Stream.Stream<Float32Array, E>, channels: number, options: EncodeOptions): Stream.Stream<Uint8Array, E> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const ffmpeg = options.ffmpegPath
    const format = options.format
    const rate = format === "opus" ? SAMPLE_RATE : options.outputRate
    const settings = { ...options, outputRate: rate }
    const meter = new LoudnessMeter(channels)
    let gainDb = 0
    let fed = 0
    options.step?.open()
    const closeStep = (exit?: Exit.Exit<unknown, unknown>) =>
      options.step?.close({
        "hush.format": format,
        "hush.audio_seconds": fed / SAMPLE_RATE,
        "hush.sample_rate": rate,
        // the denoised PCM fed in (f32 at 48 kHz), whatever rate the output is written at
        "hush.pcm_bytes": fed * channels * 4
      }, exit)
    const measured = () => options.onMeasured?.(meter.result(), gainDb)
    const dir = yield* tempDir

    // The level stage: nothing, or (a loudness target) the spool measured, then read back through gain and limiter.
    let level: Stream.Stream<Float32Array, E>
    const counted = Stream.map(samples, (chunk) => {
      fed += chunk.length / channels
      return chunk
    })
    if (options.loudness === null) {
      level = counted
    } else {
      const spool = join(dir, "spool.flac")
      const stats = new LimiterStats()
      const analysis = new LoudnessMeter(channels, stats)
      yield* runToFile(ffmpeg, [
        ...QUIET, ...pcmInput(channels, SAMPLE_RATE),
        "-c:a", "flac", "-sample_fmt", "s32", "-compression_level", "0", ...NO_PACKET_FLUSH, "-f", "flac", "pipe:1"
      ], Stream.map(counted, (chunk) => {
        analysis.push(chunk)
        return asBytes(chunk)
      }), spool, 0, options, "loudness spool")
      const ceiling = TRUE_PEAK_CEILING_DBTP - LIMIT_MARGIN_DB[format]
      gainDb = solveGain(stats, analysis.result().integratedLufs, options.loudness, ceiling)
      const limiter = new Limiter(channels, gainDb, ceiling)
      level = readSpool(ffmpeg, spool, channels, options).pipe(
        Stream.map((chunk) => limiter.push(chunk)),
        Stream.concat(Stream.sync(() => limiter.end())),
        Stream.filter((chunk) => chunk.length > 0)
      )
    }
    const pcm = Stream.map(toOutputRate(level, channels, meter, settings), asBytes)

    if (format === "wav" || format === "flac") {
      const path = join(dir, `output.${format}`)
      const header = format === "wav" ? 44 : 0
      const codec = format === "wav" ? ["-c:a", "pcm_s16le", "-f", "s16le"] : ["-c:a", "flac", "-sample_fmt", "s16", ...NO_PACKET_FLUSH, "-f", "flac"]
      if (header > 0) yield* Effect.promise(() => writeFile(path, new Uint8Array(header), { mode: 0o600 }))
      const { written } = yield* runToFile(ffmpeg, [...QUIET, ...pcmInput(channels, rate), ...codec, "pipe:1"], pcm, path, header, options, `${format} encoder`)
      if (format === "wav") {
        yield* Effect.promise(async () => {
          const file = await open(path, "r+")
          try {
            await file.write(wavHeader(channels, written, rate), 0, 44, 0)
          } finally {
            await file.close()
          }
        })
      } else {
        yield* patchFlacLength(path, options.outputFrames())
      }
      measured()
      closeStep()
      return fileStream(path)
    }
    if (format === "mp3") {
      const kbps = options.mp3BitrateKbps
      const path = join(dir, "output.mp3")
      const reserved = infoFrameBytes(kbps, rate)
      const frames = new Mp3Frames()
      const encoded = encodesInProcess(kbps, channels, options.audioSeconds)
        ? encodeMp3(pcm, channels, kbps, options.onWritten, rate as 44100 | 48000)
        : yield* encoderStream(ffmpeg, [...QUIET, ...pcmInput(channels, rate), ...mp3Args(kbps), "pipe:1"], pcm, options, "mp3 encoder")
      yield* Effect.acquireUseRelease(
        Effect.promise(() => open(path, "w", 0o600)),
        (file) => Stream.runForEach(encoded, (bytes) => Effect.promise(async () => {
          frames.push(bytes)
          await file.write(bytes, 0, bytes.length, reserved + frames.bytes - bytes.length)
        })),
        (file) => Effect.promise(() => file.close())
      )
      if (frames.firstHeader === undefined) return yield* Effect.dieMessage("the MP3 encoder wrote no frame")
      const tag = infoFrame({
        firstHeader: frames.firstHeader, frames: frames.frames, audioBytes: frames.bytes, musicCrc: frames.crc,
        samples: options.outputFrames(), kbps
      })
      if (tag.length !== reserved) return yield* Effect.dieMessage(`the MP3 tag frame is ${tag.length} bytes, ${reserved} were reserved`)
      measured()
      closeStep()
      return yield* patchAndStream(path, tag)
    }
    const stream = yield* encoderStream(ffmpeg, [...QUIET, ...pcmInput(channels, rate), ...OPUS_ARGS, "pipe:1"], pcm, options, "opus encoder")
    return stream.pipe(Stream.ensuringWith((exit) => Effect.sync(() => {
      if (exit._tag === "Success") measured()
      closeStep(exit)
    })))
  }))

/** An encoder child fed with `pcm`: its output, ending once it exited well. */
const encoderStream = <E>(ffmpeg: string, args: ReadonlyArray<string>, pcm: Stream.Stream<Uint8Array, E>, options: EncodeOptions, what: string) =>
  Effect.gen(function*() {
    const encoder = yield* spawnChild(ffmpeg, args, options.childLimits, { stdoutChunkBytes: ENCODED_CHUNK_BYTES })
    const feeder = yield* Effect.forkScoped(feed(encoder.stdin, pcm, options.onWritten))
    // The output ends once the encoder has written everything and its input side ended well.
    return Stream.merge(encoder.stdout, Stream.drain(Stream.fromEffect(Fiber.join(feeder)))).pipe(
      Stream.concat(Stream.drain(Stream.fromEffect(checkExit(ffmpeg, encoder, what))))
    )
  })
