/**
 * input bytes → ffmpeg decode (48 kHz float, mono or stereo; a plain 48 kHz WAV is read here
 * instead, wav-input.ts) → RNNoise (mixed with the input
 * as `strength` says) → ffmpeg encode (encode.ts: format, loudness) → output bytes, as one Stream. Everything is pulled: a slow reader of the output slows the
 * encoder, the denoiser, the decoder and the input read in turn, so memory stays bounded
 * whatever the length (only the chunks in flight when a pool is used).
 */
import { mkdtemp, open, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Chunk, Effect, type Exit, Fiber, Option, Stream } from "effect"
import type { JobSteps } from "../../core/observability/steps.js"
import { ProviderFailure } from "../../core/ports/denoise-provider.js"
import { AUDIO_DEMUXERS } from "../ffmpeg/probe.js"
import { type ChildLimits, DEFAULT_ADDRESS_SPACE_BYTES } from "../ffmpeg/process.js"
import type { AudioReportRecord } from "../../core/domain/audio-report.js"
import { type OutputFormat } from "../../core/domain/denoise-options.js"
import { feed, firstError, spawnChild, unexpected } from "./child.js"
import { encodeOutput } from "./encode.js"
import { audioReport, LoudnessMeter } from "./loudness.js"
import { Denoiser, type EngineModel, FRAME_SIZE, LATENCY, SAMPLE_RATE } from "./engine.mjs"
import { BufferBank, ChunkCutter, concatBytes, FloatFrames, isFloatPcm, parseWavHeader, recycle } from "./pcm.js"
import type { ChunkPool } from "./pool.js"
import { resampledLength, Resampler } from "./resample.js"
import { BITSTREAM_WINDOW, MAX_WAV_HEADER, type PlainWav, sniffPlainWav, WavSamples } from "./wav-input.js"

export interface PipelineOptions {
  /** The MP3 bitrate. */
  readonly bitrateKbps: number
  /** Default 1 (the model alone); 0…1 a fixed dry/wet mix; null the adaptive default (mix.mjs). */
  readonly strength?: number | null | undefined
  /** The engine's model; RNNoise by default. */
  readonly model?: EngineModel | undefined
  /** Default mp3. */
  readonly format?: OutputFormat | undefined
  /** Integrated loudness target in LUFS; default null (level unchanged). */
  readonly loudness?: number | null | undefined
  /** The input's known duration: progress is the fraction of it denoised so far. */
  readonly durationSeconds: number
  readonly onProgress?: ((fraction: number) => Effect.Effect<void>) | undefined
  readonly ffmpegPath?: string | undefined
  /** Denoise chunks in parallel on these threads; without a pool (or with one thread) in this thread. */
  readonly pool?: ChunkPool | undefined
  /** Chunk length; by default `defaultChunkSeconds`. */
  readonly chunkSeconds?: number | undefined
  /** Audio before each chunk that the model runs on and whose output is discarded. */
  readonly warmupSeconds?: number | undefined
  /**
   * Decoding stops after this much audio (the validated duration plus a margin): whatever the
   * input object holds beyond it is never decoded, denoised nor encoded. Unbounded when absent.
   */
  readonly maxInputSeconds?: number | undefined
  /** Limits of each ffmpeg child (decoder, encoder); by default 6 CPU hours and 2 GiB. */
  readonly childLimits?: ChildLimits | undefined
  /** The job's step spans (`job.decode`, `job.denoise`, `job.encode`), marked at each step's edges; none when absent. */
  readonly steps?: JobSteps | undefined
  /** Called once the output is complete, with the levels measured on the way (decisions.md, Report). */
  readonly onReport?: ((report: AudioReportRecord) => void) | undefined
}

/**
 * The rates the decoder keeps as they are (any other becomes the nearest of them, above
 * 48 kHz 48 kHz); each is brought to the models' 48 kHz here (resample.ts), so that the
 * pipeline knows the input's rate: a 44.1 kHz input comes back at 44.1 kHz.
 */
const DECODED_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
const CD_RATE = 44100

const DEFAULT_CHILD_LIMITS: ChildLimits = { cpuSeconds: 6 * 3600, addressSpaceBytes: DEFAULT_ADDRESS_SPACE_BYTES }

export const DEFAULT_WARMUP_SECONDS = 1
/** The share of the progress bar that the denoising pass covers when a loudness pass follows. */
const LOUDNESS_FIRST_PASS_SHARE = 0.9
const MIN_CHUNK_SECONDS = 5
const MAX_CHUNK_SECONDS = 30

