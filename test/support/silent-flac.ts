/**
 * FLAC files of digital silence written without an encoder, in milliseconds and a few hundred
 * KB for a day of audio: each frame is one CONSTANT subframe (11 bytes for 16,384 samples).
 * STREAMINFO's total sample count is the declared length and may say anything (`declaredSeconds`;
 * 0 means "unknown", as a streaming encoder writes it); decoders play every frame regardless.
 */
const BLOCK = 16_384

/** CRC-8 (polynomial 0x07) of a frame header, as the FLAC format defines it. */
const crc8 = (bytes: ArrayLike<number>, end: number) => {
  let crc = 0
  for (let i = 0; i < end; i++) {
    crc ^= bytes[i]!
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff
  }
  return crc
}

/** CRC-16 (polynomial 0x8005) of a whole frame. */
const crc16 = (bytes: ArrayLike<number>, end: number) => {
  let crc = 0
  for (let i = 0; i < end; i++) {
    crc ^= bytes[i]! << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}

/** A frame number in FLAC's UTF-8-like coding (up to 31 bits here). */
const frameNumber = (n: number): Array<number> => {
  if (n < 0x80) return [n]
  const bytes: Array<number> = []
  let lead = 0x80
  let room = 0x3f
  while (n > room) {
    bytes.unshift(0x80 | (n & 0x3f))
    n = Math.floor(n / 64)
    lead = (lead >> 1) | 0x80
    room >>= 1
  }
  return [lead | n, ...bytes]
}

export const silentFlac = (options: { readonly seconds: number; readonly declaredSeconds?: number; readonly sampleRate?: number }): Uint8Array => {
  const rate = options.sampleRate ?? 8_000
  const samples = Math.round(options.seconds * rate)
  const declared = Math.round((options.declaredSeconds ?? options.seconds) * rate)
  const frames = Math.ceil(samples / BLOCK)
  const out = new Uint8Array(4 + 4 + 34 + frames * 16)
  let at = 0
  out.set([0x66, 0x4c, 0x61, 0x43], at) // "fLaC"
  at += 4
  out.set([0x80, 0, 0, 34], at) // last metadata block, STREAMINFO, 34 bytes
  at += 4
  const info = new DataView(out.buffer, at, 34)
  info.setUint16(0, BLOCK)
  info.setUint16(2, BLOCK)
  // bytes 4–9: min/max frame size unknown (0)
  // sample rate (20 bits), channels − 1 (3 bits: mono), bits per sample − 1 (5 bits: 16), total samples (36 bits)
  info.setUint8(10, (rate >> 12) & 0xff)
  info.setUint8(11, (rate >> 4) & 0xff)
  info.setUint8(12, ((rate & 0x0f) << 4) | (0 << 1) | (15 >> 4))
  info.setUint8(13, ((15 & 0x0f) << 4) | (Math.floor(declared / 2 ** 32) & 0x0f))
  info.setUint32(14, declared >>> 0)
  // bytes 18–33: MD5 unknown (0)
  at += 34
  for (let frame = 0; frame < frames; frame++) {
    const blockSize = Math.min(BLOCK, samples - frame * BLOCK)
    const start = at
    // sync, fixed block size; block size from the header's end (16 bits), rate from STREAMINFO; mono, 16-bit
    const header = [0xff, 0xf8, 0x70, 0x08, ...frameNumber(frame), (blockSize - 1) >> 8, (blockSize - 1) & 0xff]
    out.set(header, at)
    at += header.length
    out[at] = crc8(out.subarray(start), at - start)
    at += 1
    out.set([0x00, 0x00, 0x00], at) // CONSTANT subframe, no wasted bits; the value 0 (16 bits)
    at += 3
    const crc = crc16(out.subarray(start), at - start)
    out.set([crc >> 8, crc & 0xff], at)
    at += 2
  }
  return out.subarray(0, at)
}
