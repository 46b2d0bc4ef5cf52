/**
 * The webhook delivery loop of a worker: claim due deliveries under leases, send each (at most
 * `concurrency` at once), record the attempt. It runs beside the job loop in its own fibers, so
 * a slow or dead endpoint (10 s at most per attempt) never holds a job up; the job only wrote
 * its event into the queue, in its own transaction.
 *
 * Every worker node runs one; the leases keep two nodes off the same delivery. A worker killed
 * mid-attempt leaves a lease that lapses (webhookLeaseMs), and any node sends it again; one
 * stopped gracefully hands its attempts in flight back at once.
 */
import { Duration, Effect, FiberSet, Queue } from "effect"
import { claimDueDeliveries, deliver, releaseDelivery } from "../../core/services/webhook-delivery.js"

export interface DeliveryLoopOptions {
  /** This process's name as a lease owner; each claim adds a counter to it. */
  readonly owner: string
  /** Attempts in flight at once. Default 16. */
  readonly concurrency?: number
  /** Pause after finding nothing due. Default 1 second. */
  readonly pollInterval?: Duration.DurationInput
}

export const DEFAULT_DELIVERY_CONCURRENCY = 16

export const runDeliveries = (options: DeliveryLoopOptions) => {
  const pause = Duration.decode(options.pollInterval ?? Duration.seconds(1))
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY))
  return Effect.scoped(Effect.gen(function*() {
    const inFlight = yield* FiberSet.make<unknown, never>()
    const ended = yield* Queue.sliding<void>(1)
    let running = 0
    let claims = 0
    for (;;) {
      const free = concurrency - running
      if (free === 0) {
        yield* Queue.take(ended)
        continue
      }
      // a name per claim: a lease this process lost (lapsed) and claimed again is not mistaken for the old one
      const owner = `${options.owner}/webhooks/${++claims}`
      const claimed = yield* claimDueDeliveries(owner, free).pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("webhook claim failed", cause), []))
      )
      for (const delivery of claimed) {
        running++
        yield* FiberSet.run(inFlight, deliver(delivery, owner).pipe(
          Effect.onInterrupt(() =>
            releaseDelivery(delivery.id, owner).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning("webhook hand-back failed; the lease will lapse", cause))
            )),
          Effect.catchAllCause((cause) => Effect.logError("webhook delivery failed", cause)),
          Effect.ensuring(Effect.zipRight(Effect.sync(() => running--), Queue.offer(ended, undefined)))
        ))
      }
      if (claimed.length === 0) yield* Effect.raceFirst(Effect.sleep(pause), Queue.take(ended))
    }
  }).pipe(Effect.annotateLogs({ worker: options.owner })))
}
