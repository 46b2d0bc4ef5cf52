import { Context, Effect } from "effect"
import type { Mode } from "../domain/enums.js"

export type UsageGrouping = "day" | "model" | "key"

export interface UsageQuery {
  readonly accountId: string
  readonly mode: Mode
  /** Jobs created in [from, to): epoch millis. */
  readonly from: number
  readonly to: number
  readonly group: UsageGrouping
}

/** One group's totals. Billable seconds and charged micros count succeeded jobs only. */
export interface UsageBucket {
  /** `YYYY-MM-DD` (UTC) for day, the model id for model, the key id (null: no key) for key. */
  readonly key: string | null
  readonly jobs: number
  readonly succeeded: number
  readonly failed: number
  readonly billableSeconds: number
  readonly chargedMicros: number
}

/** Aggregates over the jobs table, one query per call whatever the range (indexed by account, mode, created_at). */
export class UsageRepo extends Context.Tag("hush/UsageRepo")<UsageRepo, {
  /** Groups that have jobs, in no particular order. */
  readonly usage: (query: UsageQuery) => Effect.Effect<ReadonlyArray<UsageBucket>>
}>() {}
