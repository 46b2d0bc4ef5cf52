/**
 * Passwords hashed with argon2id (@node-rs/argon2: native, prebuilt per platform, runs on the
 * libuv thread pool). Parameters are OWASP's first recommendation: 19 MiB of memory, 2
 * iterations, 1 lane; measured at ~24 ms per hash on the 2-core development machine (scrypt at
 * OWASP's N=2^17, r=8 took ~1.5 s there, and 128 MiB per hash). The hash string carries its
 * parameters, so raising them later still verifies old hashes.
 */
import { hash, verify } from "@node-rs/argon2"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { PasswordHasher } from "../../core/ports/password-hasher.js"

export interface Argon2Parameters {
  /** KiB. */
  readonly memoryCost: number
  readonly timeCost: number
  readonly parallelism: number
}

/** `Algorithm.Argon2id`, a const enum the library's types declare (unusable under isolatedModules). */
const ARGON2ID = 2

export const OWASP_ARGON2ID: Argon2Parameters = { memoryCost: 19_456, timeCost: 2, parallelism: 1 }

/** A hasher with `parameters` (tests pass cheaper ones; every deployment uses the default). */
export const layerArgon2Hasher = (parameters: Argon2Parameters = OWASP_ARGON2ID) =>
  Layer.effect(PasswordHasher, Effect.gen(function*() {
    const options = { algorithm: ARGON2ID, ...parameters }
    // what a wrong address is checked against, so it costs what a wrong password costs
    const decoy = yield* Effect.promise(() => hash(randomBytes(32).toString("hex"), options))
    return {
      hash: (password) => Effect.promise(() => hash(password, options)),
      verify: (stored, password) =>
        Effect.promise(() => verify(stored ?? decoy, password).catch(() => false)).pipe(
          Effect.map((matches) => stored !== null && matches)
        )
    }
  }))
