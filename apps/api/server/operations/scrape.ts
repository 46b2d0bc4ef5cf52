/**
 * One scrape: the gauges read from the store at this moment (queue, jobs in flight, database
 * connections), then the whole registry as Prometheus text. A label set seen before and
 * absent now is set to 0, so a model whose queue drained does not keep its last value.
 */
import { Clock, Effect, Metric, Option } from "effect"
import * as Metrics from "../../../../core/observability/metrics.js"
import { OperationalStats } from "../../../../core/ports/operational-stats.js"
import { renderPrometheus } from "./prometheus.js"

type Gauge = Metric.Metric.Gauge<number>

export const makeScrape = Effect.gen(function*() {
  const stats = yield* OperationalStats
  const seen = new Map<Gauge, Map<string, Record<string, string>>>()
  /** Sets every label set of `gauge` given now, and 0 for those of an earlier scrape not given now. */
  const setAll = (gauge: Gauge, samples: ReadonlyArray<{ readonly labels: Record<string, string>; readonly value: number }>) =>
    Effect.suspend(() => {
      const before = seen.get(gauge) ?? new Map<string, Record<string, string>>()
      const now = new Map(samples.map((s) => [JSON.stringify(s.labels), s.labels] as const))
      seen.set(gauge, new Map([...before, ...now]))
      const zeroes = [...before].filter(([key]) => !now.has(key)).map(([, labels]) => ({ labels, value: 0 }))
      return Effect.forEach([...samples, ...zeroes], (s) => Metrics.setGauge(gauge, s.labels, s.value), { discard: true })
    })
  return Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const queue = yield* stats.queue
    yield* setAll(Metrics.jobsInState, queue.active.map((c) => ({ labels: { state: c.state, model: c.model, mode: c.mode }, value: c.count })))
    const waiting = queue.active.filter((c) => c.state === "queued" && c.mode === "live").reduce((sum, c) => sum + c.count, 0)
    yield* Metric.set(Metrics.queueDepth, waiting)
    yield* Metric.set(Metrics.queueOldestAge, queue.oldestQueuedAt === null ? 0 : Math.max(0, (now - queue.oldestQueuedAt) / 1000))
    const connections = yield* stats.connections
    if (Option.isSome(connections)) {
      yield* setAll(Metrics.databaseConnections, connections.value.byState.map((c) => ({ labels: { state: c.state }, value: c.count })))
      yield* Metric.set(Metrics.databaseMaxConnections, connections.value.maxConnections)
    }
    return renderPrometheus(yield* Metric.snapshot)
  })
})
