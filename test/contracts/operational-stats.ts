/** The OperationalStats contract: the scrape's aggregate reads, written once for every adapter. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, type Layer } from "effect"
import { OperationalStats } from "../../core/ports/operational-stats.js"
import { JobRepo } from "../../core/ports/repositories.js"
import { HOUR, makeJob, T0 } from "./fixtures.js"

export const operationalStatsContract = (
  name: string,
  makeLayer: () => Layer.Layer<OperationalStats | JobRepo, unknown, never>,
  options: { readonly hasConnections: boolean }
) => {
  describe(`${name} OperationalStats`, () => {
    const run = <A, E>(body: Effect.Effect<A, E, OperationalStats | JobRepo>) => Effect.provide(body, makeLayer())

    it.effect("counts queued and processing jobs by state, model and mode; the oldest live queued job", () =>
      run(Effect.gen(function*() {
        const stats = yield* OperationalStats
        expect(yield* stats.queue).toEqual({ active: [], oldestQueuedAt: null })
        const jobs = yield* JobRepo
        for (const job of [
          makeJob({ status: "queued", model: "xiph/rnnoise", mode: "live", createdAt: T0 - HOUR }),
          makeJob({ status: "queued", model: "xiph/rnnoise", mode: "live", createdAt: T0 - 2 * HOUR }),
          // older, but test mode: not the live queue's age
          makeJob({ status: "queued", model: "xiph/rnnoise", mode: "test", createdAt: T0 - 5 * HOUR }),
          makeJob({ status: "processing", model: "hush/denoise-pro", mode: "live", createdAt: T0 - 3 * HOUR, leaseOwner: "w", leaseExpiresAt: T0 }),
          makeJob({ status: "succeeded", model: "xiph/rnnoise", mode: "live", createdAt: T0 - 9 * HOUR })
        ]) yield* jobs.insert(job)
        const queue = yield* stats.queue
        const sorted = [...queue.active].sort((a, b) => `${a.state}${a.model}${a.mode}`.localeCompare(`${b.state}${b.model}${b.mode}`))
        expect(sorted).toEqual([
          { state: "processing", model: "hush/denoise-pro", mode: "live", count: 1 },
          { state: "queued", model: "xiph/rnnoise", mode: "live", count: 2 },
          { state: "queued", model: "xiph/rnnoise", mode: "test", count: 1 }
        ])
        expect(queue.oldestQueuedAt).toBe(T0 - 2 * HOUR)
      })))

    it.effect(`connections: ${options.hasConnections ? "this database's, with max_connections" : "none"}`, () =>
      run(Effect.gen(function*() {
        const connections = yield* (yield* OperationalStats).connections
        expect(Option.isSome(connections)).toBe(options.hasConnections)
        if (Option.isSome(connections)) {
          // at least the connection asking
          expect(connections.value.byState.reduce((sum, s) => sum + s.count, 0)).toBeGreaterThanOrEqual(1)
          expect(connections.value.maxConnections).toBeGreaterThan(0)
        }
      })))
  })
}
