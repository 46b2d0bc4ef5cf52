/**
 * MP3 encoding in this process for short jobs: LAME compiled to WebAssembly
 * (`wasm-media-encoders`) instead of an ffmpeg child. An ffmpeg start costs 0.06–0.2 CPU s
 * (its 215 libraries bound at every start; the slower figure on a slower machine) and a fork
 * in the server's main thread: many short jobs paid it once each (issue 16). The WebAssembly
 * LAME makes the same audio (−80 dB apart; the same encoder delay of 1105 samples, no tag:
 * what a piped ffmpeg wrote, less its ID3 header) but takes ~1.4× the native encoder's CPU
 * (7.8 against 5.6 ms per second of audio, measured), on the main thread. So a long job,
 * where one start is nothing and the encoding is minutes of CPU, keeps ffmpeg: it encodes on
 * another core, off the thread that answers requests (`IN_PROCESS_MAX_SECONDS`).
 *
 * Memory stays bounded: each chunk of PCM is encoded in slices, and the encoder's output of a
 * chunk is handed on before the next one is read. Between slices the fiber gives the event loop
 * a turn (`setImmediate`), so that encoding never holds the main thread for more than a slice
 * (~1.5 ms): timers and requests run in between, even where the whole pipeline runs on the main
 * thread (one core: no pool) and nothing else in it waits for I/O. Effect's own `yieldNow` hands
 * over through microtasks, which let no timer or socket in.
 */
import { Effect, Exit, Stream } from "effect"
import type { WasmMediaEncoder } from "wasm-media-encoders"
import { SAMPLE_RATE } from "./engine.mjs"

type Mp3Encoder = WasmMediaEncoder<"audio/mpeg">

/** The constant bitrates LAME offers (and the library's configure accepts). */
const CBR_KBPS = [8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] as const
type CbrKbps = typeof CBR_KBPS[number]

/**
 * Jobs up to this long are encoded here. Where the two costs meet: an ffmpeg start against
 * 2.2 ms more CPU per second of audio here: 26–90 s of audio by machine (docs/architecture.md).
 */
export const IN_PROCESS_MAX_SECONDS = 60

/** Whether this encoder makes `kbps` for `channels`; anything else is left to ffmpeg. */
export const canEncode = (kbps: number, channels: number) =>
  (CBR_KBPS as ReadonlyArray<number>).includes(kbps) && (channels === 1 || channels === 2)

/** Whether a job of `audioSeconds` is encoded here (see the module comment). */
export const encodesInProcess = (kbps: number, channels: number, audioSeconds: number) =>
  audioSeconds <= IN_PROCESS_MAX_SECONDS && canEncode(kbps, channels)

/** 0.2 s of audio per call into the encoder. */
const SLICE_FRAMES = SAMPLE_RATE / 5

/**
 * Encoders between jobs: ~4.6 MB of WebAssembly memory each, and ~70 ms to make the first
 * (the module compiled); `configure` resets one for the next job. At most this many are kept.
 */
const MAX_IDLE = 4
const idle: Array<Mp3Encoder> = []

const acquire = Effect.suspend(() => {
  const kept = idle.pop()
  if (kept !== undefined) return Effect.succeed(kept)
  // loaded when first used: the module carries its WebAssembly (~0.8 MB of JavaScript)
  return Effect.promise(() => import("wasm-media-encoders").then((m) => m.createMp3Encoder()))
})

/** Kept for the next job unless it failed inside (its memory may be left in any state). */
const release = (encoder: Mp3Encoder, exit: Exit.Exit<unknown, unknown>) =>
  Effect.sync(() => {
    if ((Exit.isSuccess(exit) || Exit.isInterrupted(exit)) && idle.length < MAX_IDLE) idle.push(encoder)
  })

/** One turn of the event loop (its timers and I/O included). */
const nextTurn = Effect.async<void>((resume) => {
  const turn = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(turn))
})

/** The encoder's bytes are its own until the next call: copied out. */
const copyOut = (bytes: Uint8Array) => bytes.slice()

/**
 * The MP3 of `samples` (interleaved f32 PCM at `sampleRate`, as bytes) at `kbps`, constant bitrate.
 * `onWritten` gets each input chunk once it has been encoded (its buffer may then be reused).
 */
export const encodeMp3 = <E>(
  samples: Stream.Stream<Uint8Array, E>,
  channels: number,
  kbps: number,
  onWritten: (bytes: Uint8Array) => void = () => {},
  sampleRate: 44100 | 48000 = SAMPLE_RATE
): Stream.Stream<Uint8Array, E> =>
  Stream.unwrapScoped(Effect.map(Effect.acquireRelease(acquire, release), (encoder) => {
    if (!canEncode(kbps, channels)) throw new Error(`no in-process MP3 encoder for ${kbps} kbps and ${channels} channels`)
    encoder.configure({ sampleRate, channels: channels as 1 | 2, bitrate: kbps as CbrKbps })
    const planes = channels === 1 ? [] : [new Float32Array(SLICE_FRAMES), new Float32Array(SLICE_FRAMES)]
    const encodeSlice = (interleaved: Float32Array, from: number, frames: number) => {
      if (channels === 1) return copyOut(encoder.encode([interleaved.subarray(from, from + frames)]))
      const left = planes[0]!.subarray(0, frames)
      const right = planes[1]!.subarray(0, frames)
      for (let i = 0, j = 2 * from; i < frames; i++, j += 2) {
        left[i] = interleaved[j]!
        right[i] = interleaved[j + 1]!
      }
      return copyOut(encoder.encode([left, right]))
    }
    const encodeChunk = (bytes: Uint8Array) =>
      Effect.gen(function*() {
        if (bytes.byteLength % (4 * channels) !== 0) return yield* Effect.dieMessage(`PCM chunk of ${bytes.byteLength} bytes is not whole frames`)
        const interleaved = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
        const frames = interleaved.length / channels
        const pieces: Array<Uint8Array> = []
        let size = 0
        for (let at = 0; at < frames; at += SLICE_FRAMES) {
          yield* nextTurn
          const piece = encodeSlice(interleaved, at, Math.min(SLICE_FRAMES, frames - at))
          pieces.push(piece)
          size += piece.length
        }
        onWritten(bytes)
        return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, size)
      })
    return samples.pipe(
      Stream.mapEffect(encodeChunk),
      Stream.concat(Stream.fromEffect(Effect.sync(() => copyOut(encoder.finalize())))),
      Stream.filter((bytes) => bytes.length > 0)
    )
  }))
