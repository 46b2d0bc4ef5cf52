/**
 * Account states (decisions.md, Accounts): `active`, `suspended`, `frozen`.
 * Frozen blocks every keyed request; suspended blocks new jobs only.
 */
import { Either } from "effect"
import type { AccountStatus } from "../domain/enums.js"
import { AccountRecord } from "../domain/records.js"
import { AccountFrozen, AccountSuspended } from "../errors.js"

export const checkKeyedAccess = (account: AccountRecord): Either.Either<void, AccountFrozen> =>
  account.status === "frozen"
    ? Either.left(new AccountFrozen({ detail: `account ${account.id} is frozen while a card payment dispute is open` }))
    : Either.void

export const checkCanCreateJob = (account: AccountRecord): Either.Either<void, AccountSuspended> =>
  account.status === "suspended"
    ? Either.left(new AccountSuspended({ detail: `account ${account.id} is suspended: new jobs are not accepted; running jobs finish` }))
    : Either.void

export type AccountEvent = "suspend" | "unsuspend" | "dispute_opened" | "dispute_won" | "dispute_lost"

const NEXT: Record<AccountEvent, (from: AccountStatus) => AccountStatus> = {
  // a frozen account stays frozen: suspending must not reopen keyed access during a dispute
  suspend: (from) => (from === "frozen" ? "frozen" : "suspended"),
  unsuspend: (from) => (from === "suspended" ? "active" : from),
  dispute_opened: () => "frozen",
  dispute_won: (from) => (from === "frozen" ? "active" : from),
  dispute_lost: (from) => (from === "frozen" ? "suspended" : from)
}

export const applyAccountEvent = (account: AccountRecord, event: AccountEvent): AccountRecord =>
  new AccountRecord({ ...account, status: NEXT[event](account.status) })
