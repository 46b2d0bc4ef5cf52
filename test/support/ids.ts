import { Layer } from "effect"
import { IdGenerator } from "../../core/ports/ids.js"

/** Deterministic ids for tests: `<prefix>_` then a counter in base32 (padded like a real id). */
export const makeSequentialIds = () => {
  let counter = 0
  const next = () => (++counter).toString(32).padStart(24, "a")
  return {
    next: (prefix: string) => `${prefix}_${next()}`,
    secret: () => next().padStart(52, "b").replace(/[01]/g, "c").replace(/[89]/g, "d")
  }
}

export const SequentialIds = Layer.sync(IdGenerator, makeSequentialIds)
