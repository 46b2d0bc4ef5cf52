/**
 * Wallet operations against the repositories. Each runs inside the caller's transaction:
 * it locks the account's wallet, applies one pure step of core/wallet and writes its change.
 */
import { Clock, Effect, Either } from "effect"
import type { LotSource } from "../domain/enums.js"
import { LimitsConfig } from "../domain/limits.js"
import { IdGenerator, type MintId } from "../ports/ids.js"
import { WalletRepo, type WalletSnapshot } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import * as Wallet from "../wallet/wallet.js"

/** Locks the wallet, runs a step, persists its change. Must run inside a transaction. */
export const walletStep = <S extends Wallet.WalletStep, E>(
  accountId: string,
  step: (wallet: WalletSnapshot, now: number, mint: MintId) => Either.Either<S, E>
) =>
  Effect.gen(function*() {
    const repo = yield* WalletRepo
    const ids = yield* IdGenerator
    const now = yield* Clock.currentTimeMillis
    const wallet = yield* repo.lock(accountId)
    const result = yield* step(wallet, now, ids.next)
    if (!Wallet.isEmptyChange(result.change)) yield* repo.apply(result.change)
    return result
  })

/** The account's wallet as of now, with due expiries written. */
export const currentWallet = (accountId: string) =>
  transactionally(walletStep(accountId, (w, now, mint) => Either.right(Wallet.expireDue(w, now, mint))))
    .pipe(Effect.map((step) => step.wallet))

export const addCredit = (
  accountId: string,
  credit: { readonly source: LotSource; readonly amountMicros: number; readonly reason: string; readonly checkoutId?: string | null }
) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    return yield* transactionally(walletStep(accountId, (w, now, mint) =>
      Either.right(Wallet.addCredit(w, { ...credit, lifetimeMs: limits.lotLifetimeMs }, now, mint))
    ))
  })
