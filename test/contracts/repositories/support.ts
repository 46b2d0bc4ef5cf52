/**
 * What the repository contract files share (test/contracts/repositories.ts runs them all): the
 * ports they need, small assertions, wallet steps in one transaction, and the test factories.
 */
import { expect, it } from "@effect/vitest"
import { Data, Effect, Either, type Layer, Option } from "effect"
import { JobRecord } from "../../../core/domain/records.js"
import type { MintId } from "../../../core/ports/ids.js"
import { AccountRepo, FileRepo, IdempotencyRepo, JobRepo, KeyRepo, WalletRepo, type WalletSnapshot } from "../../../core/ports/repositories.js"
import { transactionally, Transactor } from "../../../core/ports/transactor.js"
import { WebhookRepo } from "../../../core/ports/webhooks.js"
import { addCredit, type WalletStep } from "../../../core/wallet/wallet.js"
import { YEAR } from "../fixtures.js"

export type Persistence =
  | AccountRepo | KeyRepo | FileRepo | JobRepo | WalletRepo | IdempotencyRepo | Transactor | WebhookRepo

export class Boom extends Data.TaggedError("Boom")<{ readonly message: string }> {}

/** The value of a Some; fails the test on None. */
export const expectSome = <A>(option: Option.Option<A>): A => {
  expect(Option.isSome(option), "expected Some, got None").toBe(true)
  return Option.getOrThrow(option)
}

export const expectNone = <A>(option: Option.Option<A>) => {
  expect(Option.isNone(option), `expected None, got ${JSON.stringify(option)}`).toBe(true)
}

export const right = <A, E>(either: Either.Either<A, E>): A =>
  Either.getOrThrowWith(either, (e) => new Error(`expected Right, got ${JSON.stringify(e)}`))

export const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
export const byId = <T extends { readonly id: string }>(xs: ReadonlyArray<T>): Array<T> =>
  [...xs].sort((a, b) => compareIds(a.id, b.id))

/** Snapshots compared without regard to the order of lots and holds (the port fixes none). */
export const normalized = (w: WalletSnapshot) => ({
  accountId: w.accountId,
  lastSeq: w.lastSeq,
  balance: w.balance,
  reserved: w.reserved,
  lots: byId(w.lots),
  openHolds: byId(w.openHolds)
})

/** The port's list order: createdAt descending, then id descending. */
export const newestFirst = (a: JobRecord, b: JobRecord) => b.createdAt - a.createdAt || compareIds(b.id, a.id)

export const walletLock = (accountId: string) => transactionally(Effect.flatMap(WalletRepo, (w) => w.lock(accountId)))

/** lock → pure wallet step → apply, in one transaction; returns the step. */
export const walletStep = <S extends WalletStep>(accountId: string, f: (wallet: WalletSnapshot) => S) =>
  transactionally(Effect.gen(function*() {
    const repo = yield* WalletRepo
    const step = f(yield* repo.lock(accountId))
    yield* repo.apply(step.change)
    return step
  }))

export const credit = (accountId: string, amountMicros: number, now: number, mint: MintId, lifetimeMs = YEAR) =>
  walletStep(accountId, (w) => addCredit(w, { source: "grant", amountMicros, lifetimeMs, reason: "grant" }, now, mint))

/** Everything a wallet shows, to check that a refused change left no trace. */
export const walletState = (accountId: string) =>
  Effect.gen(function*() {
    const repo = yield* WalletRepo
    return {
      snapshot: normalized(yield* walletLock(accountId)),
      lots: byId(yield* repo.listLots(accountId, 1_000)),
      ledger: yield* repo.ledgerPage({ accountId, limit: 1_000 })
    }
  })

/** The tests of one contract file: against a fresh store built from the adapter's layer. */
export interface ContractTests {
  /** A test against a fresh store. */
  readonly test: (title: string, body: Effect.Effect<void, unknown, Persistence>) => void
  /** A test that races transactions: on the live clock, against a fresh store. */
  readonly raceTest: (title: string, body: Effect.Effect<void, unknown, Persistence>) => void
}

export const contractTests = (makeLayer: () => Layer.Layer<Persistence, unknown, never>): ContractTests => ({
  test: (title, body) => it.effect(title, () => Effect.provide(body, makeLayer())),
  raceTest: (title, body) => it.live(title, () => Effect.provide(body, makeLayer()))
})
