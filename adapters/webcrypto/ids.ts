/**
 * Random ids and key secrets from the Web Crypto API (`globalThis.crypto`), present on
 * Node 20, Deno and Bun alike.
 */
import { Layer } from "effect"
import { IdGenerator } from "../../core/ports/ids.js"
import { encodeBase32LowerCaseNoPadding } from "../../core/rules/base32.js"

/**
 * Random bytes drawn from a pool filled 4 KiB at a time: one `getRandomValues` call per ~270
 * ids instead of one per id (a request makes at least one, its request id). Each byte is used
 * once.
 */
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let used = POOL_BYTES

const randomBytes = (bytes: number): Uint8Array => {
  if (bytes > POOL_BYTES) return globalThis.crypto.getRandomValues(new Uint8Array(bytes))
  if (used + bytes > POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool)
    used = 0
  }
  const taken = pool.slice(used, used + bytes)
  used += bytes
  return taken
}

const randomBase32 = (bytes: number) => encodeBase32LowerCaseNoPadding(randomBytes(bytes))

/** 15 random bytes = 120 bits (24 base32 characters) per id. */
export const randomId = (prefix: string) => `${prefix}_${randomBase32(15)}`

/** Ids by `randomId`; 32 random bytes = 256 bits per secret. */
export const layerRandomIds = Layer.succeed(IdGenerator, {
  next: randomId,
  secret: () => randomBase32(32)
})
