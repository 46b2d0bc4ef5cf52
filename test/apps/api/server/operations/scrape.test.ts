/**
 * The scrape's database gauges (issue 15, database pool use): the test servers run on the
 * memory store, which has no connections to report, so the e2e metrics test never sees them;
 * here a stats port reports them, as the PostgreSQL adapter does (its reads are checked by
 * test/contracts/operational-stats.ts).
 */
import { Effect, Layer, Option, Ref } from "effect"
import parsePrometheus from "parse-prometheus-text-format"
import { describe, expect, it } from "vitest"
import { makeScrape } from "../../../../../apps/api/server/operations/scrape.js"
import { type ConnectionSnapshot, OperationalStats } from "../../../../../core/ports/operational-stats.js"

const gauge = (text: string, name: string, labels: Record<string, string> = {}) => {
  const family = parsePrometheus(text).find((f) => f.name === name)
  expect(family?.type, name).toBe("GAUGE")
  const samples = family!.metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
  expect(samples, `${name} ${JSON.stringify(labels)}`).toHaveLength(1)
  return Number(samples[0]!.value)
}

describe("the scrape's database gauges", () => {
  it("report the connections by state and the server's maximum; a state gone since the last scrape reads 0", async () => {
    const texts = await Effect.runPromise(Effect.gen(function*() {
      const connections = yield* Ref.make<ConnectionSnapshot>({
        byState: [{ state: "active", count: 3 }, { state: "idle in transaction", count: 2 }],
        maxConnections: 100
      })
      const stats = Layer.succeed(OperationalStats, {
        queue: Effect.succeed({ active: [], oldestQueuedAt: null }),
        connections: Effect.map(Ref.get(connections), Option.some)
      })
      const scrape = yield* Effect.provide(makeScrape, stats)
      const first = yield* scrape
      yield* Ref.set(connections, { byState: [{ state: "active", count: 7 }], maxConnections: 100 })
      return [first, yield* scrape] as const
    }))
    const [first, second] = texts
    expect(gauge(first, "hush_database_connections", { state: "active" })).toBe(3)
    expect(gauge(first, "hush_database_connections", { state: "idle in transaction" })).toBe(2)
    expect(gauge(first, "hush_database_max_connections")).toBe(100)
    expect(gauge(second, "hush_database_connections", { state: "active" })).toBe(7)
    expect(gauge(second, "hush_database_connections", { state: "idle in transaction" })).toBe(0)
  })
})
