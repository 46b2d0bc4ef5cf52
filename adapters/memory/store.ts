/**
 * The in-memory store: every table in one immutable state, one lock for all of it.
 * A transaction holds the lock and restores its starting state if it fails, so it is
 * all-or-nothing; operations outside a transaction take the lock for themselves.
 * Immutable maps make the snapshot free.
 */
import { Context, Effect, FiberRef, HashMap, Layer } from "effect"
import type {
  AccountRecord, FileRecord, HoldRecord, IdempotencyRecord, JobRecord, KeyRecord, LedgerEntryRecord, LotRecord,
  WebhookDeliveryRecord, WebhookEndpointRecord
} from "../../core/domain/records.js"
import type {
  EmailTokenRecord, OAuthIdentityRecord, OAuthStateRecord, SessionRecord, UserRecord
} from "../../core/domain/users.js"
import type { CheckoutRecord } from "../../core/domain/payments.js"
import { Transactor } from "../../core/ports/transactor.js"

export interface MemoryState {
  readonly accounts: HashMap.HashMap<string, AccountRecord>
  readonly keys: HashMap.HashMap<string, KeyRecord>
  readonly files: HashMap.HashMap<string, FileRecord>
  readonly jobs: HashMap.HashMap<string, JobRecord>
  readonly lots: HashMap.HashMap<string, LotRecord>
  readonly holds: HashMap.HashMap<string, HoldRecord>
  /** Per account, oldest first. */
  readonly ledger: HashMap.HashMap<string, ReadonlyArray<LedgerEntryRecord>>
  readonly idempotency: HashMap.HashMap<string, IdempotencyRecord>
  /** Completion times of deleted files, which still count against the validations quota. */
  readonly deletedValidations: ReadonlyArray<{ readonly accountId: string; readonly mode: string; readonly completedAt: number }>
  readonly users: HashMap.HashMap<string, UserRecord>
  /** By id hash. */
  readonly sessions: HashMap.HashMap<string, SessionRecord>
  /** By hash. */
  readonly emailTokens: HashMap.HashMap<string, EmailTokenRecord>
  /** By `provider\u0000subject`. */
  readonly oauthIdentities: HashMap.HashMap<string, OAuthIdentityRecord>
  /** By hash. */
  readonly oauthStates: HashMap.HashMap<string, OAuthStateRecord>
  readonly checkouts: HashMap.HashMap<string, CheckoutRecord>
  /** Applied payment event ids → when they were received. */
  readonly paymentEvents: HashMap.HashMap<string, number>
  readonly webhookEndpoints: HashMap.HashMap<string, WebhookEndpointRecord>
  readonly webhookDeliveries: HashMap.HashMap<string, WebhookDeliveryRecord>
}

export const emptyState = (): MemoryState => ({
  accounts: HashMap.empty(),
  keys: HashMap.empty(),
  files: HashMap.empty(),
  jobs: HashMap.empty(),
  lots: HashMap.empty(),
  holds: HashMap.empty(),
  ledger: HashMap.empty(),
  idempotency: HashMap.empty(),
  deletedValidations: [],
  users: HashMap.empty(),
  sessions: HashMap.empty(),
  emailTokens: HashMap.empty(),
  oauthIdentities: HashMap.empty(),
  oauthStates: HashMap.empty(),
  checkouts: HashMap.empty(),
  paymentEvents: HashMap.empty(),
  webhookEndpoints: HashMap.empty(),
  webhookDeliveries: HashMap.empty()
})

export interface MemoryDatabase {
  /** Reads the current state under the lock. */
  readonly read: <A>(f: (state: MemoryState) => A) => Effect.Effect<A>
  /** Replaces the state under the lock. */
  readonly modify: <A>(f: (state: MemoryState) => readonly [A, MemoryState]) => Effect.Effect<A>
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class MemoryDb extends Context.Tag("hush/adapters/MemoryDb")<MemoryDb, MemoryDatabase>() {}

export const makeMemoryDatabase = Effect.gen(function*() {
  let state = emptyState()
  const lock = yield* Effect.makeSemaphore(1)
  const inTransaction = yield* FiberRef.make(false)

  const locked = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) => (inside ? self : lock.withPermits(1)(self)))

  const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) => {
      if (inside) return self // nested: part of the enclosing transaction
      return lock.withPermits(1)(Effect.suspend(() => {
        const before = state
        return Effect.locally(self, inTransaction, true).pipe(
          Effect.onExit((exit) => Effect.sync(() => {
            if (exit._tag === "Failure") state = before
          }))
        )
      }))
    })

  return {
    read: (f) => locked(Effect.sync(() => f(state))),
    modify: (f) =>
      locked(Effect.sync(() => {
        const [result, next] = f(state)
        state = next
        return result
      })),
    withTransaction
  } satisfies MemoryDatabase
})

export const layerMemoryDb = Layer.scoped(MemoryDb, makeMemoryDatabase)

export const layerMemoryTransactor = Layer.effect(
  Transactor,
  Effect.map(MemoryDb, (db) => ({ withTransaction: db.withTransaction }))
)
