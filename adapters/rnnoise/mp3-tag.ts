/**
 * The gapless header of an MP3 (decisions.md, Denoise options: Alignment): a first frame that
 * holds no audio but a Xing "Info" tag (frame and byte counts, a seek table) with LAME's
 * extension, whose encoder delay and padding tell a decoder how many samples to drop at each
 * end, so that it gives back exactly the input's samples (ffmpeg, foobar2000, iTunes,
 * mpg123 and most players honour it). Neither of our encoders writes one to a pipe (ffmpeg
 * writes it only to a seekable file, the WebAssembly LAME never): the encoders' frames are
 * written after a reserved frame, which is filled in once the counts are known.
 * Layout: "Mp3 info tag rev 1 specifications" (LAME project), the same that LAME writes.
 */

/** LAME's own delay at the encoder's start, in samples; a decoder adds its 529 (ffmpeg skips 576 + 529). */
export const LAME_ENCODER_DELAY = 576
const SAMPLES_PER_FRAME = 1152

const MPEG1_BITRATES = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] as const
const MPEG1_RATES = [44100, 48000, 32000] as const

/** The size of an MPEG-1 Layer III frame without its padding byte. */
export const frameBytes = (kbps: number, sampleRate: number) => Math.floor((144_000 * kbps) / sampleRate)

/** CRC-16/ARC (polynomial 0x8005, reflected), as the LAME tag uses. */
const CRC_TABLE = (() => {
  const table = new Uint16Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xa001 : c >>> 1
    table[n] = c
  }
  return table
})()
export const crc16 = (bytes: Uint8Array, crc = 0) => {
  for (let i = 0; i < bytes.length; i++) crc = (crc >>> 8) ^ CRC_TABLE[(crc ^ bytes[i]!) & 0xff]!
  return crc
}

/**
 * Follows the frames of an MPEG-1 Layer III stream as its bytes go by: how many, how many
 * bytes, the first frame's header, and the CRC of all of them (the tag's "music CRC").
 */
export class Mp3Frames {
  frames = 0
  bytes = 0
  crc = 0
  firstHeader: Uint8Array | undefined
  /** Bytes left of the current frame; 0 at a frame's start. */
  private left = 0
  private partial = new Uint8Array(0)

  push(chunk: Uint8Array) {
    this.crc = crc16(chunk, this.crc)
    this.bytes += chunk.length
    let at = 0
    while (at < chunk.length) {
      if (this.left > 0) {
        const skip = Math.min(this.left, chunk.length - at)
        this.left -= skip
        at += skip
        continue
      }
      // a header: 4 bytes, perhaps split between chunks
      const need = 4 - this.partial.length
      const piece = chunk.subarray(at, at + need)
      const header = new Uint8Array(this.partial.length + piece.length)
      header.set(this.partial)
      header.set(piece, this.partial.length)
      at += piece.length
      if (header.length < 4) {
        this.partial = header
        continue
      }
      this.partial = new Uint8Array(0)
      const length = frameLength(header)
      if (length === undefined) throw new Error(`the MP3 encoder wrote something that is not an MPEG-1 Layer III frame at byte ${this.bytes - chunk.length + at - 4}`)
      this.firstHeader ??= header
      this.frames++
      this.left = length - 4
    }
  }
}

const frameLength = (h: Uint8Array): number | undefined => {
  if (h[0] !== 0xff || (h[1]! & 0xfe) !== 0xfa) return undefined // sync, MPEG-1, Layer III
  const kbps = MPEG1_BITRATES[h[2]! >> 4]
  const rate = MPEG1_RATES[(h[2]! >> 2) & 3]
  if (kbps === undefined || kbps === 0 || rate === undefined) return undefined
  return frameBytes(kbps, rate) + ((h[2]! >> 1) & 1)
}

export interface InfoTag {
  /** The first audio frame's header: the tag frame copies its bitrate, rate and channel mode. */
  readonly firstHeader: Uint8Array
  /** Audio frames after the tag frame. */
  readonly frames: number
  /** Bytes of those frames. */
  readonly audioBytes: number
  readonly musicCrc: number
  /** The input's sample frames: what a decoder must give back. */
  readonly samples: number
  readonly kbps: number
}

/** The size of the tag frame for `kbps` at `sampleRate` (no padding byte). */
/**
 * The bitrate LAME encodes at when asked for `kbps`: the nearest of the table, the lower on a
 * tie (its FindNearestBitrate), so 100 kbps gives 96 kbps frames.
 */
export const lameBitrate = (kbps: number): number =>
  MPEG1_BITRATES.slice(1).reduce<number>((best, rate) => Math.abs(rate - kbps) < Math.abs(best - kbps) ? rate : best, 32)

/** The size of the tag frame to reserve before an encoder asked for `kbps` writes its frames. */
export const infoFrameBytes = (kbps: number, sampleRate: number) => frameBytes(lameBitrate(kbps), sampleRate)

/** The tag frame (LAME's Info frame for a constant bitrate). */
export const infoFrame = (tag: InfoTag): Uint8Array => {
  const h = tag.firstHeader
  const kbps = MPEG1_BITRATES[h[2]! >> 4]!
  const rate = MPEG1_RATES[(h[2]! >> 2) & 3]!
  const size = frameBytes(kbps, rate)
  const frame = new Uint8Array(size)
  const view = new DataView(frame.buffer)
  frame.set(h.subarray(0, 4))
  frame[1] = frame[1]! | 0x01 // no CRC
  frame[2] = frame[2]! & ~0x02 // no padding byte
  const mono = (h[3]! >> 6) === 3
  let at = 4 + (mono ? 17 : 32) // after the (empty) side information
  const ascii = (text: string) => { for (const ch of text) frame[at++] = ch.charCodeAt(0) }
  ascii("Info")
  view.setUint32(at, 0x0f, false) // frames, bytes, seek table, quality
  view.setUint32(at + 4, tag.frames, false)
  const total = size + tag.audioBytes
  view.setUint32(at + 8, total, false)
  at += 12
  // a constant bitrate: byte offsets grow linearly with time
  for (let i = 0; i < 100; i++) frame[at++] = Math.floor((i * 256) / 100)
  view.setUint32(at, 0, false) // quality
  at += 4
  ascii("LAME3.100")
  frame[at++] = 0x01 // tag revision 0, constant bitrate
  frame[at++] = 0 // lowpass unknown
  at += 4 + 2 + 2 // replay gain: none
  frame[at++] = 0 // flags, ATH type
  frame[at++] = Math.min(255, tag.kbps)
  const padding = tag.frames * SAMPLES_PER_FRAME - LAME_ENCODER_DELAY - tag.samples
  if (padding < 0 || padding > 0xfff) throw new Error(`MP3 end padding ${padding} out of range for ${tag.frames} frames and ${tag.samples} samples`)
  frame[at++] = LAME_ENCODER_DELAY >> 4
  frame[at++] = ((LAME_ENCODER_DELAY & 0x0f) << 4) | (padding >> 8)
  frame[at++] = padding & 0xff
  at += 1 + 1 + 2 // misc, MP3 gain, preset and surround
  view.setUint32(at, total, false) // music length
  view.setUint16(at + 4, tag.musicCrc, false)
  at += 6
  view.setUint16(at, crc16(frame.subarray(0, at)), false)
  return frame
}
