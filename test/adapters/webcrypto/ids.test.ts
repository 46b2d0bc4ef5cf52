/** Random ids and secrets from the pooled Web Crypto bytes: the right shape, never repeated, across pool refills. */
import { describe, expect, it } from "vitest"
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
})
