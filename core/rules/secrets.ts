/**
 * Secrets of the dashboard: session ids, e-mail link tokens and OAuth states are 256 random
 * bits in lowercase base32 (IdGenerator.secret); only their SHA-256 is stored. The CSRF token
 * is derived from the session secret, so it belongs to that session and nothing else.
 */
import { hmac } from "@oslojs/crypto/hmac"
import { sha256, SHA256 } from "@oslojs/crypto/sha2"
import { constantTimeEqual } from "@oslojs/crypto/subtle"
import { encodeBase64urlNoPadding, encodeHexLowerCase } from "@oslojs/encoding"

const SECRET_PATTERN = /^[a-z2-7]{52}$/
const encoder = new TextEncoder()

/** The text's UTF-8 bytes: what every hash and MAC of the core reads. */
export const utf8 = (text: string): Uint8Array => encoder.encode(text)

export const isWellFormedSecret = (value: string): boolean => SECRET_PATTERN.test(value)

/** Lowercase hex SHA-256 of the text: how every secret is kept at rest. */
export const sha256Hex = (text: string): string => encodeHexLowerCase(sha256(utf8(text)))

export const csrfTokenOf = (sessionSecret: string): string =>
  encodeBase64urlNoPadding(hmac(SHA256, utf8(sessionSecret), utf8("hush csrf v1")))

/** Equality in time independent of where the strings differ. */
export const sameSecret = (a: string, b: string): boolean => {
  const x = utf8(a)
  const y = utf8(b)
  return x.length === y.length && constantTimeEqual(x, y)
}