const QUIET = ["-hide_banner", "-nostats", "-loglevel", "error"]

export const decodeArgs = (url: string, maxSeconds: number | undefined) => [
  ...QUIET,
  ...(url.startsWith("file:") ? ["-nostdin", "-protocol_whitelist", "file"] : ["-protocol_whitelist", "pipe"]),
  "-format_whitelist", AUDIO_DEMUXERS.join(","),
  "-i", url,
  "-map", "0:a:0", "-vn", "-sn", "-dn",
  ...(maxSeconds === undefined ? [] : ["-t", maxSeconds.toFixed(3)]),
  // Keeps mono mono and stereo stereo; more channels are downmixed to stereo (all MP3 holds).
  "-af", `aformat=sample_fmts=flt:sample_rates=${DECODED_RATES.join("|")}:channel_layouts=mono|stereo`,
  // WAV rather than raw PCM: its header tells the channel count the encoder must be given.
  "-c:a", "pcm_f32le", "-f", "wav", "-bitexact", "pipe:1"
]

/**
 * Starts the decoder on `input` (a byte stream, or a spooled file's path) and reads the WAV
 * header. The PCM stream ends with the decoder's verdict: an input error, an undecodable
 * input (ProviderFailure) or no samples at all (ProviderFailure). None when the input is an
 * MP4/M4A whose index follows the data, which decodes only from a seekable file.
 */
const openDecoder = <E>(ffmpeg: string, input: Stream.Stream<Uint8Array, E> | string, options: PipelineOptions) =>
  Effect.gen(function*() {
    // Open since the input's first read (denoiseToOutput), to the decoder's verdict; the input's read is the step's own call.
    const step = options.steps?.step("job.decode")
    const span = step?.open()
    const child = yield* spawnChild(
      ffmpeg,
      decodeArgs(typeof input === "string" ? `file:${input}` : "pipe:0", options.maxInputSeconds),
      options.childLimits ?? DEFAULT_CHILD_LIMITS
    )
    // An input error kills the decoder, so that its output ends and the verdict reports the error.
    const feeder = yield* Effect.forkScoped(
      typeof input === "string"
        ? Effect.sync(() => child.stdin.end())
        : feed(child.stdin, input).pipe(
          Effect.tapErrorCause(() => child.kill),
          (feeding) => span === undefined ? feeding : Effect.withParentSpan(feeding, span)
        )
    )
    /** After the decoder's output ended: an input error, a crash (defect) or its judgement of the input. */
    const verdict = (samples: number) =>
      Effect.gen(function*() {
        yield* Fiber.join(feeder)
        const outcome = yield* child.outcome
        const stderr = child.stderr()
        const fault = unexpected(ffmpeg, outcome, stderr)
        if (fault !== undefined) return yield* Effect.die(fault)
        // Read from a pipe, such an MP4 fails with "partial file" (with exit status 0 or 1).
        const seekable = samples === 0 && typeof input !== "string" && stderr.includes("partial file")
        if (outcome._tag === "Exited" && outcome.code !== 0) {
          return { failure: `the input could not be decoded: ${firstError(stderr)}`, seekable }
        }
        return { failure: samples === 0 ? "the input holds no audio samples" : undefined, seekable }
      })
    const refuse = (message: string) => new ProviderFailure({ message, retryable: false })

    const pull = yield* Stream.toPull(child.stdout)
    let head = new Uint8Array(0)
    for (;;) {
      const next = yield* Effect.option(pull)
      if (Option.isNone(next)) {
        const { failure, seekable } = yield* verdict(0)
        if (seekable) return Option.none()
        return yield* refuse(failure ?? "the input holds no audio samples")
      }
      for (const bytes of next.value) head = concatBytes(head, bytes)
      const format = parseWavHeader(head)
      // Until a first sample arrives it is not known whether the input must be re-read.
      if (format === "more" || head.length - format.dataOffset < 4 * format.channels) continue
      if (!DECODED_RATES.includes(format.sampleRate) || !isFloatPcm(format, format.sampleRate) || format.channels > 2) {
        return yield* Effect.dieMessage(`the decoder wrote unexpected PCM: ${JSON.stringify(format)}`)
      }
      const frames = new FloatFrames(format.channels)
      const pcm = Stream.make(head.subarray(format.dataOffset)).pipe(
        Stream.concat(Stream.repeatEffectChunkOption(pull)),
        Stream.map((bytes) => frames.push(bytes)),
        Stream.filter((samples) => samples.length > 0),
        Stream.concat(Stream.drain(Stream.fromEffect(Effect.suspend(() => verdict(frames.samples)).pipe(
          Effect.flatMap(({ failure }) => failure === undefined ? Effect.void : refuse(failure)),
          Effect.onExit(closeDecodeStep(step, () => frames.samples, format.channels, format.sampleRate))
        ))))
      )
      return Option.some({ channels: format.channels, rate: format.sampleRate, pcm })
    }
  })

