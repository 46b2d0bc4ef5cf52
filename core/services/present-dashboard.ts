/** Records → the dashboard's wire shapes (core/schema/dashboard.ts); present.ts does the API's. */
import type { Limits } from "../domain/limits.js"
import type { AccountRecord, JobRecord, KeyRecord, LedgerEntryRecord, LotRecord } from "../domain/records.js"
import type { UserRecord } from "../domain/users.js"
import { formatMicros } from "../money.js"
import {
  Account, DashboardCredits, DashboardJob, DashboardJobDetail, type DashboardJobLedgerItem, KeyOut, LedgerEntry,
  type SessionAccount, type SessionUser
} from "../schema/index.js"
import { toIso, toIsoOrNull } from "../time.js"
import type { CreditsView } from "./credits.js"
import { presentCredits, presentJob } from "./present.js"

export const presentAccount = (account: AccountRecord): Account =>
  new Account({
    id: account.id,
    name: account.name,
    status: account.status,
    has_purchased: account.hasPurchased,
    terms_version: account.termsVersion,
    training_opt_in: account.trainingOptIn
  })

export const presentSessionUser = (user: UserRecord): SessionUser => ({
  email: user.email,
  verified: user.emailVerifiedAt !== null,
  email_verified_at: toIsoOrNull(user.emailVerifiedAt)
})

export const presentSessionAccount = (account: AccountRecord): SessionAccount => ({
  id: account.id, name: account.name, status: account.status
})

export const presentKey = (key: KeyRecord): KeyOut =>
  new KeyOut({
    id: key.id,
    name: key.name,
    mode: key.mode,
    prefix_display: key.prefixDisplay,
    last_four: key.lastFour,
    scopes: [...key.scopes],
    created_at: toIso(key.createdAt),
    last_used_at: toIsoOrNull(key.lastUsedAt),
    revoked_at: toIsoOrNull(key.revokedAt)
  })

/** An entry's money: what moved on the balance, or else on the reservation (holds, releases). */
const entryDisplay = (entry: LedgerEntryRecord) => formatMicros(entry.balanceDelta !== 0 ? entry.balanceDelta : entry.reservedDelta)

export const presentLedgerEntry = (entry: LedgerEntryRecord): LedgerEntry =>
  new LedgerEntry({
    id: entry.id,
    kind: entry.kind,
    display: entryDisplay(entry),
    reason: entry.reason,
    balance_delta: entry.balanceDelta,
    reserved_delta: entry.reservedDelta,
    balance_after: entry.balanceAfter,
    reserved_after: entry.reservedAfter,
    job: entry.jobId,
    checkout: entry.checkoutId,
    created_at: toIso(entry.createdAt)
  })

export const presentDashboardCredits = (
  credits: CreditsView, account: AccountRecord, lots: ReadonlyArray<LotRecord>, truncated: boolean
): DashboardCredits =>
  new DashboardCredits({
    ...presentCredits(credits),
    balance_display: formatMicros(credits.balanceMicros),
    reserved_display: formatMicros(credits.reservedMicros),
    has_purchased: account.hasPurchased,
    lots: lots.map((lot) => ({
      amount_micros: lot.amountMicros,
      remaining_micros: lot.remainingMicros,
      purchased_at: toIso(lot.purchasedAt),
      expires_at: toIso(lot.expiresAt),
      source: lot.source,
      amount_display: formatMicros(lot.amountMicros),
      remaining_display: formatMicros(lot.remainingMicros)
    })),
    lots_truncated: truncated
  })

/** A job with its key's summary; `keys` are the account's, by id (a key that is gone: null). */
export const presentDashboardJob = (job: JobRecord, keys: ReadonlyMap<string, KeyRecord>, limits: Limits): DashboardJob => {
  const key = job.keyId === null ? undefined : keys.get(job.keyId)
  const presented = presentJob(job, limits)
  return new DashboardJob({
    ...presented,
    input: { ...presented.input, filename: job.inputFilename },
    key: key === undefined ? null : { id: key.id, name: key.name, mode: key.mode }
  })
}

export const presentDashboardJobDetail = (
  job: JobRecord, keys: ReadonlyMap<string, KeyRecord>, ledger: ReadonlyArray<LedgerEntryRecord>, limits: Limits
): DashboardJobDetail =>
  new DashboardJobDetail({
    ...presentDashboardJob(job, keys, limits),
    ledger: ledger.map((entry): DashboardJobLedgerItem => ({
      id: entry.id,
      kind: entry.kind,
      display: entryDisplay(entry),
      balance_delta: entry.balanceDelta,
      reserved_delta: entry.reservedDelta,
      created_at: toIso(entry.createdAt)
    }))
  })
