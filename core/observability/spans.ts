/**
 * Whether a span is one a tracer records. With tracing off (apps/runtime/tracing.ts) Effect
 * still hands out spans, no-ops whose ids are placeholders: they must never reach a log line,
 * a `traceparent` header or an attribute.
 */
import { Context, Effect, Option, Tracer } from "effect"

export const isRecorded = (span: Tracer.AnySpan): span is Tracer.Span =>
  span._tag === "Span" && !Context.get(span.context, Tracer.DisablePropagation)

/** The current span when a tracer records it; none otherwise. */
export const recordedSpan: Effect.Effect<Option.Option<Tracer.Span>> = Effect.map(
  Effect.serviceOption(Tracer.ParentSpan),
  Option.filter(isRecorded)
)
