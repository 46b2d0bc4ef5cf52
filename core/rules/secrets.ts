/**
 * Secrets of the dashboard: session ids, e-mail link tokens and OAuth states are 256 random
 * bits in lowercase base32 (IdGenerator.secret); only their SHA-256 is stored. The CSRF token
 * is derived from the session secret, so it belongs to that session and nothing else.
 */
import { hmac } from "@oslojs/crypto/hmac"
import { sha256, SHA256 } from "@oslojs/crypto/sha2"
import { constantTimeEqual } from "@oslojs/crypto/subtle"
import { encodeBase64urlNoPadding, encodeHexLowerCase } from "@oslojs/encoding"

/**
 * SHA-256 and HMAC-SHA256 as every hash and MAC of the core computes them. The services take
 * the runtime's (the `Digests` port: native where the runtime has them); these portable ones
 * are the default, and what a pure caller without a context (a test, a script) gets.
 */
export interface DigestFunctions {
  readonly sha256: (data: Uint8Array) => Uint8Array
  readonly hmacSha256: (key: Uint8Array, data: Uint8Array) => Uint8Array
}

export const portableDigests: DigestFunctions = {
  sha256,
  hmacSha256: (key, data) => hmac(SHA256, key, data)
}

const SECRET_PATTERN = /^[a-z2-7]{52}$/
const encoder = new TextEncoder()

/** The text's UTF-8 bytes: what every hash and MAC of the core reads. */
export const utf8 = (text: string): Uint8Array => encoder.encode(text)

export const isWellFormedSecret = (value: string): boolean => SECRET_PATTERN.test(value)

/** Lowercase hex SHA-256 of the text: how every secret is kept at rest. */
export const sha256Hex = (text: string, digests: DigestFunctions = portableDigests): string =>
  encodeHexLowerCase(digests.sha256(utf8(text)))

export const csrfTokenOf = (sessionSecret: string, digests: DigestFunctions = portableDigests): string =>
  encodeBase64urlNoPadding(digests.hmacSha256(utf8(sessionSecret), utf8("hush csrf v1")))

/** Equality in time independent of where the strings differ. */
export const sameSecret = (a: string, b: string): boolean => {
  const x = utf8(a)
  const y = utf8(b)
  return x.length === y.length && constantTimeEqual(x, y)
}
