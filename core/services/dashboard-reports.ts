/**
 * What the dashboard shows of an account: credit with its lots, the ledger, usage and job
 * history (decisions.md, Dashboard details). Every read is bounded: pages of at most 100,
 * lots capped, usage one aggregate query over an indexed range however many days it spans.
 */
import { Clock, Effect } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import type { JobStatus, Mode } from "../domain/enums.js"
import type { AccountRecord, KeyRecord } from "../domain/records.js"
import { InvalidRequest } from "../errors.js"
import { formatMicros } from "../money.js"
import { KeyRepo, WalletRepo } from "../ports/repositories.js"
import { type UsageBucket, type UsageGrouping, UsageRepo } from "../ports/usage.js"
import { DAY } from "../time.js"
import { creditsOf } from "./credits.js"
import { decodeSeqCursor, encodeSeqCursor } from "./cursor.js"
import { jobsPage, ownedJob } from "./jobs.js"

const DEFAULT_PAGE = 20

/** Dashboard credits: the wallet now (due expiries applied) and its unexpired lots, earliest expiry first. */
export const dashboardCredits = (account: AccountRecord) =>
  Effect.gen(function*() {
    const credits = yield* creditsOf(account.id)
    const max = (yield* AccountSettingsConfig).dashboardLots
    const now = yield* Clock.currentTimeMillis
    const lots = yield* Effect.flatMap(WalletRepo, (wallets) => wallets.unexpiredLots(account.id, now, max + 1))
    return { credits, lots: lots.slice(0, max), truncated: lots.length > max }
  })

/** `GET /v1/dashboard/ledger`: newest first, by `seq`, with a signed cursor. */
export const ledgerPage = (accountId: string, request: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
  Effect.gen(function*() {
    const scope = `ledger:${accountId}`
    const beforeSeq = request.cursor === undefined ? undefined : yield* decodeSeqCursor(scope, request.cursor)
    const limit = request.limit ?? DEFAULT_PAGE
    const rows = yield* Effect.flatMap(WalletRepo, (wallets) => wallets.ledgerPage({ accountId, limit: limit + 1, beforeSeq }))
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    const nextCursor = rows.length > limit && last !== undefined ? yield* encodeSeqCursor(scope, last.seq) : null
    return { data: page, nextCursor }
  })

/** The account's keys by id (revoked ones too): names for usage rows and job key summaries. */
export const keysById = (accountId: string) =>
  Effect.map(
    Effect.flatMap(KeyRepo, (keys) => keys.listByAccount(accountId)),
    (keys): ReadonlyMap<string, KeyRecord> => new Map(keys.map((key) => [key.id, key]))
  )

export interface DashboardJobsRequest {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
  readonly status?: JobStatus | undefined
  readonly model?: string | undefined
  readonly mode?: Mode | undefined
}

/** `GET /v1/dashboard/jobs`: the API's listing for the chosen mode (live by default). */
export const dashboardJobs = (accountId: string, request: DashboardJobsRequest) =>
  Effect.gen(function*() {
    const page = yield* jobsPage({ accountId, mode: request.mode ?? "live" }, request)
    return { ...page, keys: yield* keysById(accountId) }
  })

/** `GET /v1/dashboard/jobs/{id}`: one job of the chosen mode with its hold, capture and release entries. */
export const dashboardJob = (accountId: string, jobId: string, mode: Mode | undefined) =>
  Effect.gen(function*() {
    const job = yield* ownedJob({ accountId, mode: mode ?? "live" }, jobId)
    const entries = yield* Effect.flatMap(WalletRepo, (wallets) => wallets.ledgerForJob(job.id))
    const ledger = entries.filter((e) => e.kind === "hold" || e.kind === "capture" || e.kind === "release")
    return { job, ledger, keys: yield* keysById(accountId) }
  })

// ─────────────────────────────────────────────────────────────── usage

const dayOf = (millis: number) => new Date(millis).toISOString().slice(0, 10)
const startOf = (day: string) => Date.parse(`${day}T00:00:00Z`)

export interface UsageRequest {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly group?: UsageGrouping | undefined
  readonly mode?: Mode | undefined
}

export interface UsageLine {
  readonly key: string | null
  readonly name: string | null
  readonly jobs: number
  readonly succeeded: number
  readonly failed: number
  readonly billableSeconds: number
  readonly chargedMicros: number
  readonly display: string
}

const line = (key: string | null, name: string | null, b: Omit<UsageBucket, "key">): UsageLine => ({
  key, name, jobs: b.jobs, succeeded: b.succeeded, failed: b.failed, billableSeconds: b.billableSeconds,
  chargedMicros: b.chargedMicros, display: formatMicros(b.chargedMicros)
})

const ZERO = { jobs: 0, succeeded: 0, failed: 0, billableSeconds: 0, chargedMicros: 0 }

const byChargeThenKey = (a: UsageLine, b: UsageLine) =>
  b.chargedMicros - a.chargedMicros || (a.key ?? "").localeCompare(b.key ?? "")

/**
 * `GET /v1/dashboard/usage`. `to` defaults to today (UTC), `from` to 29 days before `to`;
 * `from` ≤ `to` and at most 366 days apart, else `400 invalid_request`. Day rows cover every
 * day of the range, oldest first; model and key rows go by charge, largest first.
 */
export const usageReport = (accountId: string, request: UsageRequest) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const settings = yield* AccountSettingsConfig
    const to = request.to ?? dayOf(now)
    const from = request.from ?? dayOf(startOf(to) - 29 * DAY)
    const group = request.group ?? "day"
    const mode = request.mode ?? "live"
    if (startOf(from) > startOf(to)) {
      return yield* new InvalidRequest({ status: 400, field: "from", detail: `from (${from}) must not be after to (${to})` })
    }
    if ((startOf(to) - startOf(from)) / DAY > settings.usageMaxDays) {
      return yield* new InvalidRequest({ status: 400, field: "from", detail: `from and to may be at most ${settings.usageMaxDays} days apart` })
    }
    const buckets = yield* Effect.flatMap(UsageRepo, (usage) =>
      usage.usage({ accountId, mode, from: startOf(from), to: startOf(to) + DAY, group }))
    let rows: Array<UsageLine>
    if (group === "day") {
      const byDay = new Map(buckets.map((b) => [b.key, b]))
      rows = []
      for (let day = startOf(from); day <= startOf(to); day += DAY) rows.push(line(dayOf(day), null, byDay.get(dayOf(day)) ?? ZERO))
    } else if (group === "model") {
      rows = buckets.map((b) => line(b.key, null, b)).sort(byChargeThenKey)
    } else {
      const keys = yield* keysById(accountId)
      rows = buckets.map((b) => {
        const key = b.key === null ? undefined : keys.get(b.key)
        return line(key?.id ?? null, key?.name ?? null, b)
      }).sort(byChargeThenKey)
    }
    const sum = (field: keyof typeof ZERO) => rows.reduce((n, r) => n + r[field], 0)
    const totals = {
      jobs: sum("jobs"), succeeded: sum("succeeded"), failed: sum("failed"),
      billableSeconds: sum("billableSeconds"), chargedMicros: sum("chargedMicros")
    }
    return { from, to, group, mode, rows, totals: { ...totals, display: formatMicros(totals.chargedMicros) } }
  })
