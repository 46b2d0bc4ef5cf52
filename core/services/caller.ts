import { Clock, Effect, Either, Option } from "effect"
import { ALL_SCOPES } from "../domain/enums.js"
import type { Actor, Caller } from "../domain/caller.js"
import { type AccountRecord, KeyRecord } from "../domain/records.js"
import { type AccountFrozen, Unauthorized } from "../errors.js"
import { Digests } from "../ports/digests.js"
import { KeyRepo } from "../ports/repositories.js"
import { checkKeyedAccess, hashKey, parseKey } from "../rules/index.js"
import { MINUTE } from "../time.js"

/**
 * The dashboard's session acting on its account: live mode (decisions.md, Web dashboard: doing
 * the work), every scope; a frozen account is refused as its keys are (`403 account_frozen`).
 */
export const sessionActor = (account: AccountRecord): Either.Either<Actor, AccountFrozen> =>
  Either.map(checkKeyedAccess(account), () => ({ accountId: account.id, keyId: null, mode: "live", scopes: ALL_SCOPES, account }))

const unauthorized = (detail: string) => new Unauthorized({ detail })

/** `last_used_at` is refreshed at most this often, to keep reads from writing on every call. */
const LAST_USED_GRANULARITY_MS = MINUTE

/**
 * `Authorization: Bearer <key>` → caller. A missing, malformed, unknown or revoked key is
 * `401 unauthorized`; a frozen account `403 account_frozen`.
 */
export const authenticate = (authorization: string | undefined) =>
  Effect.flatMap(KeyRepo, (keys) => authenticateWith(keys, authorization))

/** `authenticate` with the key repository given: the request path's form, which provides no service per request. */
export const authenticateWith = (keys: KeyRepo["Type"], authorization: string | undefined) =>
  Effect.gen(function*() {
    if (authorization === undefined || authorization.trim() === "") {
      return yield* unauthorized("missing Authorization header: send 'Authorization: Bearer <API key>'")
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
    if (match === null) return yield* unauthorized("the Authorization header must be 'Bearer <API key>'")
    const presented = match[1]!
    if (parseKey(presented) === null) return yield* unauthorized("the API key is malformed")
    const found = yield* keys.findByHashWithAccount(hashKey(presented, yield* Digests))
    if (Option.isNone(found) || found.value.key.revokedAt !== null) {
      return yield* unauthorized("the API key is unknown or has been revoked")
    }
    const { key, account } = found.value
    if (Option.isNone(account)) return yield* unauthorized("the API key's account no longer exists")
    yield* checkKeyedAccess(account.value)
    const now = yield* Clock.currentTimeMillis
    if (key.lastUsedAt === null || now - key.lastUsedAt >= LAST_USED_GRANULARITY_MS) {
      yield* keys.markUsed(new KeyRecord({ ...key, lastUsedAt: now }))
    }
    return {
      accountId: account.value.id,
      keyId: key.id,
      mode: key.mode,
      scopes: key.scopes,
      account: account.value
    } satisfies Caller
  })
