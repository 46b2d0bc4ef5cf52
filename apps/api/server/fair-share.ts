/**
 * A fixed number of slots (e.g. ffmpeg decoders) shared fairly between tenants: when a slot
 * frees, it goes to the waiting tenant that holds the fewest slots; among equals, to the one
 * served longest ago (round robin), its oldest request first. So one tenant can hold more than
 * one slot only while nobody else waits, and a tenant that starts waiting behind it waits for
 * one of its tasks at most.
 */
import { Deferred, Effect } from "effect"

export interface FairShare {
  /** Runs `task` once `tenant` is given a slot; interruption while waiting gives up the place in line. */
  readonly run: <A, E, R>(tenant: string, task: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const makeFairShare = (capacity: number): Effect.Effect<FairShare> =>
  Effect.sync(() => {
    const held = new Map<string, number>()
    /** When each tenant was last given a slot (a counter); never served counts as earliest. */
    const served = new Map<string, number>()
    let grants = 0
    let busy = 0
    const waiting: Array<{ readonly tenant: string; readonly start: Deferred.Deferred<void> }> = []
    const holding = (tenant: string) => held.get(tenant) ?? 0
    const before = (a: string, b: string) =>
      holding(a) !== holding(b) ? holding(a) < holding(b) : (served.get(a) ?? -1) < (served.get(b) ?? -1)

    /** Hands free slots to waiters (fewest held, then served longest ago, then first come); the ones to wake. */
    const assign = (): Array<Deferred.Deferred<void>> => {
      const woken: Array<Deferred.Deferred<void>> = []
      while (busy < capacity && waiting.length > 0) {
        let best = 0
        for (let i = 1; i < waiting.length; i++) {
          if (before(waiting[i]!.tenant, waiting[best]!.tenant)) best = i
        }
        const [next] = waiting.splice(best, 1)
        held.set(next!.tenant, holding(next!.tenant) + 1)
        served.set(next!.tenant, grants++)
        busy++
        woken.push(next!.start)
      }
      return woken
    }

    const wake = Effect.suspend(() => Effect.forEach(assign(), (start) => Deferred.succeed(start, undefined), { discard: true }))

    const release = (tenant: string) =>
      Effect.suspend(() => {
        const left = holding(tenant) - 1
        if (left <= 0) held.delete(tenant)
        else held.set(tenant, left)
        busy--
        return wake
      })

    return {
      run: <A, E, R>(tenant: string, task: Effect.Effect<A, E, R>) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const start = yield* Deferred.make<void>()
            waiting.push({ tenant, start })
            yield* wake
            yield* restore(Deferred.await(start)).pipe(
              Effect.onInterrupt(() =>
                Effect.suspend(() => {
                  const at = waiting.findIndex((w) => w.start === start)
                  if (at < 0) return release(tenant) // given a slot meanwhile: hand it on
                  waiting.splice(at, 1)
                  return Effect.void
                })
              )
            )
            return yield* restore(task).pipe(Effect.ensuring(release(tenant)))
          })
        )
    }
  })
