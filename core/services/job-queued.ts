/**
 * A job queued in this process wakes this process's worker at once, rather than at its next
 * look at an empty queue (up to its poll interval, 1 s by default, later): under `npm start`
 * the API and the built-in worker share one. Optional on both sides (`Effect.serviceOption`):
 * a process without it, such as a separate `npm run worker`, polls as before.
 */
import { Context, Effect, Layer, Option, Queue } from "effect"

export class JobQueued extends Context.Tag("JobQueued")<JobQueued, {
  /** A job was committed to the queue. */
  readonly notify: Effect.Effect<void>
  /** Until the next notification (one that came while nobody waited counts: at most one is kept). */
  readonly next: Effect.Effect<void>
}>() {}

export const layerJobQueued: Layer.Layer<JobQueued> = Layer.effect(
  JobQueued,
  Effect.map(Queue.sliding<void>(1), (queue) => ({ notify: Effect.asVoid(Queue.offer(queue, undefined)), next: Queue.take(queue) }))
)

/** Tells this process's worker, if it has one, that a job was queued. */
export const notifyJobQueued: Effect.Effect<void> = Effect.flatMap(
  Effect.serviceOption(JobQueued),
  Option.match({ onNone: () => Effect.void, onSome: (signal) => signal.notify })
)

/** Until a job is queued in this process; never when nothing here notifies. */
export const nextJobQueued: Effect.Effect<void> = Effect.flatMap(
  Effect.serviceOption(JobQueued),
  Option.match({ onNone: () => Effect.never, onSome: (signal) => signal.next })
)
