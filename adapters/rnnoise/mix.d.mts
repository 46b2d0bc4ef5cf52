export interface AdaptiveParams {
  readonly floorDb: number
  readonly snrRefDb: number
  readonly snrSlopeDb: number
  readonly maxDry: number
  readonly speechVad: number
  readonly noiseVad: number
  readonly noiseFrames: number
  readonly speechFrames: number
  readonly releaseFrames: number
  readonly maxGainDb: number
  readonly voiceNoiseDb: number
}

export declare const ADAPTIVE_DEFAULTS: AdaptiveParams

export interface Mix {
  /** Mixes one frame in place into `wet` (16-bit range); `vad` is RNNoise's voice probability for it. */
  process(dry: Float32Array, wet: Float32Array, vad: number): void
}

export declare class FixedMix implements Mix {
  readonly strength: number
  constructor(strength: number)
  process(dry: Float32Array, wet: Float32Array): void
}

export declare class AdaptiveMix implements Mix {
  constructor(params?: Partial<AdaptiveParams>)
  readonly snrDb: number
  process(dry: Float32Array, wet: Float32Array, vad: number): void
}

export declare const makeMix: (strength: number | null | undefined, params?: Partial<AdaptiveParams>) => Mix
