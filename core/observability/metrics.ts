/**
 * Every metric Hush exports (Effect's `Metric`, one process-wide registry), in one place so the
 * names, labels and units are read once. Rendered as Prometheus text by apps/api/metrics.ts;
 * docs/operations.md says what to alert on. Labels are bounded sets (route templates, error
 * codes, model ids, states): never a raw path, an id or anything a client chose freely.
 */
import { Clock, Effect, Metric, MetricBoundaries, MetricLabel } from "effect"

/** Seconds: 5 ms … 30 s, for HTTP requests and validations. */
const LATENCY_SECONDS = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30])
/** Seconds: 1 s … 2 h, for jobs. */
const JOB_SECONDS = MetricBoundaries.fromIterable([1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200])
/** Processing time over audio time: below 1 is faster than real time. */
const REALTIME_FACTOR = MetricBoundaries.fromIterable([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5])

export const httpRequests = Metric.counter("hush_http_requests_total", {
  description: "HTTP requests answered, by route template, method and status"
})
export const httpRequestDuration = Metric.histogram(
  "hush_http_request_duration_seconds",
  LATENCY_SECONDS,
  "Time from the request's arrival to its answer, by route template, method and status"
)
export const problems = Metric.counter("hush_problems_total", { description: "RFC 9457 problems answered, by error code and status" })
export const rateLimitRejections = Metric.counter("hush_rate_limit_rejections_total", {
  description: "Requests refused 429 rate_limited, by bucket"
})
export const quotaRejections = Metric.counter("hush_quota_rejections_total", {
  description: "Requests refused for a quota or for credit (quota_exceeded, insufficient_credit), by error code"
})

export const jobsCreated = Metric.counter("hush_jobs_created_total", { description: "Jobs created, by model and mode" })
export const jobsFinished = Metric.counter("hush_jobs_finished_total", {
  description: "Jobs that reached a final state (succeeded, failed, canceled), by state and model"
})
export const jobsInState = Metric.gauge("hush_jobs", { description: "Jobs queued or processing now, by state, model and mode (read at scrape)" })
export const queueDepth = Metric.gauge("hush_queue_depth", { description: "Live jobs waiting for a worker (read at scrape)" })
export const queueOldestAge = Metric.gauge("hush_queue_oldest_age_seconds", {
  description: "Age of the oldest live job waiting for a worker; 0 when none waits (read at scrape)"
})
export const jobDuration = Metric.histogram("hush_job_duration_seconds", JOB_SECONDS, "Processing time of a job that ran here, claim to finish, by model and outcome")
export const jobRealtimeFactor = Metric.histogram(
  "hush_job_realtime_factor",
  REALTIME_FACTOR,
  "Processing time over the audio's duration for jobs that succeeded here, by model"
)
export const workerSlots = Metric.gauge("hush_worker_slots", { description: "Jobs this process's worker may run at once (0: no worker)" })
export const workerBusySlots = Metric.gauge("hush_worker_busy_slots", { description: "Jobs this process's worker is running now" })
export const workerBusySeconds = Metric.counter("hush_worker_busy_seconds_total", {
  description: "Sum over jobs of the seconds they ran here; its rate over hush_worker_slots is the busy share"
})

export const validations = Metric.counter("hush_validations_total", { description: "Uploads validated, by outcome (ready, rejected, error)" })
export const validationDuration = Metric.histogram("hush_validation_duration_seconds", LATENCY_SECONDS, "Time to decode and check one upload, by outcome")

export const creditHeldMicros = Metric.counter("hush_credit_held_micros_total", { description: "Credit held for jobs when they were created, in micros" })
export const creditCapturedMicros = Metric.counter("hush_credit_captured_micros_total", { description: "Held credit charged when jobs succeeded, in micros" })
export const creditReleasedMicros = Metric.counter("hush_credit_released_micros_total", {
  description: "Held credit given back when jobs failed or were canceled, in micros"
})

export const databaseConnections = Metric.gauge("hush_database_connections", {
  description: "Connections to Hush's database by state (active, idle, idle in transaction…), all processes (read at scrape)"
})
export const databaseMaxConnections = Metric.gauge("hush_database_max_connections", { description: "The database server's max_connections (read at scrape)" })

/** Webhook delivery attempts by outcome (core/services/webhook-delivery.ts `AttemptOutcome`). */
export const webhookDeliveries = Metric.counter("hush_webhook_deliveries_total", { description: "Webhook delivery attempts, by outcome" })

/** Adds `amount` to a counter under the given labels. */
export const count = (counter: Metric.Metric.Counter<number>, labels: Record<string, string>, amount = 1) =>
  Metric.incrementBy(tagged(counter, labels), amount)

/** Records a value in a histogram under the given labels. */
export const observe = (histogram: Metric.Metric.Histogram<number>, labels: Record<string, string>, value: number) =>
  Metric.update(tagged(histogram, labels), value)

/**
 * `count` and `observe` done at once, outside the runtime, for the request path's every-request
 * metrics: the same update without the fiber's step (Hush tags no metric per fiber).
 */
export const countNow = (counter: Metric.Metric.Counter<number>, labels: Record<string, string>, amount = 1) =>
  tagged(counter, labels).unsafeUpdate(amount, [])
export const observeNow = (histogram: Metric.Metric.Histogram<number>, labels: Record<string, string>, value: number) =>
  tagged(histogram, labels).unsafeUpdate(value, [])

/**
 * The metric under these labels, made once per label set: tagging builds a new key (labels,
 * hash) each time, which cost the request path more than the update itself. Label values are
 * bounded (route templates, codes, statuses), so the cache is too.
 */
const taggedCache = new WeakMap<object, Map<string, unknown>>()
const tagged = <M extends Metric.Metric<any, any, any>>(metric: M, labels: Record<string, string>): M => {
  let byLabels = taggedCache.get(metric)
  if (byLabels === undefined) taggedCache.set(metric, byLabels = new Map())
  let key = ""
  for (const name in labels) key += `${name}=${labels[name]}\u0000`
  let found = byLabels.get(key) as M | undefined
  if (found === undefined) byLabels.set(key, found = Metric.taggedWithLabels(metric, labelsOf(labels)) as M)
  return found
}

/** Sets a gauge under the given labels. */
export const setGauge = (gauge: Metric.Metric.Gauge<number>, labels: Record<string, string>, value: number) =>
  Metric.set(Metric.taggedWithLabels(gauge, labelsOf(labels)), value)

const labelsOf = (labels: Record<string, string>) => Object.entries(labels).map(([key, value]) => MetricLabel.make(key, value))

/** Runs `effect` and records its duration, in seconds, in `histogram` under labels it may choose from its exit. */
export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>, record: (seconds: number, outcome: "success" | "failure") => Effect.Effect<void>) =>
  Effect.flatMap(Clock.currentTimeNanos, (started) =>
    Effect.onExit(effect, (exit) =>
      Effect.flatMap(Clock.currentTimeNanos, (ended) =>
        record(Number(ended - started) / 1e9, exit._tag === "Success" ? "success" : "failure"))))
