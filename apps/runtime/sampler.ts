/**
 * Head sampling for traces, as OpenTelemetry's SDKs read it from the environment:
 * `OTEL_TRACES_SAMPLER` (`always_on`, `always_off`, `traceidratio`, and each as
 * `parentbased_…`; default `parentbased_always_on`) and `OTEL_TRACES_SAMPLER_ARG` (the ratio,
 * 0…1, for the `traceidratio` ones; default 1).
 *
 * A trace is kept or dropped at its root: a root span (no parent, or a parent from another
 * process when the sampler is not parent-based) is kept with the ratio's probability; every
 * other span follows its parent, so a trace is whole or absent. A dropped span is still a span
 * with ids, so `traceparent` goes on (flags `00`) and log lines name the trace, but it costs no
 * attributes map and is never exported.
 */
import { HttpTraceContext, type HttpServerRequest } from "@effect/platform"
import { Config, ConfigError, Effect, Option, Tracer } from "effect"

export interface SamplerConfig {
  /** The share of new traces kept, 0…1. */
  readonly ratio: number
  /** Whether a parent from another process (an inbound `traceparent`) decides for its children. */
  readonly parentBased: boolean
}

export const ALWAYS_ON: SamplerConfig = { ratio: 1, parentBased: true }

const SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const

export const loadSamplerConfig = Effect.gen(function*() {
  const name = yield* Config.literal(...SAMPLERS)("OTEL_TRACES_SAMPLER").pipe(Config.withDefault("parentbased_always_on" as const))
  const argument = yield* Config.option(Config.number("OTEL_TRACES_SAMPLER_ARG"))
  const ratio = name.endsWith("always_on") ? 1 : name.endsWith("always_off") ? 0 : Option.getOrElse(argument, () => 1)
  if (!(ratio >= 0 && ratio <= 1)) {
    return yield* Effect.fail(ConfigError.InvalidData(["OTEL_TRACES_SAMPLER_ARG"], "OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1"))
  }
  return { ratio, parentBased: name.startsWith("parentbased_") } satisfies SamplerConfig
})

const hex = (length: number) => {
  let id = ""
  while (id.length < length) id += Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, "0")
  return id.slice(0, length)
}

/** A span of a dropped trace: ids and a parent, nothing recorded, nothing exported. */
const droppedSpan = (
  name: string, parent: Option.Option<Tracer.AnySpan>, context: Tracer.Span["context"], links: ReadonlyArray<Tracer.SpanLink>,
  startTime: bigint, kind: Tracer.SpanKind
): Tracer.Span => {
  const span: Tracer.Span = {
    _tag: "Span",
    name,
    spanId: hex(16),
    traceId: Option.isSome(parent) ? parent.value.traceId : hex(32),
    parent,
    context,
    status: { _tag: "Started", startTime },
    attributes: new Map(),
    links,
    sampled: false,
    kind,
    end(endTime, exit) {
      ;(span as { status: Tracer.SpanStatus }).status = { _tag: "Ended", startTime, endTime, exit }
    },
    attribute() {},
    event() {},
    addLinks() {}
  }
  return span
}

/** `tracer`, keeping only the traces `config` samples. */
export const sampled = (tracer: Tracer.Tracer, config: SamplerConfig): Tracer.Tracer => {
  // always_on: nothing to decide (parent-based, a caller's unsampled flag still drops its trace)
  if (config.ratio >= 1 && !config.parentBased) return tracer
  return Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      const fromParent = Option.isSome(parent) && (config.parentBased || parent.value._tag === "Span") ? parent.value.sampled : undefined
      const keep = fromParent ?? Math.random() < config.ratio
      return keep ? tracer.span(name, parent, context, links, startTime, kind, options) : droppedSpan(name, parent, context, links, startTime, kind)
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })
}

/**
 * The same decision for a whole request, made once when it arrives: a request whose trace is
 * dropped gets no span at all, not even dropped ones (the HTTP server's span middleware would
 * still parse its URL and redact its headers, and every use case and SQL statement under it
 * would make a span object), so a sampled-out request costs what it costs with tracing off.
 * Remembered per request, so the span middleware and the edge agree: both ask with the request
 * as the server put it in the fiber's context, before routing or the edge copy it.
 */
export const requestSampler = (config: SamplerConfig) => {
  const decided = new WeakMap<HttpServerRequest.HttpServerRequest, boolean>()
  return (request: HttpServerRequest.HttpServerRequest): boolean => {
    let keep = decided.get(request)
    if (keep === undefined) {
      const caller = config.parentBased ? HttpTraceContext.fromHeaders(request.headers) : Option.none()
      keep = Option.isSome(caller) ? caller.value.sampled : config.ratio >= 1 || Math.random() < config.ratio
      decided.set(request, keep)
    }
    return keep
  }
}
