import { Context, Effect } from "effect"

export type IdPrefix = "file" | "job" | "acct" | "key" | "txn" | "lot" | "chk" | "hold" | "req"

export class IdGenerator extends Context.Tag("hush/IdGenerator")<IdGenerator, {
  /** `<prefix>_` then at least 96 random bits in lowercase base32. */
  readonly id: (prefix: IdPrefix) => Effect.Effect<string>
  /** 256 random bits, lowercase base32 without padding (52 characters). */
  readonly secret: () => Effect.Effect<string>
}>() {}

export const newId = (prefix: IdPrefix) => Effect.flatMap(IdGenerator, (ids) => ids.id(prefix))
