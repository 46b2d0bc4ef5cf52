import type { EngineModel } from "./engine.mjs"

/**
 * Byte-level helpers between ffmpeg and the engine: the WAV header ffmpeg writes in front of
 * the decoded PCM (it is how we learn the channel count), bytes → whole float sample frames,
 * and the cutting of a PCM stream into overlapping chunks for parallel denoising.
 */

export interface WavFormat {
  readonly formatTag: number
  readonly channels: number
  readonly sampleRate: number
  readonly bitsPerSample: number
  /** Where the sample data starts. */
  readonly dataOffset: number
}

const MAX_HEADER = 64 * 1024
const WAVE_FORMAT_IEEE_FLOAT = 3
const WAVE_FORMAT_EXTENSIBLE = 0xfffe

/** A RIFF chunk's four-letter tag at `at`. */
export const riffTag = (bytes: Uint8Array, at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!)

export const concatBytes = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/** The header when `bytes` hold all of it; "more" when more bytes are needed. */
export const parseWavHeader = (bytes: Uint8Array): WavFormat | "more" => {
  if (bytes.length < 12) return "more"
  if (!["RIFF", "RF64"].includes(riffTag(bytes, 0)) || riffTag(bytes, 8) !== "WAVE") throw new Error("the decoder did not write a WAV header")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let fmt: Omit<WavFormat, "dataOffset"> | undefined
  let at = 12
  // ffmpeg writes to a pipe with unknown sizes; chunks before "data" have real ones.
  while (at + 8 <= bytes.length) {
    const id = riffTag(bytes, at)
    const size = view.getUint32(at + 4, true)
    if (id === "data") {
      if (fmt === undefined) throw new Error("the decoder's WAV header has no format chunk")
      return { ...fmt, dataOffset: at + 8 }
    }
    if (at + 8 + size > bytes.length) break
    if (id === "fmt ") {
      fmt = {
        formatTag: view.getUint16(at + 8, true),
        channels: view.getUint16(at + 10, true),
        sampleRate: view.getUint32(at + 12, true),
        bitsPerSample: view.getUint16(at + 22, true)
      }
    }
    at += 8 + size + (size % 2)
  }
  if (bytes.length > MAX_HEADER) throw new Error("the decoder's WAV header is too long")
  return "more"
}

/** Whether the header announces what the decoder was asked for: 32-bit float at `sampleRate`. */
export const isFloatPcm = (format: WavFormat, sampleRate: number) =>
  (format.formatTag === WAVE_FORMAT_IEEE_FLOAT || format.formatTag === WAVE_FORMAT_EXTENSIBLE) &&
  format.bitsPerSample === 32 && format.sampleRate === sampleRate && format.channels >= 1

/**
 * Turns arbitrary byte chunks of little-endian f32 PCM into Float32Arrays of whole sample
 * frames (every channel of an instant), carrying the incomplete rest to the next chunk.
 */
export class FloatFrames {
  private carry = new Uint8Array(0)
  /** Sample frames (per channel) produced so far. */
  samples = 0

  constructor(readonly channels: number) {}

  push(bytes: Uint8Array): Float32Array {
    const frameBytes = 4 * this.channels
    if (this.carry.length === 0 && bytes.byteOffset % 4 === 0) {
      // The usual case: a view, no copy (a pipe read is a fresh buffer nobody else writes).
      const usable = bytes.length - (bytes.length % frameBytes)
      this.carry = bytes.slice(usable)
      this.samples += usable / frameBytes
      return new Float32Array(bytes.buffer, bytes.byteOffset, usable / 4)
    }
    const total = this.carry.length + bytes.length
    const usable = total - (total % frameBytes)
    const out = new Uint8Array(usable)
    const fromCarry = Math.min(this.carry.length, usable)
    out.set(this.carry.subarray(0, fromCarry))
    out.set(bytes.subarray(0, usable - fromCarry), fromCarry)
    const rest = new Uint8Array(total - usable)
    rest.set(this.carry.subarray(fromCarry))
    rest.set(bytes.subarray(usable - fromCarry), this.carry.length - fromCarry)
    this.carry = rest
    this.samples += usable / frameBytes
    return new Float32Array(out.buffer, 0, usable / 4)
  }

