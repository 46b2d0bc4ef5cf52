/** Usage aggregates over the in-memory jobs (the same arithmetic as the SQL of adapters/postgres/usage.ts). */
import { Effect, HashMap, Layer } from "effect"
import type { JobRecord } from "../../core/domain/records.js"
import { type UsageBucket, UsageRepo } from "../../core/ports/usage.js"
import { DAY } from "../../core/time.js"
import { MemoryDb } from "./store.js"

const dayOf = (millis: number) => new Date(Math.floor(millis / DAY) * DAY).toISOString().slice(0, 10)

export const layerMemoryUsageRepo = Layer.effect(UsageRepo, Effect.map(MemoryDb, (db) => ({
  usage: (query) =>
    db.read((s) => {
      const groupOf = (job: JobRecord) => (query.group === "day" ? dayOf(job.createdAt) : query.group === "model" ? job.model : job.keyId)
      const groups = new Map<string | null, UsageBucket>()
      for (const job of HashMap.values(s.jobs)) {
        if (job.accountId !== query.accountId || job.mode !== query.mode || job.createdAt < query.from || job.createdAt >= query.to) continue
        const key = groupOf(job)
        const b = groups.get(key) ?? { key, jobs: 0, succeeded: 0, failed: 0, billableSeconds: 0, chargedMicros: 0 }
        const succeeded = job.status === "succeeded"
        groups.set(key, {
          key,
          jobs: b.jobs + 1,
          succeeded: b.succeeded + (succeeded ? 1 : 0),
          failed: b.failed + (job.status === "failed" ? 1 : 0),
          billableSeconds: b.billableSeconds + (succeeded ? job.pricing.billableSeconds : 0),
          chargedMicros: b.chargedMicros + (succeeded ? job.chargedMicros ?? 0 : 0)
        })
      }
      return [...groups.values()]
    })
})))
