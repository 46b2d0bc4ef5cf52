/**
 * RFC 4648 base32, lower case, no padding: what `@oslojs/encoding`'s
 * `encodeBase32LowerCaseNoPadding` writes (test/core/rules/base32.test.ts holds them equal), with plain
 * integer arithmetic. oslo's goes through a BigInt per 5 bytes, and every request pays for
 * one id: 1.5 % of a health check's CPU (measured), for 15 bytes. The random ids
 * (adapters/webcrypto) and the ids derived from an Idempotency-Key (core/services/request-ids.ts)
 * both write theirs with it.
 */
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"

export const encodeBase32LowerCaseNoPadding = (bytes: Uint8Array): string => {
  let text = ""
  let buffer = 0
  let bits = 0
  for (let i = 0; i < bytes.length; i++) {
    buffer = ((buffer << 8) | bytes[i]!) & 0xfff // at most 12 bits are ever pending
    bits += 8
    while (bits >= 5) {
      bits -= 5
      text += ALPHABET[(buffer >>> bits) & 31]
    }
  }
  if (bits > 0) text += ALPHABET[(buffer << (5 - bits)) & 31]
  return text
}
