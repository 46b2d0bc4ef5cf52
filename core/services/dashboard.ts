/**
 * The signed-in dashboard's account and keys (decisions.md, Dashboard and Dashboard details).
 * Each operation acts on the session's own account only; another account's key is `404`.
 */
import { Clock, Effect, Exit, Option, Schema } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import type { Mode, Scope } from "../domain/enums.js"
import { LimitsConfig } from "../domain/limits.js"
import { AccountRecord, IdempotencyRecord, type KeyRecord } from "../domain/records.js"
import { excerpt, Forbidden, IdempotencyKeyReused, type InvalidRequest, NotFound } from "../errors.js"
import { AccountRepo, IdempotencyRepo, KeyRepo, WalletRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { Digests } from "../ports/digests.js"
import { checkIdempotencyKey, isRecordableStatus } from "../rules/idempotency.js"
import { sha256Hex } from "../rules/secrets.js"
import { checkCanCreateKey, checkKeyLimit } from "../rules/users.js"
import { createKey } from "./accounts.js"
import type { SignedIn } from "../domain/caller.js"

/**
 * `PATCH /v1/dashboard/account`: an omitted field stays; a null name clears it. The account is
 * read afresh under its wallet lock (the account's mutex), so the session's copy never writes
 * back a status a payment dispute changed meanwhile.
 */
export const updateAccount = (signedIn: SignedIn, patch: { readonly name?: string | null | undefined }) =>
  Effect.gen(function*() {
    if (patch.name === undefined) return signedIn.account
    const name = patch.name ?? ""
    return yield* transactionally(Effect.gen(function*() {
      yield* Effect.flatMap(WalletRepo, (wallets) => wallets.lock(signedIn.account.id))
      const accounts = yield* AccountRepo
      const current = Option.getOrElse(yield* accounts.get(signedIn.account.id), () => signedIn.account)
      const updated = new AccountRecord({ ...current, name })
      yield* accounts.update(updated)
      return updated
    }))
  })

/** Every key of the account, revoked ones included, newest first. */
export const listKeys = (accountId: string) =>
  Effect.map(Effect.flatMap(KeyRepo, (keys) => keys.listByAccount(accountId)), (keys) => [...keys].reverse())

export interface KeyRequest {
  readonly mode: Mode
  readonly name: string
  readonly scopes?: ReadonlyArray<Scope> | null | undefined
}

/**
 * The rules of key creation: live keys after verification and terms, at most 50 unrevoked.
 * The account's wallet lock serialises creations of one account, so two at once cannot both
 * take the 50th place.
 */
const createCheckedKey = (signedIn: SignedIn, request: KeyRequest) =>
  transactionally(Effect.gen(function*() {
    yield* checkCanCreateKey(request.mode, signedIn.user, signedIn.account)
    yield* Effect.flatMap(WalletRepo, (wallets) => wallets.lock(signedIn.account.id))
    const existing = yield* Effect.flatMap(KeyRepo, (keys) => keys.listByAccount(signedIn.account.id))
    yield* checkKeyLimit(existing, (yield* AccountSettingsConfig).maxActiveKeys)
    return yield* createKey(signedIn.account.id, request)
  }))

export interface CreatedKey {
  readonly _tag: "Created"
  readonly record: KeyRecord
  /** The full key: shown once, null on a replay. */
  readonly secret: string | null
  readonly replayed: boolean
}

/** A replay of a first request that was refused: the same refusal, to be answered as a replay. */
export interface ReplayedRefusal {
  readonly _tag: "ReplayedRefusal"
  readonly error: Forbidden | NotFound
}

const KEYS_PATH = "/v1/dashboard/keys"
/** Kept apart from the API's keys of the same account, which share the repository. */
const storedKey = (key: string) => `dashboard:${key}`

/** What a first request left for its replays: the key's id, or the refusal (the only errors key creation has). */
const Recorded = Schema.parseJson(Schema.Union(
  Schema.Struct({ key_id: Schema.String }),
  Schema.Struct({ error: Schema.Union(Forbidden, NotFound) })
))

/**
 * `POST /v1/dashboard/keys`. With `Idempotency-Key`, a replay answers the first key without
 * its secret (`already_displayed`), a refusal is replayed as the same refusal, another body
 * or a first request still running is `409 idempotency_key_reused`. Only the key's id is
 * recorded, never its secret.
 */
export const createDashboardKey = (
  signedIn: SignedIn, request: KeyRequest, idempotencyKey: string | undefined
): Effect.Effect<
  CreatedKey | ReplayedRefusal,
  Effect.Effect.Error<ReturnType<typeof createCheckedKey>> | InvalidRequest | IdempotencyKeyReused,
  Effect.Effect.Context<ReturnType<typeof createCheckedKey>> | IdempotencyRepo | LimitsConfig
> =>
  Effect.gen(function*() {
    if (idempotencyKey === undefined) {
      const created = yield* createCheckedKey(signedIn, request)
      return { _tag: "Created", record: created.record, secret: created.key, replayed: false } satisfies CreatedKey
    }
    const key = storedKey(yield* checkIdempotencyKey(idempotencyKey))
    const accountId = signedIn.account.id
    const repo = yield* IdempotencyRepo
    const now = yield* Clock.currentTimeMillis
    const fingerprint = sha256Hex(JSON.stringify([request.mode, request.name, request.scopes ?? null]), yield* Digests)
    const begun = yield* repo.begin(new IdempotencyRecord({
      accountId, mode: "live", key, method: "POST", path: KEYS_PATH, fingerprint, state: "running",
      responseStatus: null, responseBody: null, responseHeaders: null,
      createdAt: now, expiresAt: now + (yield* LimitsConfig).idempotencyTtlMs
    }))
    if (begun._tag === "Existing") {
      const first = begun.record
      if (first.fingerprint !== fingerprint || first.path !== KEYS_PATH) {
        return yield* new IdempotencyKeyReused({ detail: `Idempotency-Key '${excerpt(idempotencyKey)}' was used for another request` })
      }
      if (first.state === "running" || first.responseBody === null) {
        return yield* new IdempotencyKeyReused({ detail: `a request with Idempotency-Key '${excerpt(idempotencyKey)}' is still running; retry once it has finished` })
      }
      const recorded = yield* Schema.decode(Recorded)(first.responseBody).pipe(Effect.orDie)
      if ("error" in recorded) return { _tag: "ReplayedRefusal", error: recorded.error } satisfies ReplayedRefusal
      const record = yield* Effect.flatMap(KeyRepo, (keys) => keys.get(recorded.key_id)).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage(`recorded key ${recorded.key_id} is gone`), onSome: Effect.succeed }))
      )
      return { _tag: "Created", record, secret: null, replayed: true } satisfies CreatedKey
    }
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const outcome = yield* Effect.exit(restore(createCheckedKey(signedIn, request)))
        if (Exit.isSuccess(outcome)) {
          const body = yield* Schema.encode(Recorded)({ key_id: outcome.value.record.id }).pipe(Effect.orDie)
          yield* repo.finish(accountId, "live", key, { status: 201, body, headers: {} })
          return { _tag: "Created", record: outcome.value.record, secret: outcome.value.key, replayed: false } satisfies CreatedKey
        }
        const error = outcome.cause._tag === "Fail" ? outcome.cause.error : undefined
        if (error !== undefined && (error._tag === "Forbidden" || error._tag === "NotFound") && isRecordableStatus(error.status)) {
          const body = yield* Schema.encode(Recorded)({ error }).pipe(Effect.orDie)
          yield* repo.finish(accountId, "live", key, { status: error.status, body, headers: {} })
        } else {
          yield* repo.abandon(accountId, "live", key)
        }
        return yield* Effect.failCause(outcome.cause)
      }))
  })
