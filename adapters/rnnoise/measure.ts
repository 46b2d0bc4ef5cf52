/**
 * The levels of a stored audio object, measured by decoding it (ffmpeg, 48 kHz float) into the
 * streaming LoudnessMeter: for audio this process does not see on its way to storage, the GPU
 * host's output above all (decisions.md, Denoise options: Report). Memory stays fixed whatever
 * the length; the decode is bounded in audio (`maxSeconds`), in CPU time and in wall time.
 */
import { Data, Duration, Effect, Fiber, Stream } from "effect"
import { AUDIO_DEMUXERS } from "../ffmpeg/probe.js"
import { DEFAULT_ADDRESS_SPACE_BYTES } from "../ffmpeg/process.js"
import { feed, firstError, spawnChild, unexpected } from "./child.js"
import { LoudnessMeter, type Measured, RATE } from "./loudness.js"
import { concatBytes, FloatFrames, isFloatPcm, parseWavHeader } from "./pcm.js"

/** The levels could not be measured: the caller goes on without them. */
export class MeasureFailed extends Data.TaggedError("MeasureFailed")<{ readonly message: string }> {}

export interface MeasureOptions {
  readonly ffmpegPath?: string | undefined
  /** Decoding stops after this much audio (the validated duration plus a margin). */
  readonly maxSeconds: number
  /** The output's true peak; off for an input, whose report needs its loudness only (a fraction of the cost). */
  readonly truePeak: boolean
}

/**
 * Wall time and ffmpeg's CPU time allowed per second of audio, above a fixed minute: ffmpeg
 * decodes 10 minutes of MP3 in ~0.6 s and the meter runs ~50× real time on one core, so the
 * bound is far from any honest measurement and cuts only a stuck or hostile one.
 */
const BASE_LIMIT_SECONDS = 60
const LIMIT_PER_AUDIO_SECOND = 0.2

export const measureLimitSeconds = (maxSeconds: number) => Math.ceil(BASE_LIMIT_SECONDS + LIMIT_PER_AUDIO_SECOND * maxSeconds)

const measureArgs = (maxSeconds: number) => [
  "-hide_banner", "-nostats", "-loglevel", "error",
  "-protocol_whitelist", "pipe",
  "-format_whitelist", AUDIO_DEMUXERS.join(","),
  "-i", "pipe:0",
  "-map", "0:a:0", "-vn", "-sn", "-dn",
  "-t", maxSeconds.toFixed(3),
  // mono stays mono (BS.1770 sums the channels' energies), more than two are downmixed to stereo
  "-af", `aresample=${RATE},aformat=sample_fmts=flt:sample_rates=${RATE}:channel_layouts=mono|stereo`,
  "-c:a", "pcm_f32le", "-f", "wav", "-bitexact", "pipe:1"
]

/** Decodes `input` and meters it; any failure (input, decoder, limits) is a MeasureFailed. */
export const measureLevels = <E>(input: Stream.Stream<Uint8Array, E>, options: MeasureOptions): Effect.Effect<Measured, MeasureFailed> => {
  const ffmpeg = options.ffmpegPath ?? "ffmpeg"
  const limitSeconds = measureLimitSeconds(options.maxSeconds)
  return Effect.scoped(Effect.gen(function*() {
    const child = yield* spawnChild(ffmpeg, measureArgs(options.maxSeconds), { cpuSeconds: limitSeconds, addressSpaceBytes: DEFAULT_ADDRESS_SPACE_BYTES })
    const feeder = yield* Effect.forkScoped(feed(child.stdin, input).pipe(Effect.tapErrorCause(() => child.kill)))
    let head: Uint8Array | undefined = new Uint8Array(0)
    let frames: FloatFrames | undefined
    let meter: LoudnessMeter | undefined
    yield* Stream.runForEach(child.stdout, (bytes) => Effect.sync(() => {
      if (head !== undefined) {
        head = concatBytes(head, bytes)
        const format = parseWavHeader(head)
        if (format === "more") return
        if (!isFloatPcm(format, RATE) || format.channels > 2) throw new Error(`the decoder wrote unexpected PCM: ${JSON.stringify(format)}`)
        frames = new FloatFrames(format.channels)
        meter = new LoudnessMeter(format.channels, undefined, options.truePeak)
        bytes = head.subarray(format.dataOffset)
        head = undefined
      }
      const samples = frames!.push(bytes)
      if (samples.length > 0) meter!.push(samples)
    }))
    yield* Fiber.join(feeder).pipe(Effect.mapError((error) => new MeasureFailed({ message: `reading the audio failed: ${String(error)}` })))
    const outcome = yield* child.outcome
    const fault = unexpected(ffmpeg, outcome, child.stderr())
    if (fault !== undefined) return yield* new MeasureFailed({ message: fault.message })
    if (outcome._tag === "Exited" && outcome.code !== 0) return yield* new MeasureFailed({ message: `the audio could not be decoded: ${firstError(child.stderr())}` })
    const measured = meter?.result()
    if (measured === undefined || measured.frames === 0) return yield* new MeasureFailed({ message: "the audio holds no samples" })
    return measured
  })).pipe(
    Effect.catchAllDefect((defect) => Effect.fail(new MeasureFailed({ message: defect instanceof Error ? defect.message : String(defect) }))),
    Effect.timeoutFail({
      duration: Duration.seconds(limitSeconds),
      onTimeout: () => new MeasureFailed({ message: `measuring took longer than ${limitSeconds} s` })
    })
  )
}
