/**
 * Spans for a job's steps (issue 15). The built-in pipeline runs its steps as one pulled
 * stream, so decode, denoise, encode and upload overlap in time: `Effect.withSpan` around one
 * of them is impossible (none is an Effect of its own), and a span made in the stream's
 * per-chunk code would cost Effect work per chunk. Instead each step's span is opened and
 * closed by plain calls at its edges (the decoder spawned, the first frame denoised, …):
 * once per job, whatever its length, each a child of the span current when the steps were
 * made (the job run's). With tracing off (apps/runtime/tracing.ts) there are no step spans.
 */
import { Context, Effect, Exit, FiberRef, Option, type Scope, Tracer } from "effect"

export interface StepSpan {
  /** Starts the step now; later calls do nothing. Answers its span, a parent for the step's own calls (none with tracing off). */
  readonly open: () => Tracer.Span | undefined
  /**
   * Ends the step now with these attributes (`exit` says whether it failed); nothing when it
   * never opened or already ended.
   */
  readonly close: (attributes?: Readonly<Record<string, unknown>>, exit?: Exit.Exit<unknown, unknown>) => void
}

export interface JobSteps {
  /** The step of this name (the same one on each call: a step may be marked from several places). */
  readonly step: (name: string) => StepSpan
}

const untracedStep: StepSpan = { open: () => undefined, close: () => {} }
const untraced: JobSteps = { step: () => untracedStep }

/**
 * The steps of one job, each span carrying `attributes` (the job's id, its model). Steps still
 * open when the scope closes (a failure, an interruption) end then, with the scope's exit.
 */
export const makeJobSteps = (attributes: Readonly<Record<string, unknown>>): Effect.Effect<JobSteps, never, Scope.Scope> =>
  Effect.gen(function*() {
    const parent = yield* Effect.serviceOption(Tracer.ParentSpan)
    // as Effect.withSpan does: a no-op when tracing is off or the current span says not to propagate
    const off = !(yield* FiberRef.get(FiberRef.currentTracerEnabled)) ||
      Option.exists(parent, (span) => Context.get(span.context, Tracer.DisablePropagation))
    if (off) return untraced
    const tracer = yield* Effect.tracer
    const clock = yield* Effect.clock
    const steps = new Map<string, StepSpan>()
    const open = new Set<Tracer.Span>()

    const make = (name: string): StepSpan => {
      let span: Tracer.Span | undefined
      let ended = false
      return {
        open: () => {
          if (span === undefined) {
            span = tracer.span(name, parent, Context.empty(), [], clock.unsafeCurrentTimeNanos(), "internal")
            for (const [key, value] of Object.entries(attributes)) span.attribute(key, value)
            open.add(span)
          }
          return span
        },
        close: (more = {}, exit = Exit.void) => {
          if (span === undefined || ended) return
          ended = true
          for (const [key, value] of Object.entries(more)) span.attribute(key, value)
          span.end(clock.unsafeCurrentTimeNanos(), exit)
          open.delete(span)
        }
      }
    }

    yield* Effect.addFinalizer((exit) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeNanos()
        for (const span of open) span.end(now, exit)
        open.clear()
      })
    )
    return {
      step: (name) => {
        const found = steps.get(name)
        if (found !== undefined) return found
        const made = make(name)
        steps.set(name, made)
        return made
      }
    }
  })
