/** Head sampling (apps/runtime/sampler.ts): which traces reach the exporting tracer, and how the environment names them. */
import { ConfigProvider, Effect, Either, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { ALWAYS_ON, loadSamplerConfig, sampled, type SamplerConfig } from "../../../apps/runtime/sampler.js"

/** A tracer that records the names of the spans it was asked for (Effect's own tracer does the rest). */
const recording = () => {
  const names: Array<string> = []
  const inner = Effect.runSync(Effect.tracerWith(Effect.succeed))
  const tracer = Tracer.make({
    span: (name, ...rest) => {
      names.push(name)
      return inner.span(name, ...rest)
    },
    context: (f, fiber) => inner.context(f, fiber)
  })
  return { names, tracer }
}

const trace = (config: SamplerConfig, parent?: Tracer.ExternalSpan) => {
  const { names, tracer } = recording()
  const child = Effect.void.pipe(Effect.withSpan("child"))
  const root = child.pipe(Effect.withSpan("root", parent === undefined ? {} : { parent }))
  Effect.runSync(root.pipe(Effect.withTracer(sampled(tracer, config))))
  return names
}

describe("sampler", () => {
  it("always_on hands the tracer back as it is", () => {
    const { tracer } = recording()
    expect(sampled(tracer, { ratio: 1, parentBased: false })).toBe(tracer)
  })

  it("ratio 0 drops a new trace whole, children included", () => {
    expect(trace({ ratio: 0, parentBased: true })).toEqual([])
  })

  it("ratio 1 keeps it whole", () => {
    expect(trace({ ratio: 1, parentBased: false })).toEqual(["root", "child"])
  })

  it("parent-based: a caller's sampled flag decides, whatever the ratio", () => {
    const caller = (sampledFlag: boolean) => Tracer.externalSpan({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: sampledFlag })
    expect(trace({ ratio: 0, parentBased: true }, caller(true))).toEqual(["root", "child"])
    expect(trace({ ratio: 1, parentBased: true }, caller(false))).toEqual([])
    // not parent-based: the ratio decides at this process's root
    expect(trace({ ratio: 0, parentBased: false }, caller(true))).toEqual([])
  })

  it("a dropped span keeps the trace's ids for propagation, marked unsampled", () => {
    const { tracer } = recording()
    const span = Effect.runSync(Effect.currentSpan.pipe(Effect.withSpan("root"), Effect.withTracer(sampled(tracer, { ratio: 0, parentBased: true }))))
    expect(span.sampled).toBe(false)
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/)
  })

  it("a ratio keeps about that share of new traces", () => {
    const { names, tracer } = recording()
    const kept = sampled(tracer, { ratio: 0.25, parentBased: true })
    for (let i = 0; i < 4_000; i++) Effect.runSync(Effect.void.pipe(Effect.withSpan("root"), Effect.withTracer(kept)))
    // binomial(4000, 0.25): mean 1000, sd 27; ±200 is over 7 sd
    expect(names.length).toBeGreaterThan(800)
    expect(names.length).toBeLessThan(1_200)
  })
})

describe("sampler configuration", () => {
  const load = (env: Record<string, string>) =>
    Effect.runSync(Effect.either(loadSamplerConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))))
  const config = (env: Record<string, string>) => Either.getOrThrow(load(env))

  it("defaults to parent-based, always on", () => {
    expect(config({})).toEqual(ALWAYS_ON)
  })

  it("reads OpenTelemetry's names and ratio", () => {
    expect(config({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" })).toEqual({ ratio: 0.1, parentBased: true })
    expect(config({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.5" })).toEqual({ ratio: 0.5, parentBased: false })
    expect(config({ OTEL_TRACES_SAMPLER: "always_off" })).toEqual({ ratio: 0, parentBased: false })
  })

  it("refuses a ratio outside 0…1 and an unknown sampler", () => {
    expect(Either.isLeft(load({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }))).toBe(true)
    expect(Either.isLeft(load({ OTEL_TRACES_SAMPLER: "sometimes" }))).toBe(true)
  })
})
