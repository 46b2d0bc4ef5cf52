/** Accounts, keys and credit as operators and the dashboard manage them. */
import { Clock, Effect, Option } from "effect"
import { ALL_SCOPES, type Mode, type Scope } from "../domain/enums.js"
import { AccountRecord, KeyRecord } from "../domain/records.js"
import { NotFound } from "../errors.js"
import { IdGenerator } from "../ports/ids.js"
import { AccountRepo, KeyRepo } from "../ports/repositories.js"
import { type AccountEvent, applyAccountEvent, formatKey, hashKey, keyDisplay, resolveScopes } from "../rules/index.js"
import { addCredit } from "./wallet.js"

export const TERMS_VERSION = "2026-01-01"

export const findAccount = (id: string) =>
  Effect.flatMap(AccountRepo, (accounts) => accounts.get(id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new NotFound({ detail: `no account '${id}'` })),
      onSome: Effect.succeed
    }))
  )

/** A new key; the full secret exists only in the returned value. */
export const createKey = (
  accountId: string,
  request: { readonly mode: Mode; readonly name?: string; readonly scopes?: ReadonlyArray<Scope> | null }
) =>
  Effect.gen(function*() {
    yield* findAccount(accountId)
    const ids = yield* IdGenerator
    const secret = ids.secret()
    const key = formatKey(request.mode, secret)
    const record = new KeyRecord({
      id: ids.next("key"),
      accountId,
      name: request.name ?? "",
      mode: request.mode,
      hash: hashKey(key),
      ...keyDisplay(request.mode, secret),
      scopes: [...resolveScopes(request.scopes)],
      createdAt: yield* Clock.currentTimeMillis,
      lastUsedAt: null,
      revokedAt: null
    })
    yield* Effect.flatMap(KeyRepo, (keys) => keys.insert(record))
    return { record, key }
  })

export const revokeKey = (accountId: string, keyId: string) =>
  Effect.gen(function*() {
    const keys = yield* KeyRepo
    const found = yield* keys.get(keyId)
    if (Option.isNone(found) || found.value.accountId !== accountId) {
      return yield* new NotFound({ detail: `no key '${keyId}' on this account` })
    }
    if (found.value.revokedAt !== null) return found.value
    const revoked = new KeyRecord({ ...found.value, revokedAt: yield* Clock.currentTimeMillis })
    yield* keys.update(revoked)
    return revoked
  })

/**
 * The operator's `admin account create`: a verified active account, an optional grant,
 * and one live and one test key with every scope.
 */
export const createAccountWithKeys = (request: { readonly email: string; readonly name?: string; readonly creditMicros?: number }) =>
  Effect.gen(function*() {
    const ids = yield* IdGenerator
    const account = new AccountRecord({
      id: ids.next("acct"),
      name: request.name ?? request.email,
      email: request.email,
      status: "active",
      hasPurchased: false,
      termsVersion: TERMS_VERSION,
      trainingOptIn: false,
      emailVerified: true,
      createdAt: yield* Clock.currentTimeMillis
    })
    yield* Effect.flatMap(AccountRepo, (accounts) => accounts.insert(account))
    if (request.creditMicros !== undefined && request.creditMicros > 0) {
      yield* addCredit(account.id, { source: "grant", amountMicros: request.creditMicros, reason: "operator grant at account creation" })
    }
    const live = yield* createKey(account.id, { mode: "live", name: "default live key", scopes: ALL_SCOPES })
    const test = yield* createKey(account.id, { mode: "test", name: "default test key", scopes: ALL_SCOPES })
    return { account, liveKey: live.key, testKey: test.key, liveKeyId: live.record.id, testKeyId: test.record.id }
  })

export const grantCredit = (accountId: string, amountMicros: number, reason = "operator grant") =>
  Effect.zipRight(findAccount(accountId), addCredit(accountId, { source: "grant", amountMicros, reason }))

export const changeAccountStatus = (accountId: string, event: AccountEvent) =>
  Effect.gen(function*() {
    const account = yield* findAccount(accountId)
    const next = applyAccountEvent(account, event)
    yield* Effect.flatMap(AccountRepo, (accounts) => accounts.update(next))
    return next
  })