/** The `job.decode` step's end, with what was decoded (`frames` per channel, read at the end). */
const closeDecodeStep = (step: ReturnType<JobSteps["step"]> | undefined, frames: () => number, channels: number, rate: number = SAMPLE_RATE) =>
<A, E>(exit: Exit.Exit<A, E>) =>
  Effect.sync(() =>
    step?.close({
      "hush.audio_seconds": frames() / rate,
      "hush.channels": channels,
      "hush.sample_rate": rate,
      "hush.pcm_bytes": frames() * channels * 4
    }, exit)
  )

/**
 * The input's first bytes, read until `enough` says so, the input ends or `limit` bytes are
 * held; the rest of the input stays unread, to be pulled with `pull`.
 */
const peek = <E>(input: Stream.Stream<Uint8Array, E>, enough: (head: Uint8Array) => boolean, limit: number) =>
  Effect.gen(function*() {
    const pull = yield* Stream.toPull(input)
    let head = new Uint8Array(0)
    let ended = false
    while (!ended && head.length < limit && !enough(head)) {
      const next = yield* Effect.catchAll(Effect.map(pull, Option.some), Option.match({ onNone: () => Effect.succeed(Option.none()), onSome: Effect.fail }))
      if (Option.isNone(next)) ended = true
      else for (const bytes of next.value) head = concatBytes(head, bytes)
    }
    const rest: Stream.Stream<Uint8Array, E> = ended ? Stream.empty : Stream.repeatEffectChunkOption(pull)
    return { head, ended, pull, rest }
  })

/** The input's samples read here (wav-input.ts), as the decoder would give them: no ffmpeg. */
const readWav = <E>(
  head: Uint8Array,
  pull: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<E>>,
  ended: boolean,
  format: PlainWav,
  options: PipelineOptions
) => {
  const step = options.steps?.step("job.decode")
  step?.open()
  // `-t` to the millisecond, as decodeArgs gives it to ffmpeg
  const maxFrames = options.maxInputSeconds === undefined ? Infinity : Math.round(Number(options.maxInputSeconds.toFixed(3)) * SAMPLE_RATE)
  const wav = new WavSamples(format, maxFrames)
  // past the cap the input is not read further
  const next = Effect.suspend(() => wav.done || ended ? Effect.fail(Option.none()) : pull)
  const pcm = Stream.make(head).pipe(
    Stream.concat(Stream.repeatEffectChunkOption(next)),
    Stream.map((bytes) => wav.push(bytes)),
    Stream.filter((samples) => samples.length > 0),
    Stream.concat(Stream.drain(Stream.fromEffect(Effect.suspend(() =>
      wav.frames === 0 ? Effect.fail(new ProviderFailure({ message: "the input holds no audio samples", retryable: false })) : Effect.void
    ).pipe(
      Effect.onExit(closeDecodeStep(step, () => wav.frames, format.channels))
    ))))
  )
  return { channels: format.channels, rate: SAMPLE_RATE, pcm }
}

/** Copies the input to a private temporary file that lives as long as the scope. */
const spool = <E>(input: Stream.Stream<Uint8Array, E>) =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "hush-rnnoise-"))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    const path = join(dir, "input")
    yield* Effect.acquireUseRelease(
      Effect.promise(() => open(path, "wx", 0o600)),
      (file) => Stream.runForEach(input, (chunk) => Effect.promise(() => file.write(chunk))),
      (file) => Effect.promise(() => file.close())
    )
    return path
  })

/**
 * A job up to MAX_CHUNK_SECONDS long is one chunk, with no warm-up: the worker runs several
 * such jobs at once (apps/worker/loop.ts), and they fill the pool between them, so splitting
 * one would only add compute (a 13 s job cut in two 6.5 s halves denoised 1 s of warm-up more,
 * +8 %) and a task per piece. A longer job is split over the threads, in chunks of 5–30 s, so
 * that alone it uses every core. The extra second is headroom for the few samples the decoder
 * may give beyond the validated duration, which would otherwise make a tail chunk of their own.
 */
