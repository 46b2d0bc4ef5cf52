/**
 * The delivery queue's moves, run by the worker's delivery loop (apps/worker/webhooks.ts): claim
 * due deliveries under leases, send one attempt signed with the endpoint's secret, record it.
 * A delivery is at least once: a worker that dies mid-attempt leaves a lease that lapses, and
 * any worker claims the delivery again. Sending happens outside every transaction.
 */
import { Clock, Effect, Either, Option } from "effect"
import { LimitsConfig } from "../domain/limits.js"
import { WebhookAttemptRecord, type WebhookDeliveryRecord } from "../domain/records.js"
import { transactionally } from "../ports/transactor.js"
import { WebhookRepo, WebhookSender } from "../ports/webhooks.js"
import { abandonDelivery, afterAttempt, claimDelivery, portRefusal, recordAttempt, releaseLease, signedHeaders } from "../rules/webhooks.js"
import * as Metrics from "../observability/metrics.js"

/** An attempt ends well inside its lease, so no other worker sends it again while it runs. */
export const attemptTimeoutMs = (limits: { readonly webhookTimeoutMs: number; readonly webhookLeaseMs: number }) =>
  Math.min(limits.webhookTimeoutMs, Math.floor((limits.webhookLeaseMs * 2) / 3))

/** Claims up to `limit` due deliveries for `owner`. */
export const claimDueDeliveries = (owner: string, limit: number) =>
  Effect.gen(function*() {
    const { webhookLeaseMs } = yield* LimitsConfig
    return yield* transactionally(Effect.gen(function*() {
      const repo = yield* WebhookRepo
      const now = yield* Clock.currentTimeMillis
      const due = yield* repo.lockDue(now, limit)
      const claimed: Array<WebhookDeliveryRecord> = []
      for (const delivery of due) {
        const next = claimDelivery(delivery, now, owner, webhookLeaseMs)
        if (Either.isLeft(next)) continue
        yield* repo.updateDelivery(next.right)
        claimed.push(next.right)
      }
      return claimed
    }))
  })

export type AttemptOutcome = "delivered" | "retrying" | "failed" | "lease_lost" | "gone"

/**
 * Saves what became of the attempt (`attempt` refuses unless its owner still holds the
 * delivery's lease), with the endpoint's failing streak (and its disabling) in the same transaction.
 */
const finish = (deliveryId: string, attempt: (delivery: WebhookDeliveryRecord, disabled: boolean) =>
  Either.Either<WebhookDeliveryRecord, unknown>, sent: WebhookAttemptRecord | null) =>
  transactionally(Effect.gen(function*() {
    const repo = yield* WebhookRepo
    const locked = yield* repo.lockDelivery(deliveryId)
    if (Option.isNone(locked)) return "gone" as const
    const endpoint = yield* repo.getEndpoint(locked.value.endpointId)
    if (Option.isNone(endpoint)) return "gone" as const
    const updatedEndpoint = sent === null ? endpoint.value : afterAttempt(endpoint.value, sent)
    const next = attempt(locked.value, updatedEndpoint.status === "disabled")
    if (Either.isLeft(next)) return "lease_lost" as const
    yield* repo.updateDelivery(next.right)
    if (updatedEndpoint !== endpoint.value) yield* repo.updateEndpoint(updatedEndpoint)
    if (updatedEndpoint.status === "disabled" && endpoint.value.status === "enabled") {
      yield* Effect.logWarning("webhook endpoint disabled: every attempt failed for 5 days").pipe(
        Effect.annotateLogs({ endpointId: updatedEndpoint.id })
      )
    }
    return next.right.status === "succeeded" ? "delivered" as const : next.right.status === "failed" ? "failed" as const : "retrying" as const
  }))

/** One attempt of a claimed delivery. */
export const deliver = (delivery: WebhookDeliveryRecord, owner: string) =>
  Effect.gen(function*() {
    const repo = yield* WebhookRepo
    const sender = yield* WebhookSender
    const limits = yield* LimitsConfig
    const endpoint = yield* repo.getEndpoint(delivery.endpointId)
    if (Option.isNone(endpoint)) return "gone" as const
    if (endpoint.value.status === "disabled") {
      const now = yield* Clock.currentTimeMillis
      return yield* finish(delivery.id, (d) => abandonDelivery(d, owner, now, "not sent: the endpoint is disabled"), null)
    }
    // an endpoint stored before the port rule is not sent to either
    const badPort = portRefusal(new URL(endpoint.value.url))
    if (badPort !== null) {
      const now = yield* Clock.currentTimeMillis
      return yield* finish(delivery.id, (d) => abandonDelivery(d, owner, now, `not sent: ${badPort}`), null)
    }
    const at = yield* Clock.currentTimeMillis
    const response = yield* sender.send({
      url: endpoint.value.url,
      headers: { ...signedHeaders(endpoint.value.secret, delivery.eventId, at, delivery.body), "content-type": "application/json" },
      body: delivery.body,
      timeoutMs: attemptTimeoutMs(limits),
      // checked again at each attempt: what the name resolves to may have changed since creation
      publicOnly: !sender.allowPrivate
    })
    const attempt = new WebhookAttemptRecord({ at, statusCode: response.statusCode, durationMs: Math.round(response.durationMs), error: response.error })
    return yield* finish(delivery.id, (d, disabled) => recordAttempt(d, owner, attempt, disabled), attempt)
  }).pipe(
    Effect.tap((outcome) => Metrics.count(Metrics.webhookDeliveries, { outcome })),
    Effect.withSpan("deliverWebhook", { attributes: { "hush.delivery_id": delivery.id } }),
    Effect.annotateLogs({ deliveryId: delivery.id, eventId: delivery.eventId })
  )

/**
 * An interrupted attempt (the worker is stopping) is handed back, so another worker sends it
 * at once rather than after the lease; whether the interrupted request arrived is unknown,
 * which at-least-once allows.
 */
export const releaseDelivery = (deliveryId: string, owner: string) =>
  transactionally(Effect.gen(function*() {
    const repo = yield* WebhookRepo
    const locked = yield* repo.lockDelivery(deliveryId)
    if (Option.isNone(locked)) return false
    const released = releaseLease(locked.value, owner)
    if (Either.isLeft(released)) return false
    yield* repo.updateDelivery(released.right)
    return true
  }))

/** Claims what is due and delivers it, `concurrency` at a time; the outcomes. For tests and the loop's single pass. */
export const deliverDue = (owner: string, limit = 16) =>
  Effect.flatMap(claimDueDeliveries(owner, limit), (claimed) =>
    Effect.forEach(claimed, (d) => deliver(d, owner), { concurrency: limit }))
