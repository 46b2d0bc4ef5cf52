import { Layer } from "effect"
import { IdGenerator } from "../../core/ports/ids.js"

/**
 * Deterministic ids for tests: `<prefix>_` then a counter, padded like a real id. The counter's
 * digits map to letters outside the padding character, so no two counters ever collide.
 */
export const makeSequentialIds = () => {
  let counter = 0
  // radix-32 digits (0-9, a-v) → letters a-z2-7 without "w" (the padding); secrets must be [a-z2-7]
  const ALPHABET = "abcdefghijklmnopqrstuvxyz234567"
  const encode = (n: number) => n.toString(31).split("").map((d) => ALPHABET[parseInt(d, 31)]).join("")
  const next = () => encode(++counter)
  return {
    next: (prefix: string) => `${prefix}_${next().padStart(24, "w")}`,
    secret: () => next().padStart(52, "w")
  }
}

export const SequentialIds = Layer.sync(IdGenerator, makeSequentialIds)
