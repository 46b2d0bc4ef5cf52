/**
 * The inputs the pipeline decodes itself, without a decoding ffmpeg (issue 16: each ffmpeg
 * start costs ~60 ms of CPU and a fork of the server, which dominate short jobs): a RIFF WAV of
 * 16-, 24- or 32-bit integer or 32-bit float PCM, mono or stereo, at the model's rate. Anything
 * else (another rate, more channels, an unusual layout, RF64, a compressed codec) goes to
 * ffmpeg. The samples are those ffmpeg's decoder gives (pipeline.ts, `decodeArgs`), bit for bit:
 *   - integers become floats as libswresample converts them: s16 × 2⁻¹⁵, s24 × 2⁻²³, s32
 *     rounded to a float then × 2⁻³¹ (powers of two: no further rounding); floats are copied;
 *   - the chunks are walked as ffmpeg's wav demuxer walks a pipe: every chunk before the first
 *     "data" is skipped (padded to an even offset); a data size of 0 or 0xFFFFFFFF reads to the
 *     end; after the data, further chunks are skipped and a further "data" chunk read as well;
 *   - a partial sample frame at a data chunk's end is dropped, as the PCM decoder drops it;
 *   - `-t` (maxInputSeconds) keeps round(seconds × rate) frames, with seconds to the millisecond.
 * test/adapters/rnnoise/wav-input.test.ts compares the two on crafted files.
 */

import { concatBytes, riffTag } from "./pcm.js"

export type WavEncoding = "s16" | "s24" | "s32" | "f32"

export interface PlainWav {
  readonly channels: 1 | 2
  readonly encoding: WavEncoding
  /** Where the first data chunk's samples start. */
  readonly dataOffset: number
  /** The first data chunk's size; undefined: up to the end of the input. */
  readonly dataBytes: number | undefined
}

/** Past this many bytes without a "data" chunk, the input is left to ffmpeg. */
export const MAX_WAV_HEADER = 64 * 1024

const PCM = 1
const IEEE_FLOAT = 3
const EXTENSIBLE = 0xfffe
/** The channel masks whose layout ffmpeg keeps as it is (mono is front centre, stereo FL+FR); 0: unspecified. */
const PLAIN_MASKS: { readonly [channels: number]: ReadonlyArray<number> } = { 1: [0, 0x4], 2: [0, 0x3] }

const bytesPer: { readonly [encoding in WavEncoding]: number } = { s16: 2, s24: 3, s32: 4, f32: 4 }

/** The encoding a `fmt ` chunk announces, when it is one read here. */
const encodingOf = (view: DataView, at: number, size: number, sampleRate: number): { channels: 1 | 2; encoding: WavEncoding } | undefined => {
  if (size < 16) return undefined
  let format = view.getUint16(at, true)
  const channels = view.getUint16(at + 2, true)
  const rate = view.getUint32(at + 4, true)
  const blockAlign = view.getUint16(at + 12, true)
  const bits = view.getUint16(at + 14, true)
  if (format === EXTENSIBLE) {
    if (size < 40 || view.getUint16(at + 16, true) < 22) return undefined
    const validBits = view.getUint16(at + 18, true)
    const mask = view.getUint32(at + 20, true)
    if ((validBits !== 0 && validBits !== bits) || !(PLAIN_MASKS[channels] ?? []).includes(mask)) return undefined
    // the sub-format GUID: the format tag, then the fixed tail 00000000-0010-8000-00aa00389b71
    const guidTail = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71]
    if (guidTail.some((b, i) => view.getUint8(at + 26 + i) !== b)) return undefined
    format = view.getUint16(at + 24, true)
  }
  if (channels !== 1 && channels !== 2) return undefined
  if (rate !== sampleRate) return undefined
  const encoding: WavEncoding | undefined = format === PCM
    ? (bits === 16 ? "s16" : bits === 24 ? "s24" : bits === 32 ? "s32" : undefined)
    : format === IEEE_FLOAT && bits === 32 ? "f32" : undefined
  if (encoding === undefined || blockAlign !== channels * bytesPer[encoding]) return undefined
  return { channels, encoding }
}