export const defaultChunkSeconds = (durationSeconds: number, threads: number) =>
  durationSeconds <= MAX_CHUNK_SECONDS
    ? durationSeconds + 1
    : Math.min(MAX_CHUNK_SECONDS, Math.max(MIN_CHUNK_SECONDS, durationSeconds / threads))

const framesOf = (seconds: number) => Math.max(1, Math.round((seconds * SAMPLE_RATE) / FRAME_SIZE)) * FRAME_SIZE

/** Called with each chunk of samples as it reaches the denoiser (a plain call: no Effect per chunk). */
type OnSamples = (samples: Float32Array) => void

/** In this thread: one streaming denoiser per channel. */
const denoiseInThread = <E>(pcm: Stream.Stream<Float32Array, E>, channels: number, strength: number | null, model: EngineModel, onSamples: OnSamples) =>
  Stream.unwrapScoped(Effect.map(
    Effect.acquireRelease(Effect.sync(() => new Denoiser(channels, strength, undefined, undefined, model)), (d) => Effect.sync(() => d.close())),
    (denoiser) =>
      pcm.pipe(
        Stream.map((samples) => {
          onSamples(samples)
          return denoiser.push(samples)
        }),
        Stream.concat(Stream.sync(() => denoiser.end()))
      )
  ))

/**
 * On the pool: chunks in order, at most `pool.size` denoising at once. Chunk boundaries are
 * frame-aligned, so that after its warm-up a chunk's model sees the same frames as a single
 * pass would; the look-ahead lets its last samples see the audio that follows.
 */
const denoiseInChunks = <E>(pcm: Stream.Stream<Float32Array, E>, channels: number, pool: ChunkPool, options: PipelineOptions, onSamples: OnSamples) => {
  const chunk = framesOf(options.chunkSeconds ?? defaultChunkSeconds(options.durationSeconds, pool.size))
  const warmup = Math.min(chunk, framesOf(options.warmupSeconds ?? DEFAULT_WARMUP_SECONDS))
  const lookahead = LATENCY + FRAME_SIZE
  const strength = options.strength === undefined ? 1 : options.strength
  return Stream.suspend(() => {
    // Enough buffers for the chunks in flight: being cut, on the threads, awaiting their
    // turn, being encoded. Returned by `recycle` once the encoder has them.
    const bank = new BufferBank((warmup + chunk + lookahead) * channels * 4, 2 * pool.size + 2)
    const cutter = new ChunkCutter(channels, chunk, warmup, lookahead, bank)
    return pcm.pipe(
      Stream.mapConcat((samples) => {
        onSamples(samples)
        return cutter.push(samples)
      }),
      Stream.concat(Stream.suspend(() => Stream.fromIterable(cutter.end()))),
      Stream.mapEffect((task) => Effect.tap(pool.run({ ...task, strength, model: options.model ?? "rnnoise" }), (out) => bank.own(out.buffer)), { concurrency: pool.size })
    )
  })
}

/** The `job.denoise` step: from the first samples that reach the denoiser to the last denoised ones. */
const withDenoiseStep = <E>(
  pcm: Stream.Stream<Float32Array, E>,
  channels: number,
  options: PipelineOptions,
  denoise: (pcm: Stream.Stream<Float32Array, E>, onSamples: OnSamples) => Stream.Stream<Float32Array, E>
): Stream.Stream<Float32Array, E> => {
  const steps = options.steps
  if (steps === undefined) return denoise(pcm, () => {})
  return Stream.suspend(() => {
    const step = steps.step("job.denoise")
    let values = 0
    const denoised = denoise(pcm, (samples) => {
      if (values === 0) step.open()
      values += samples.length
    })
    return Stream.concat(denoised, Stream.execute(Effect.sync(() =>
      step.close({
        "hush.audio_seconds": values / channels / SAMPLE_RATE,
        "hush.channels": channels,
        "hush.threads": options.pool?.size ?? 1
      })
    )))
  })
}

