/**
 * A span per call of a port's service (`BlobStore.write`, …): every method that answers an
 * Effect or a Stream is wrapped; anything else is passed through. For ports whose adapters
 * do I/O that @effect/sql does not already trace.
 */
import { Context, Effect, Layer, Stream } from "effect"

const traceService = <S extends object>(prefix: string, service: S): S => {
  const traced: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(service)) {
    traced[name] = typeof member !== "function"
      ? member
      : (...args: Array<unknown>) => {
        const result = (member as (...a: Array<unknown>) => unknown).apply(service, args)
        const span = `${prefix}.${name}`
        if (Effect.isEffect(result)) return Effect.withSpan(result, span, { kind: "client" })
        if (Stream.StreamTypeId in (result as object)) return Stream.withSpan(result as Stream.Stream<unknown, unknown, unknown>, span, { kind: "client" })
        return result
      }
  }
  return traced as S
}

/** The layer with each call of its service traced. */
export const traced = <I, S extends object, E, R>(tag: Context.Tag<I, S>, layer: Layer.Layer<I, E, R>): Layer.Layer<I, E, R> =>
  Layer.effect(tag, Effect.map(tag, (service) => traceService(tag.key.replace(/^hush\//, ""), service))).pipe(Layer.provide(layer))
