/** OperationalStats over the in-memory database: counted from its jobs; no connections. */
import { Effect, HashMap, Layer, Option } from "effect"
import { type JobCount, OperationalStats } from "../../core/ports/operational-stats.js"
import { MemoryDb } from "./store.js"

export const layerMemoryOperationalStats = Layer.effect(OperationalStats, Effect.map(MemoryDb, (db) => ({
  queue: db.read((state) => {
    const counts = new Map<string, JobCount>()
    let oldestQueuedAt: number | null = null
    for (const job of HashMap.values(state.jobs)) {
      if (job.status !== "queued" && job.status !== "processing") continue
      const key = `${job.status}\u0000${job.model}\u0000${job.mode}`
      const found = counts.get(key)
      counts.set(key, { state: job.status, model: job.model, mode: job.mode, count: (found?.count ?? 0) + 1 })
      if (job.status === "queued" && job.mode === "live" && (oldestQueuedAt === null || job.createdAt < oldestQueuedAt)) oldestQueuedAt = job.createdAt
    }
    return { active: [...counts.values()], oldestQueuedAt }
  }),
  connections: Effect.succeed(Option.none())
})))
