/** Accounts, keys and credit as operators and the dashboard manage them. */
import { Clock, Effect, Option } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import { ALL_SCOPES, type Mode, type Scope } from "../domain/enums.js"
import { AccountRecord, KeyRecord } from "../domain/records.js"
import { UserRecord } from "../domain/users.js"
import { excerpt, InvalidRequest, NotFound } from "../errors.js"
import { IdGenerator } from "../ports/ids.js"
import { AccountRepo, KeyRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { UserRepo } from "../ports/users.js"
import { Digests } from "../ports/digests.js"
import { type AccountEvent, applyAccountEvent, formatKey, hashKey, keyDisplay, resolveScopes } from "../rules/index.js"
import { checkEmail } from "../rules/users.js"
import { addCredit } from "./wallet.js"

export const emailTaken = () =>
  new InvalidRequest({ status: 422, field: "email", detail: "an account with this e-mail address already exists" })

/**
 * A new active account (no credit, the current terms) and the user who owns it, in one
 * transaction: every way in (signup, OAuth, the operator) goes through here. An address
 * already taken (case-insensitively) is `422 invalid_request` and nothing is written.
 */
export const createAccountWithUser = (request: {
  readonly email: string
  readonly name: string
  readonly passwordHash: string | null
  readonly emailVerified: boolean
}) =>
  Effect.gen(function*() {
    const email = yield* checkEmail(request.email)
    const ids = yield* IdGenerator
    const settings = yield* AccountSettingsConfig
    const now = yield* Clock.currentTimeMillis
    const account = new AccountRecord({
      id: ids.next("acct"),
      name: request.name,
      status: "active",
      hasPurchased: false,
      termsVersion: settings.termsVersion,
      trainingOptIn: false,
      createdAt: now
    })
    const user = new UserRecord({
      id: ids.next("user"),
      accountId: account.id,
      email,
      passwordHash: request.passwordHash,
      emailVerifiedAt: request.emailVerified ? now : null,
      createdAt: now
    })
    return yield* transactionally(Effect.gen(function*() {
      if ((yield* Effect.flatMap(UserRepo, (users) => users.insert(user))) === "email_taken") return yield* emailTaken()
      yield* Effect.flatMap(AccountRepo, (accounts) => accounts.insert(account))
      return { account, user }
    }))
  })

export const findAccount = (id: string) =>
  Effect.flatMap(AccountRepo, (accounts) => accounts.get(id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new NotFound({ detail: `no account '${excerpt(id)}'` })),
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
      hash: hashKey(key, yield* Digests),
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
      return yield* new NotFound({ detail: `no key '${excerpt(keyId)}' on this account` })
    }
    if (found.value.revokedAt !== null) return found.value
    const revoked = new KeyRecord({ ...found.value, revokedAt: yield* Clock.currentTimeMillis })
    yield* keys.update(revoked)
    return revoked
  })

/**
 * The operator's `admin account create`: a verified active account whose user has no password
 * yet (the person sets one with "forgot password"), an optional grant, and one live and one
 * test key with every scope.
 */
export const createAccountWithKeys = (request: { readonly email: string; readonly name?: string; readonly creditMicros?: number }) =>
  Effect.gen(function*() {
    const { account } = yield* createAccountWithUser({
      email: request.email, name: request.name ?? request.email, passwordHash: null, emailVerified: true
    })
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
