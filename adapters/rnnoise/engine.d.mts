import type { AdaptiveParams } from "./mix.mjs"

/** RNNoise consumes and produces 10 ms frames at 48 kHz. */
export declare const SAMPLE_RATE: 48000
export declare const FRAME_SIZE: 480
/** Output lags input by this many samples with the newer weights (measured in test/adapters/rnnoise/engine.test.ts). */
export declare const MODEL_DELAY: 960
/** The models the engine runs: RNNoise (newer weights) and GTCRN (gtcrn.mjs). */
export type EngineModel = "rnnoise" | "gtcrn"
/** Each model's delay in samples, a whole number of frames. */
export declare const MODEL_DELAYS: { readonly [model in EngineModel]: number }
/** The hum stage's look-ahead (hum.mjs): what RNNoise gets is delayed by this much (0.6 s). */
export declare const HUM_DELAY: number
/** Output lags input inside a Denoiser by at most this much, whatever the model (trimmed: its output is aligned with its input). */
export declare const LATENCY: number

/** The low-level API of the Emscripten module, as used here. */
export interface RnnoiseModule {
  readonly HEAPF32: Float32Array
  readonly calledRun?: boolean
  _malloc(bytes: number): number
  _free(pointer: number): void
  _rnnoise_create(model: number): number
  _rnnoise_destroy(state: number): void
  /** Denoises one frame of 480 floats in the 16-bit range (in and out may be the same buffer); answers the voice probability. */
  _rnnoise_process_frame(state: number, out: number, input: number): number
}

/** The thread's WebAssembly instance, built on first use (about 15 ms). */
export declare const rnnoiseModule: () => RnnoiseModule
/** The thread's instance of `model`: GTCRN behind RNNoise's API (gtcrn.mjs). */
export declare const modelModule: (model: EngineModel) => RnnoiseModule

/**
 * Streaming denoiser for `channels` interleaved channels of floats in −1…1. `push` whole
 * sample frames (a multiple of `channels` values); each call answers the output that is
 * ready, and `end` the rest, so that the concatenated output is exactly as long as the input
 * and aligned with it. `close` frees the model's memory.
 */
export declare class Denoiser {
  readonly channels: number
  /**
   * `strength` 1 (default): the model alone; 0…1: a fixed dry/wet mix; null: the adaptive
   * default (mix.mjs). `observe` sees each output frame of each channel before and after
   * mixing (16-bit range; the bench's hook).
   */
  constructor(
    channels: number,
    strength?: number | null,
    mixParams?: Partial<AdaptiveParams>,
    observe?: (channel: number, dry: Float32Array, wet: Float32Array, vad: number, stage: "before" | "after") => void,
    model?: EngineModel
  )
  push(input: Float32Array): Float32Array
  end(): Float32Array
  /**
   * As `push`, writing into `out` from sample frame `at`; answers the sample frames written.
   * `out` may be `input` itself (from 0, on a fresh denoiser): output never overtakes input.
   */
  pushInto(input: Float32Array, out: Float32Array, at: number): number
  /** As `end`, writing into `out` from sample frame `at`; answers the sample frames written. */
  endInto(out: Float32Array, at: number): number
  close(): void
}

/**
 * Denoises, in place, a chunk cut from a longer recording: `pcm` holds `skip` sample frames
 * of warm-up (audio just before the chunk, whose output is discarded), the chunk's `take`
 * sample frames, then look-ahead (audio just after it, at least LATENCY when there is
 * any) so that the chunk's last output samples are computed from the real audio that
 * follows, not silence. Answers the chunk's output: a view of `pcm`.
 */
export declare const denoiseChunk: (pcm: Float32Array, channels: number, skip: number, take: number, strength?: number | null, model?: EngineModel) => Float32Array
