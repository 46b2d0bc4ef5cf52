/** Job step spans (core/observability/steps.ts): opened and closed by plain calls, children of the span current when made. */
import { Effect, Exit, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { makeJobSteps } from "../../../core/observability/steps.js"

/** Runs `program` under Effect's own tracer, keeping every span it makes. */
const recording = async <A, E>(program: Effect.Effect<A, E>) => {
  const spans: Array<Tracer.Span> = []
  const exit = await Effect.runPromiseExit(Effect.flatMap(Effect.tracer, (native) =>
    program.pipe(Effect.withTracer(Tracer.make({
      span: (...args) => {
        const span = native.span(...args)
        spans.push(span)
        return span
      },
      context: (f, fiber) => native.context(f, fiber)
    })))))
  return { spans, exit }
}

const named = (spans: ReadonlyArray<Tracer.Span>, name: string) => spans.filter((span) => span.name === name)

describe("job step spans", () => {
  it("one span per step, however often marked, under the run's span, with its attributes and its own time range", async () => {
    const { spans, exit } = await recording(Effect.scoped(Effect.gen(function*() {
      const steps = yield* makeJobSteps({ "hush.job_id": "job_1" })
      const decode = steps.step("job.decode")
      decode.open()
      yield* Effect.sleep("5 millis")
      steps.step("job.denoise").open()
      steps.step("job.denoise").open()
      decode.open()
      decode.close({ "hush.pcm_bytes": 8 })
      decode.close({ "hush.pcm_bytes": 16 })
      yield* Effect.sleep("5 millis")
      steps.step("job.denoise").close()
    })).pipe(Effect.withSpan("runJob")))
    expect(Exit.isSuccess(exit)).toBe(true)
    const [run] = named(spans, "runJob")
    const [decode, ...moreDecodes] = named(spans, "job.decode")
    const [denoise, ...moreDenoises] = named(spans, "job.denoise")
    expect([moreDecodes, moreDenoises]).toEqual([[], []])
    for (const span of [decode!, denoise!]) {
      expect(span.parent._tag === "Some" && span.parent.value.spanId).toBe(run!.spanId)
      expect(span.attributes.get("hush.job_id")).toBe("job_1")
      expect(span.status._tag).toBe("Ended")
    }
    expect(decode!.attributes.get("hush.pcm_bytes")).toBe(8)
    // overlapping ranges: denoise opened before decode closed, and closed after it
    if (decode!.status._tag !== "Ended" || denoise!.status._tag !== "Ended") throw new Error("not ended")
    expect(denoise!.status.startTime).toBeGreaterThan(decode!.status.startTime)
    expect(denoise!.status.startTime).toBeLessThanOrEqual(decode!.status.endTime)
    expect(denoise!.status.endTime).toBeGreaterThan(decode!.status.endTime)
    expect(Exit.isSuccess(decode!.status.exit)).toBe(true)
  })

  it("a step still open when the job fails ends with the failure; a step never opened makes no span", async () => {
    const { spans, exit } = await recording(Effect.scoped(Effect.gen(function*() {
      const steps = yield* makeJobSteps({})
      steps.step("job.encode").open()
      steps.step("job.denoise").close({ "hush.audio_seconds": 1 })
      return yield* Effect.fail("the encoder died")
    })))
    expect(Exit.isFailure(exit)).toBe(true)
    const [encode] = named(spans, "job.encode")
    expect(encode?.status._tag === "Ended" && Exit.isFailure(encode.status.exit)).toBe(true)
    expect(named(spans, "job.denoise")).toEqual([])
  })

  it("with tracing off, no step span is made", async () => {
    const { spans, exit } = await recording(Effect.scoped(Effect.gen(function*() {
      const steps = yield* makeJobSteps({})
      expect(steps.step("job.decode").open()).toBeUndefined()
      steps.step("job.decode").close()
    })).pipe(Effect.withSpan("runJob"), Effect.withTracerEnabled(false)))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(spans).toEqual([])
  })
})
