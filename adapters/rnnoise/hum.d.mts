export interface HumParams {
  /** Blocks (100 ms) on each side of the output's block in the estimate; the delay is lookBlocks + 1 blocks. */
  readonly lookBlocks: number
  /** Highest harmonic frequency removed, Hz. */
  readonly maxHz: number
  /** Minimal coherence (0…1) of a harmonic's block phasors over the window to count as a stable tone. */
  readonly coherence: number
  /** Coherence above which a harmonic of a family already present is removed. */
  readonly keepCoherence: number
  /** Minimal amplitude of a removed harmonic, in the caller's units. */
  readonly minAmplitude: number
  /** Stable harmonics a family (50 or 60 Hz) needs before any of its harmonics is removed. */
  readonly minHarmonics: number
  /** Largest mains frequency deviation followed, Hz. */
  readonly maxDriftHz: number
  /** Blocks count in inverse proportion to their power in the estimate (speech barely moves it). */
  readonly weighted: boolean
}

/** Samples per analysis block: 100 ms at 48 kHz. */
export declare const HUM_BLOCK: 4800
export declare const HUM_DEFAULTS: HumParams

/** Streaming mains-hum removal (50/60 Hz and harmonics), frame by frame, with a fixed delay. */
export declare class HumRemover {
  /** Output lags input by this many samples (whole blocks). */
  readonly delay: number
  constructor(frameSize?: number, params?: Partial<HumParams>)
  /** Harmonics removed in the last output block. */
  readonly active: number
  /** The mains frequency's deviation from nominal, as last estimated, Hz. */
  readonly driftHz: number
  /** The input frame, `delay` samples earlier, that the last output frame was made from. */
  readonly raw: Float32Array
  /** What follows is padding, not audio: it is left out of the estimates. */
  end(): void
  /** One input frame in; in place, the frame `delay` samples earlier without its hum. False while the delay line fills. */
  process(frame: Float32Array): boolean
}
