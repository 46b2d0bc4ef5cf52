/** Both implementations of the Digests port under one contract; the native one is what the composition root provides. */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { layerNodeDigests, nodeDigests } from "../../../adapters/node-crypto/digests.js"
import { Digests } from "../../../core/ports/digests.js"
import { portableDigests } from "../../../core/rules/secrets.js"
import { digestsContract } from "../../contracts/digests.js"

digestsContract("portable (default)", portableDigests)
digestsContract("node:crypto", nodeDigests)

describe("the Digests port", () => {
  it("is the portable one where nothing provides it, the native one under its layer", () => {
    expect(Effect.runSync(Digests)).toBe(portableDigests)
    expect(Effect.runSync(Effect.provide(Digests, layerNodeDigests))).toBe(nodeDigests)
  })
})