  /** Bytes left over that do not make a whole sample frame (0 for well-formed PCM). */
  get leftover(): number {
    return this.carry.length
  }
}

/** One chunk to denoise on its own: see `denoiseChunk` in engine.ts. */
export interface ChunkTask {
  readonly pcm: Float32Array
  readonly channels: number
  readonly skip: number
  readonly take: number
  /** 1: the model alone; 0…1: a fixed mix; null: the adaptive default (mix.mjs). */
  readonly strength?: number | null | undefined
  /** The engine's model (engine.mjs); RNNoise when absent. */
  readonly model?: EngineModel | undefined
}

const owners = new WeakMap<ArrayBufferLike, BufferBank>()

/**
 * Chunk buffers for reuse. A chunk's buffer lives for seconds (cut, denoised on a thread,
 * encoded), long enough to outlive young-generation GCs: left to the GC, these buffers pile
 * up in the old generation (tens of MB) until a full collection.
 */
export class BufferBank {
  private readonly free: Array<ArrayBuffer> = []

  constructor(readonly bytes: number, readonly keep: number) {}

  take(): ArrayBuffer {
    return this.free.pop() ?? new ArrayBuffer(this.bytes)
  }

  /** Marks `buffer` as this bank's (a buffer back from a worker thread is a new object). */
  own(buffer: ArrayBufferLike): void {
    if (buffer.byteLength === this.bytes) owners.set(buffer, this)
  }

  give(buffer: ArrayBuffer): void {
    if (this.free.length < this.keep) this.free.push(buffer)
  }
}

/** Hands a buffer back to the bank that owns it once nothing reads it any more; others are left to the GC. */
export const recycle = (buffer: ArrayBufferLike): void => {
  const bank = owners.get(buffer)
  if (bank === undefined) return
  owners.delete(buffer)
  bank.give(buffer as ArrayBuffer)
}

/**
 * Cuts interleaved PCM into chunks of `body` sample frames, each preceded by `warmup` frames
 * of the audio before it and followed by `lookahead` frames of the audio after it. Memory:
 * one chunk being filled; full chunks take their buffers from `bank`.
 */
export class ChunkCutter {
  private buffer: Float32Array
  private filled = 0 // sample frames in buffer
  private bodyStart = 0 // where the current chunk's body starts in buffer

  constructor(
    readonly channels: number,
    readonly body: number,
    readonly warmup: number,
    readonly lookahead: number,
    private readonly bank = new BufferBank((warmup + body + lookahead) * channels * 4, 0)
  ) {
    if (warmup > body) throw new Error("the warm-up cannot be longer than a chunk")
    if (bank.bytes !== (warmup + body + lookahead) * channels * 4) throw new Error("the bank's buffers do not fit a chunk")
    this.buffer = new Float32Array(bank.take(), 0, (body + lookahead) * channels)
  }

  push(samples: Float32Array): Array<ChunkTask> {
    const tasks: Array<ChunkTask> = []
    const channels = this.channels
    let at = 0
    const frames = samples.length / channels
    while (at < frames) {
      const capacity = this.bodyStart + this.body + this.lookahead
      const n = Math.min(capacity - this.filled, frames - at)
      this.buffer.set(samples.subarray(at * channels, (at + n) * channels), this.filled * channels)
      this.filled += n
      at += n
      if (this.filled === capacity) tasks.push(this.emit())
    }
    return tasks
  }

  end(): Array<ChunkTask> {
    if (this.filled <= this.bodyStart) return []
    const task = {
      pcm: this.buffer.slice(0, this.filled * this.channels),
      channels: this.channels,
      skip: this.bodyStart,
      take: this.filled - this.bodyStart
    }
    this.filled = this.bodyStart
    return [task]
  }

  /** Hands over the full buffer; the next chunk starts with the warm-up and look-ahead it shares. */
  private emit(): ChunkTask {
    const channels = this.channels
    const full = this.buffer
    const task = { pcm: full, channels, skip: this.bodyStart, take: this.body }
    const keepFrom = this.bodyStart + this.body - this.warmup
    this.buffer = new Float32Array(this.bank.take())
    this.buffer.set(full.subarray(keepFrom * channels, this.filled * channels))
    this.filled -= keepFrom
    this.bodyStart = this.warmup
    return task
  }
}