/**
 * ffmpeg looks into 16-bit PCM for a compressed bitstream carried as samples (its wav demuxer's
 * S/PDIF check over the first 64 KiB, its codec probe over the first 32 packets of 4 KiB) and
 * decodes such a file as AC-3 or DTS. The sync words that mark S/PDIF bursts (IEC 61937) and DTS
 * streams (every byte order) anywhere in that window send the input to ffmpeg; so, rarely, does
 * audio that happens to hold one. The mp3/AAC/AC-3 probes need several whole, chained frames,
 * which audio samples do not make.
 */
export const BITSTREAM_WINDOW = 128 * 1024
const SYNC_WORDS = [
  [0x72, 0xf8, 0x1f, 0x4e], [0xf8, 0x72, 0x4e, 0x1f], // IEC 61937 Pa Pb
  [0x7f, 0xfe, 0x80, 0x01], [0xfe, 0x7f, 0x01, 0x80], [0x1f, 0xff, 0xe8, 0x00], [0xff, 0x1f, 0x00, 0xe8] // DTS
].map((word) => Buffer.from(word))

// Buffer's indexOf, native: 0.06–0.08 ms over 128 KiB of 16-bit audio against 1.4–1.6 ms for a JS loop (measured here)
const holdsSyncWord = (bytes: Uint8Array) => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return SYNC_WORDS.some((word) => buffer.indexOf(word) >= 0)
}

/**
 * Whether `head` (the input's first bytes; `ended`: all of it) starts a WAV read here: its
 * format, "more" when more bytes are needed to know, undefined when ffmpeg must decode it.
 */
export const sniffPlainWav = (head: Uint8Array, sampleRate: number, ended: boolean): PlainWav | "more" | undefined => {
  const more = ended ? undefined : "more"
  if (head.length < 12) return more
  if (riffTag(head, 0) !== "RIFF" || riffTag(head, 8) !== "WAVE") return undefined
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  let found: { channels: 1 | 2; encoding: WavEncoding } | undefined
  let sawFormat = false
  let at = 12
  while (at + 8 <= head.length && at <= MAX_WAV_HEADER) {
    const id = riffTag(head, at)
    const size = view.getUint32(at + 4, true)
    if (id === "data") {
      if (found === undefined) return undefined
      const dataOffset = at + 8
      const dataBytes = size === 0 || size === 0xffff_ffff ? undefined : size
      if (found.encoding === "s16") {
        const window = Math.min(dataBytes ?? Infinity, BITSTREAM_WINDOW)
        if (head.length - dataOffset < window && !ended) return "more"
        if (holdsSyncWord(head.subarray(dataOffset, dataOffset + window))) return undefined
      }
      return { ...found, dataOffset, dataBytes }
    }
    const next = at + 8 + size
    if (id === "fmt " && !sawFormat) {
      // ffmpeg reads the first format chunk only
      if (next > head.length) return head.length > MAX_WAV_HEADER ? undefined : more
      sawFormat = true
      found = encodingOf(view, at + 8, size, sampleRate)
      if (found === undefined) return undefined
    }
    at = next + (next & 1)
  }
  return head.length > MAX_WAV_HEADER || at > MAX_WAV_HEADER ? undefined : more
}

/**
 * Turns the input's bytes, from its first byte, into interleaved float sample frames. Memory:
 * at most one partial frame and one partial chunk header are carried between pushes.
 */
export class WavSamples {
  /** Sample frames produced so far. */
  frames = 0
  /** True once nothing more will be produced (the cap is reached): the input need not be read further. */
  done = false
  private position = 0
  /** Bytes of the current data chunk still to read (Infinity: to the end); 0 while between chunks. */
  private dataLeft = 0
  /** Bytes of a skipped chunk still to skip. */
  private skipLeft = 0
  private carry = new Uint8Array(0)
  /** Until the first data chunk starts (its size was read with the header). */
  private beforeData = true
  private readonly frameBytes: number

