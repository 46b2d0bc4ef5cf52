/**
 * How a Hush process tells its operator what it does (docs/operations.md, "Observing Hush"):
 *
 * - `METRICS_TOKEN`: `/metrics` answers Prometheus text to `Authorization: Bearer <token>`;
 *   unset, `/metrics` is off (404). `METRICS_PORT`: served on that port instead (same token),
 *   and 404 on the public one.
 * - `HUSH_LOG_FORMAT=json`: one JSON object a line (production); else readable logfmt (log-lines.ts).
 *   `HUSH_LOG_LEVEL` (trace, debug, info, warn, error, any case; default info).
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: traces exported by OTLP/HTTP (apps/runtime/tracing.ts); off unset.
 *   `OTEL_TRACES_SAMPLER`/`OTEL_TRACES_SAMPLER_ARG`: which traces are kept (sampler.ts).
 *
 * Every log line carries the current trace and span ids when a span is active.
 */
import { Config, ConfigError, Effect, FiberRef, HashSet, Layer, Logger, type LogLevel, Option, Redacted } from "effect"
import { lineLogger, type LineSink, stdoutSink } from "./log-lines.js"
import { ALWAYS_ON, loadSamplerConfig, type SamplerConfig } from "./sampler.js"

export interface ObservabilityConfig {
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  readonly metricsPort: Option.Option<number>
  readonly logFormat: "json" | "text"
  readonly logLevel: Option.Option<LogLevel.LogLevel>
  readonly otlpEndpoint: Option.Option<string>
  /** `service.name` of the exported spans (OTEL_SERVICE_NAME; default `hush`). */
  readonly serviceName: string
  /** Which traces are kept (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG; sampler.ts). */
  readonly sampler: SamplerConfig
}

export const DEFAULT_OBSERVABILITY: ObservabilityConfig = {
  metricsToken: Option.none(),
  metricsPort: Option.none(),
  logFormat: "text",
  logLevel: Option.none(),
  otlpEndpoint: Option.none(),
  serviceName: "hush",
  sampler: ALWAYS_ON
}

const nonEmpty = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map((value) => Option.filter(Option.map(value, (v) => v.trim()), (v) => v !== "")))

export const loadObservabilityConfig = Effect.gen(function*() {
  const token = yield* nonEmpty("METRICS_TOKEN")
  if (Option.isSome(token) && token.value.length < 16) {
    return yield* Effect.fail(ConfigError.InvalidData(["METRICS_TOKEN"], "METRICS_TOKEN must have at least 16 characters"))
  }
  const config: ObservabilityConfig = {
    metricsToken: Option.map(token, Redacted.make),
    metricsPort: yield* Config.option(Config.port("METRICS_PORT")),
    logFormat: (yield* Config.literal("json", "text")("HUSH_LOG_FORMAT").pipe(Config.withDefault("text" as const))),
    logLevel: yield* Config.option(Config.logLevel("HUSH_LOG_LEVEL")),
    otlpEndpoint: yield* nonEmpty("OTEL_EXPORTER_OTLP_ENDPOINT"),
    serviceName: Option.getOrElse(yield* nonEmpty("OTEL_SERVICE_NAME"), () => "hush"),
    sampler: yield* loadSamplerConfig
  }
  return config
})

let stdout: LineSink | undefined
/** The process's stdout sink, made once (it flushes on exit). */
const processSink = () => (stdout ??= stdoutSink())

/** The process's one logger (one line a record: JSON, or logfmt) and level; the entry points install it (tests keep theirs). */
export const layerLogging = (config: ObservabilityConfig, sink: LineSink = processSink()): Layer.Layer<never> => {
  const logger = lineLogger(config.logFormat, sink)
  // the only logger: NodeRuntime.runMain adds its pretty (multi-line) one beside the default
  const format = Layer.scopedDiscard(Effect.locallyScopedWith(FiberRef.currentLoggers, () => HashSet.make<Array<Logger.Logger<unknown, any>>>(logger)))
  const level = Option.match(config.logLevel, { onNone: () => Layer.empty, onSome: Logger.minimumLogLevel })
  return Layer.merge(format, level)
}