/** Denoised interleaved PCM, as long as the input; reports progress as it goes. */
export const denoisePcm = <E>(pcm: Stream.Stream<Float32Array, E>, channels: number, options: PipelineOptions) => {
  const denoised = withDenoiseStep(pcm, channels, options, (input, onSamples) =>
    options.pool !== undefined && options.pool.size > 1
      ? denoiseInChunks(input, channels, options.pool, options, onSamples)
      : denoiseInThread(input, channels, options.strength === undefined ? 1 : options.strength, options.model ?? "rnnoise", onSamples))
  const onProgress = options.onProgress
  if (onProgress === undefined) return denoised
  // With a loudness target, a second pass (gain, limiter, encoder) follows the denoising.
  const share = options.loudness === undefined || options.loudness === null ? 1 : LOUDNESS_FIRST_PASS_SHARE
  const expected = Math.max(1, options.durationSeconds * SAMPLE_RATE) / share
  return Stream.suspend(() => {
    let done = 0
    let reported = 0
    return Stream.tap(denoised, (samples) => {
      done += samples.length / channels
      const fraction = Math.min(1, done / expected)
      if (fraction - reported < 0.001) return Effect.void
      reported = fraction
      return onProgress(fraction)
    })
  })
}

/**
 * The whole pipeline: see the module comment. Interrupting the stream kills every ffmpeg
 * process. `input` is run a second time (spooled to a temporary file) for an MP4 whose
 * index follows the data (over ~5 MB); it must then read the object afresh.
 */
export const denoiseToOutput = <E>(
  input: Stream.Stream<Uint8Array, E>,
  options: PipelineOptions
): Stream.Stream<Uint8Array, E | ProviderFailure> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const ffmpeg = options.ffmpegPath ?? "ffmpeg"
    // A plain WAV at the model's rate is read here: one ffmpeg start fewer per job (issue 16).
    // the decode step starts with the input's first read, which is its child (the storage call's span)
    const decodeSpan = options.steps?.step("job.decode").open()
    const peeked = peek(input, (bytes) => sniffPlainWav(bytes, SAMPLE_RATE, false) !== "more", MAX_WAV_HEADER + BITSTREAM_WINDOW)
    const { head, ended, pull, rest } = yield* (decodeSpan === undefined ? peeked : Effect.withParentSpan(peeked, decodeSpan))
    const wav = sniffPlainWav(head, SAMPLE_RATE, ended)
    const piped = wav !== undefined && wav !== "more"
      ? Option.some(readWav(head, pull, ended, wav, options))
      : yield* openDecoder(ffmpeg, head.length === 0 ? rest : Stream.concat(Stream.make(head), rest), options)
    const decoded = Option.isSome(piped)
      ? piped.value
      : yield* Effect.flatMap(spool(input), (path) => openDecoder<never>(ffmpeg, path, options)).pipe(
        Effect.flatMap(Option.match({
          onSome: (found) => Effect.succeed(found),
          onNone: () => Effect.dieMessage("a spooled input still needed seeking")
        }))
      )
    const { channels, rate } = decoded
    // the input's own frames, counted at its rate: the output's length follows them
    let inputFrames = 0
    const counted = Stream.map(decoded.pcm, (samples) => {
      inputFrames += samples.length / channels
      return samples
    })
    const at48k = rate === SAMPLE_RATE ? counted : resampledStream(counted, channels, rate, () => inputFrames)
    const inputMeter = new LoudnessMeter(channels, undefined, false)
    const metered = Stream.map(at48k, (samples) => {
      inputMeter.push(samples)
      return samples
    })
    const outputRate = rate === CD_RATE ? CD_RATE : SAMPLE_RATE
    return encodeOutput(denoisePcm(metered, channels, options), channels, {
      format: options.format ?? "mp3",
      mp3BitrateKbps: options.bitrateKbps,
      audioSeconds: options.durationSeconds,
      loudness: options.loudness ?? null,
      outputRate,
      outputFrames: () => rate === outputRate ? inputFrames : resampledLength(inputFrames, rate, outputRate),
      ffmpegPath: ffmpeg,
      childLimits: options.childLimits ?? DEFAULT_CHILD_LIMITS,
      onWritten: (bytes) => recycle(bytes.buffer),
      onMeasured: (output, gainDb) => options.onReport?.(audioReport(inputMeter.result(), output, gainDb)),
      step: options.steps?.step("job.encode")
    })
  }))

/** `pcm` at `from` brought to 48 kHz, as long as the input (`frames` of it, known at its end). */
const resampledStream = <E>(pcm: Stream.Stream<Float32Array, E>, channels: number, from: number, frames: () => number) =>
  Stream.suspend(() => {
    const resampler = new Resampler(channels, from, SAMPLE_RATE)
    return pcm.pipe(
      Stream.map((samples) => resampler.push(samples)),
      Stream.concat(Stream.suspend(() => Stream.make(resampler.end(resampledLength(frames(), from, SAMPLE_RATE))))),
      Stream.filter((samples) => samples.length > 0)
    )
  })