  constructor(readonly format: PlainWav, private readonly maxFrames = Infinity) {
    this.frameBytes = format.channels * bytesPer[format.encoding]
    this.skipLeft = format.dataOffset
    if (maxFrames <= 0) this.done = true
  }

  push(input: Uint8Array): Float32Array {
    const pieces: Array<Float32Array> = []
    let bytes = input
    while (bytes.length > 0 && !this.done) {
      if (this.skipLeft > 0) {
        const n = Math.min(this.skipLeft, bytes.length)
        this.skipLeft -= n
        this.position += n
        bytes = bytes.subarray(n)
        if (this.skipLeft === 0 && this.beforeData) {
          this.beforeData = false
          this.dataLeft = this.format.dataBytes ?? Infinity
          if (this.dataLeft === 0) this.endOfData()
        }
        continue
      }
      if (this.dataLeft > 0) {
        const n = Math.min(this.dataLeft, bytes.length)
        pieces.push(this.samples(bytes.subarray(0, n)))
        this.dataLeft -= n
        this.position += n
        bytes = bytes.subarray(n)
        if (this.dataLeft === 0) this.endOfData()
        continue
      }
      // between chunks: an 8-byte header (tag, size), perhaps split over pushes
      const need = 8 - this.carry.length
      const n = Math.min(need, bytes.length)
      this.carry = concatBytes(this.carry, bytes.subarray(0, n))
      this.position += n
      bytes = bytes.subarray(n)
      if (this.carry.length < 8) continue
      const size = new DataView(this.carry.buffer, this.carry.byteOffset, 8).getUint32(4, true)
      const isData = riffTag(this.carry, 0) === "data"
      this.carry = new Uint8Array(0)
      if (isData) {
        this.dataLeft = size
        if (size === 0) this.endOfData()
      } else {
        // skipped to an even offset, as ffmpeg's wav_seek_tag does
        this.skipLeft = size + ((this.position + size) & 1)
      }
    }
    return joinFloats(pieces)
  }

  /** A partial frame at a data chunk's end is dropped; the walk goes on to the next chunk header. */
  private endOfData() {
    this.carry = new Uint8Array(0)
  }

  /** The whole frames of `bytes` (after any carried partial frame), converted, up to the cap. */
  private samples(bytes: Uint8Array): Float32Array {
    const all = this.carry.length === 0 ? bytes : concatBytes(this.carry, bytes)
    let frames = Math.floor(all.length / this.frameBytes)
    const whole = frames * this.frameBytes
    this.carry = all.slice(whole)
    if (this.frames + frames >= this.maxFrames) {
      frames = this.maxFrames - this.frames
      this.done = true
    }
    this.frames += frames
    return convert(all.subarray(0, frames * this.frameBytes), this.format.encoding)
  }
}

const joinFloats = (pieces: ReadonlyArray<Float32Array>): Float32Array => {
  if (pieces.length === 1) return pieces[0]!
  const out = new Float32Array(pieces.reduce((n, p) => n + p.length, 0))
  pieces.reduce((at, p) => (out.set(p, at), at + p.length), 0)
  return out
}

/** Little-endian samples to floats, as libswresample converts them. */
const convert = (bytes: Uint8Array, encoding: WavEncoding): Float32Array => {
  const n = bytes.length / bytesPer[encoding]
  const out = new Float32Array(n)
  if (encoding === "f32") {
    // copied as bytes: a NaN keeps its bits (this module assumes a little-endian host, as the pipeline does)
    new Uint8Array(out.buffer).set(bytes)
    return out
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (encoding === "s16") {
    for (let i = 0; i < n; i++) out[i] = view.getInt16(2 * i, true) / 32768
  } else if (encoding === "s24") {
    for (let i = 0; i < n; i++) {
      const at = 3 * i
      out[i] = ((view.getInt8(at + 2) << 16) | (view.getUint8(at + 1) << 8) | view.getUint8(at)) / 8388608
    }
  } else {
    // Float32Array stores round the int32 to the nearest float (ties to even), as cvtdq2ps does; the scale is exact
    for (let i = 0; i < n; i++) out[i] = Math.fround(view.getInt32(4 * i, true)) / 2147483648
  }
  return out
}
