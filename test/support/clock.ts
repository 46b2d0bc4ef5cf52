/**
 * A controllable Clock for end-to-end tests: real time plus an offset the test moves, and an
 * optional freeze (time stands still until `unfreeze`). `sleep` waits in real time, so timers
 * and timeouts keep working while the test jumps hours or days ahead.
 *
 * Installed with `Layer.setClock(clock)` (startTestServer's `clock` option), so every fiber of
 * the server (request fibers, background validation, storage URL checks) reads this time.
 */
import { Clock, Duration, Effect } from "effect"

export interface AdjustableClock extends Clock.Clock {
  /** Moves time forward (or back, with a negative amount) by `ms`. */
  readonly advance: (ms: number) => void
  /** Stops time at its current value. */
  readonly freeze: () => void
  /** Lets time run again from where it stood. */
  readonly unfreeze: () => void
  /** Back to real time (offset 0, running). */
  readonly reset: () => void
  readonly now: () => number
}

export const makeAdjustableClock = (): AdjustableClock => {
  const real = Clock.make()
  let offset = 0
  let frozenAt: number | null = null
  const now = () => frozenAt ?? Date.now() + offset
  const clock: AdjustableClock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: now,
    unsafeCurrentTimeNanos: () => BigInt(now()) * 1_000_000n,
    currentTimeMillis: Effect.sync(now),
    currentTimeNanos: Effect.sync(() => BigInt(now()) * 1_000_000n),
    sleep: (duration: Duration.Duration) => real.sleep(duration),
    advance: (ms) => {
      if (frozenAt !== null) frozenAt += ms
      else offset += ms
    },
    freeze: () => {
      frozenAt = now()
    },
    unfreeze: () => {
      if (frozenAt === null) return
      offset = frozenAt - Date.now()
      frozenAt = null
    },
    reset: () => {
      offset = 0
      frozenAt = null
    },
    now
  }
  return clock
}
