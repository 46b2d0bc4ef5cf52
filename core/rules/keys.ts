/**
 * API keys: `hush_live_<secret>` / `hush_test_<secret>`, the secret being 256 random bits in
 * lowercase base32 without padding (52 characters). Only SHA-256 of the whole key is stored.
 */
import { Either } from "effect"
import { ALL_SCOPES, type Mode, type Scope } from "../domain/enums.js"
import { InsufficientScope } from "../errors.js"
import { type DigestFunctions, sha256Hex } from "./secrets.js"

export const KEY_PREFIX = "hush"
const SECRET_PATTERN = /^[a-z2-7]{52}$/

export const formatKey = (mode: Mode, secret: string): string => `${KEY_PREFIX}_${mode}_${secret}`

/** The mode and secret of a well-formed key, or null. */
export const parseKey = (key: string): { readonly mode: Mode; readonly secret: string } | null => {
  const match = /^hush_(live|test)_(.+)$/.exec(key)
  if (match === null || !SECRET_PATTERN.test(match[2]!)) return null
  return { mode: match[1] as Mode, secret: match[2]! }
}

export const hashKey = (key: string, digests?: DigestFunctions): string => sha256Hex(key, digests)

export const keyDisplay = (mode: Mode, secret: string) => ({
  prefixDisplay: `${KEY_PREFIX}_${mode}_${secret.slice(0, 4)}`,
  lastFour: secret.slice(-4)
})

/** A key created without scopes gets all of them (five). */
export const resolveScopes = (requested: ReadonlyArray<Scope> | null | undefined): ReadonlyArray<Scope> =>
  requested === null || requested === undefined ? ALL_SCOPES : ALL_SCOPES.filter((scope) => requested.includes(scope))

/** Passes when the key has at least one of `anyOf`; the error names what is missing. */
export const requireScope = (
  granted: ReadonlyArray<Scope>, anyOf: ReadonlyArray<Scope>
): Either.Either<void, InsufficientScope> =>
  anyOf.some((scope) => granted.includes(scope))
    ? Either.void
    : Either.left(new InsufficientScope({
      detail: anyOf.length === 1
        ? `this key lacks the scope '${anyOf[0]}'`
        : `this key needs one of the scopes ${anyOf.map((s) => `'${s}'`).join(" or ")}`
    }))
