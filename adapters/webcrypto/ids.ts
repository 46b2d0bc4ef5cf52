/**
 * Random ids and key secrets from the Web Crypto API (`globalThis.crypto`), present on
 * Node 20, Deno and Bun alike.
 */
import { encodeBase32LowerCaseNoPadding } from "@oslojs/encoding"
import { Layer } from "effect"
import { IdGenerator } from "../../core/ports/ids.js"

const randomBase32 = (bytes: number) => {
  const buffer = new Uint8Array(bytes)
  globalThis.crypto.getRandomValues(buffer)
  return encodeBase32LowerCaseNoPadding(buffer)
}

/** 15 random bytes = 120 bits (24 base32 characters) per id. */
export const randomId = (prefix: string) => `${prefix}_${randomBase32(15)}`

/** Ids by `randomId`; 32 random bytes = 256 bits per secret. */
export const RandomIds = Layer.succeed(IdGenerator, {
  next: randomId,
  secret: () => randomBase32(32)
})
