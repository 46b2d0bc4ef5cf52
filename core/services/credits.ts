import { Effect } from "effect"
import { requireScope } from "../rules/index.js"
import { available } from "../wallet/wallet.js"
import type { Caller } from "../domain/caller.js"
import { currentWallet } from "./wallet.js"

export interface CreditsView {
  readonly balanceMicros: number
  readonly reservedMicros: number
  readonly availableMicros: number
}

const EMPTY: CreditsView = { balanceMicros: 0, reservedMicros: 0, availableMicros: 0 }

/** The account's credit now (due expiries applied); a test key always sees an empty sandbox wallet. */
export const creditsOf = (accountId: string) =>
  Effect.map(currentWallet(accountId), (wallet): CreditsView => ({
    balanceMicros: wallet.balance,
    reservedMicros: wallet.reserved,
    availableMicros: Math.max(0, available(wallet))
  }))

export const getCredits = (caller: Caller) =>
  Effect.zipRight(
    requireScope(caller.scopes, ["credits:read"]),
    caller.mode === "test" ? Effect.succeed(EMPTY) : creditsOf(caller.accountId)
  )

/** `GET /v1/me`: the balance only with `credits:read`. */
export const getMe = (caller: Caller) =>
  Effect.gen(function*() {
    const balance = caller.scopes.includes("credits:read") ? yield* getCredits(caller) : null
    return { caller, balance }
  })
