/** Random ids and secrets from the pooled Web Crypto bytes: the right shape, never repeated, across pool refills. */
import { encodeBase32LowerCaseNoPadding as osloBase32 } from "@oslojs/encoding"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeBase32LowerCaseNoPadding } from "../../../adapters/webcrypto/base32.js"
import { randomId, layerRandomIds } from "../../../adapters/webcrypto/ids.js"
import { Effect } from "effect"
import { IdGenerator } from "../../../core/ports/ids.js"

describe("random ids", () => {
  it("are the prefix and 24 base32 characters, and 20,000 of them (many pool refills) are distinct", () => {
    const ids = Array.from({ length: 20_000 }, () => randomId("job"))
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^job_[a-z2-7]{24}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("gives 256-bit secrets (52 base32 characters), distinct, interleaved with ids", async () => {
    const generator = await Effect.runPromise(Effect.provide(IdGenerator, layerRandomIds))
    const secrets = Array.from({ length: 2_000 }, (_, i) => (i % 2 === 0 ? generator.secret() : generator.next("req")))
    for (const secret of secrets.filter((_, i) => i % 2 === 0).slice(0, 50)) expect(secret).toMatch(/^[a-z2-7]{52}$/)
    expect(new Set(secrets).size).toBe(secrets.length)
  })

  it("are encoded as oslo's base32 (lower case, no padding) would, for every length and byte", () => {
    expect(encodeBase32LowerCaseNoPadding(new Uint8Array([]))).toBe("")
    expect(encodeBase32LowerCaseNoPadding(new TextEncoder().encode("foobar"))).toBe("mzxw6ytboi") // RFC 4648 §10, lower case
    expect(encodeBase32LowerCaseNoPadding(new Uint8Array(15).fill(255))).toBe("7".repeat(24))
    fc.assert(fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
      expect(encodeBase32LowerCaseNoPadding(bytes)).toBe(osloBase32(bytes))
    }), { numRuns: 2_000 })
  })
})
