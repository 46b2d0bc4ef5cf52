import { Context } from "effect"

export type IdPrefix = "file" | "job" | "acct" | "key" | "txn" | "lot" | "chk" | "hold" | "req" | "user" | "whe" | "whd" | "evt"

/**
 * Source of identifiers and secrets. Synchronous so that pure rules (the wallet) can mint
 * ledger ids without becoming effects; an implementation is random or, in tests, sequential.
 */
export class IdGenerator extends Context.Tag("hush/IdGenerator")<IdGenerator, {
  /** `<prefix>_` then at least 96 random bits in lowercase base32. */
  readonly next: (prefix: IdPrefix) => string
  /** 256 random bits, lowercase base32 without padding (52 characters). */
  readonly secret: () => string
}>() {}

export type MintId = (prefix: IdPrefix) => string

