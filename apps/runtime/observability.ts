/**
 * How a Hush process tells its operator what it does (docs/operations.md, "Observing Hush"):
 *
 * - `METRICS_TOKEN`: `/metrics` answers Prometheus text to `Authorization: Bearer <token>`;
 *   unset, `/metrics` is off (404). `METRICS_PORT`: served on that port instead (same token),
 *   and 404 on the public one.
 * - `HUSH_LOG_FORMAT=json`: one JSON object a line (production); else Effect's readable logfmt.
 *   `HUSH_LOG_LEVEL` (trace, debug, info, warn, error, any case; default info).
 * - `OTEL_EXPORTER_OTLP_ENDPOINT`: traces exported by OTLP/HTTP (apps/runtime/tracing.ts); off unset.
 *
 * Every log line carries the current trace and span ids when a span is active.
 */
import { Config, ConfigError, Context, Effect, FiberRef, FiberRefs, HashMap, HashSet, Layer, Logger, LogLevel, Option, Redacted, Tracer } from "effect"

export interface ObservabilityConfig {
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  readonly metricsPort: Option.Option<number>
  readonly logFormat: "json" | "text"
  readonly logLevel: Option.Option<LogLevel.LogLevel>
  readonly otlpEndpoint: Option.Option<string>
  /** `service.name` of the exported spans (OTEL_SERVICE_NAME; default `hush`). */
  readonly serviceName: string
}

export const DEFAULT_OBSERVABILITY: ObservabilityConfig = {
  metricsToken: Option.none(),
  metricsPort: Option.none(),
  logFormat: "text",
  logLevel: Option.none(),
  otlpEndpoint: Option.none(),
  serviceName: "hush"
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
    serviceName: Option.getOrElse(yield* nonEmpty("OTEL_SERVICE_NAME"), () => "hush")
  }
  return config
})

/** The active span's ids, read from the logging fiber's context. */
const traceOf = (refs: FiberRefs.FiberRefs): Record<string, string> => {
  const span = Context.getOption(FiberRefs.getOrDefault(refs, FiberRef.currentContext), Tracer.ParentSpan)
  return Option.isSome(span) ? { traceId: span.value.traceId, spanId: span.value.spanId } : {}
}

/** `logger` with the trace and span ids added to every line's annotations. */
const withTraceIds = <O>(logger: Logger.Logger<unknown, O>) =>
  Logger.make<unknown, O>((options) => {
    const ids = traceOf(options.context)
    const annotations = Object.entries(ids).reduce((map, [key, value]) => HashMap.set(map, key, value as unknown), options.annotations)
    return logger.log({ ...options, annotations })
  })

const jsonLine = Logger.map(Logger.structuredLogger, (entry) => {
  const { annotations, logLevel, spans, ...rest } = entry
  // flat: `{"timestamp":…,"level":"INFO","message":"request","requestId":…}`, as log shippers expect
  return JSON.stringify({ ...rest, level: logLevel, ...(Object.keys(spans).length === 0 ? {} : { spans }), ...annotations })
})

/** The process's one logger (one line a record: JSON, or logfmt) and level; the entry points install it (tests keep theirs). */
export const loggingLayer = (config: ObservabilityConfig): Layer.Layer<never> => {
  const logger = config.logFormat === "json" ? Logger.withConsoleLog(withTraceIds(jsonLine)) : withTraceIds(Logger.defaultLogger)
  // the only logger: NodeRuntime.runMain adds its pretty (multi-line) one beside the default
  const format = Layer.scopedDiscard(Effect.locallyScopedWith(FiberRef.currentLoggers, () => HashSet.make<Array<Logger.Logger<unknown, any>>>(logger)))
  const level = Option.match(config.logLevel, { onNone: () => Layer.empty, onSome: Logger.minimumLogLevel })
  return Layer.merge(format, level)
}


