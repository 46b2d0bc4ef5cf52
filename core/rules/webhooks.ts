/**
 * Outbound webhooks (decisions.md, Events): endpoint URLs, Standard Webhooks signing, the
 * retry schedule, the delivery state machine under leases (as jobs: core/rules/jobs.ts), and
 * when an endpoint is disabled. Pure functions.
 *
 *   pending (claimable from nextAttemptAt) → claimed under a lease → succeeded | pending again
 *   (next step of the schedule) | failed (schedule spent, or endpoint disabled). A lease that
 *   lapses (a worker killed mid-delivery) leaves the delivery pending: any worker claims it again.
 */
import { encodeBase64 } from "@oslojs/encoding"
import { Data, Either } from "effect"
import { Webhook } from "standardwebhooks"
import type { DeliveryEventType, Mode, WebhookEventType } from "../domain/enums.js"
import { WEBHOOK_EVENT_TYPES } from "../domain/enums.js"
import { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord } from "../domain/records.js"
import { excerpt, InvalidRequest } from "../errors.js"
import { DAY, HOUR, MINUTE, SECOND } from "../time.js"
import { type DigestFunctions, portableDigests, utf8 } from "./secrets.js"

/** An account has at most this many endpoints per mode. */
export const MAX_WEBHOOK_ENDPOINTS = 16
export const MAX_WEBHOOK_URL_LENGTH = 2_048
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500

/** Waits after the 1st, 2nd, … failed attempt; after the last one the delivery is failed. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [
  5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR
]
/** The first attempt and one per retry. */
export const MAX_WEBHOOK_ATTEMPTS = RETRY_DELAYS_MS.length + 1

/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * DAY

const invalid = (field: string, detail: string) => new InvalidRequest({ status: 422, field, detail })

/**
 * The URL rules that need no network: absolute http(s) with a host and no credentials; live
 * mode `https://` only (unless private addresses are allowed, for local development). Where the
 * host resolves to is checked by the WebhookSender (core/ports/webhooks.ts).
 */
export const checkEndpointUrl = (raw: string, mode: Mode, allowPrivate: boolean): Either.Either<URL, InvalidRequest> => {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return Either.left(invalid("url", `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`))
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(invalid("url", "url must be an absolute http:// or https:// URL"))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Either.left(invalid("url", "url must be an absolute http:// or https:// URL"))
  }
  if (mode === "live" && url.protocol !== "https:" && !allowPrivate) {
    return Either.left(invalid("url", "a live-mode endpoint must use https://"))
  }
  if (url.username !== "" || url.password !== "") return Either.left(invalid("url", "url must not carry a user name or password"))
  if (url.hostname === "") return Either.left(invalid("url", "url must name a host"))
  const badPort = portRefusal(url)
  if (badPort !== null) return Either.left(invalid("url", badPort))
  return Either.right(url)
}

/**
 * decisions.md, Events: an endpoint's port is 80, 443 or 1024–65535, in either mode and
 * whatever WEBHOOKS_ALLOW_PRIVATE says. The well-known ports below 1024 are other services'
 * (SSH, SMTP, databases' neighbours): deliveries to them, and their log, would probe those
 * services on any public host. Why the URL's port is refused, or null.
 */
export const portRefusal = (url: URL): string | null => {
  // the URL parser leaves the scheme's default port out (https://h:443/ has port "")
  if (url.port === "") return null
  const port = Number(url.port)
  return port === 80 || port === 443 || (port >= 1024 && port <= 65_535)
    ? null
    : `url port ${url.port} is not allowed: webhook endpoints use port 80, 443 or 1024–65535`
}

/** Unknown names are refused; duplicates collapse; the order is the spec's. */
export const checkEventTypes = (requested: ReadonlyArray<string>): Either.Either<ReadonlyArray<WebhookEventType>, InvalidRequest> => {
  if (requested.length === 0) return Either.left(invalid("events", "events must name at least one event"))
  const unknown = requested.filter((e) => !(WEBHOOK_EVENT_TYPES as ReadonlyArray<string>).includes(e))
  if (unknown.length > 0) {
    return Either.left(invalid("events", `unknown event '${excerpt(unknown[0]!)}': use ${WEBHOOK_EVENT_TYPES.join(", ")}`))
  }
  return Either.right(WEBHOOK_EVENT_TYPES.filter((e) => requested.includes(e)))
}

/**
 * A Standard Webhooks secret (`whsec_` + base64 of 32 bytes) from one of the IdGenerator's
 * secrets (256 random bits as base32 text): its SHA-256 keeps all of the randomness.
 */
export const webhookSecretFrom = (randomSecret: string, digests: DigestFunctions = portableDigests): string =>
  `whsec_${encodeBase64(digests.sha256(utf8(randomSecret)))}`

/** The three Standard Webhooks headers of one attempt: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export const signedHeaders = (secret: string, messageId: string, atMillis: number, body: string) => ({
  "webhook-id": messageId,
  "webhook-timestamp": String(Math.floor(atMillis / 1000)),
  "webhook-signature": new Webhook(secret).sign(messageId, new Date(atMillis), body)
})

/** `{id, type, created_at, data}`: the body every attempt sends. */
export const eventBody = (event: { readonly id: string; readonly type: DeliveryEventType; readonly createdAt: number; readonly data: unknown }) =>
  JSON.stringify({ id: event.id, type: event.type, created_at: new Date(event.createdAt).toISOString(), data: event.data })

export const subscribes = (endpoint: WebhookEndpointRecord, type: WebhookEventType) =>
  endpoint.status === "enabled" && endpoint.events.includes(type)

export class DeliveryTransitionRefused extends Data.TaggedError("DeliveryTransitionRefused")<{
  readonly deliveryId: string
  readonly move: string
}> {}

const holdsLease = (delivery: WebhookDeliveryRecord, owner: string) =>
  delivery.status === "pending" && delivery.leaseOwner === owner

export const isDue = (delivery: WebhookDeliveryRecord, now: number) =>
  delivery.status === "pending" && delivery.nextAttemptAt !== null && delivery.nextAttemptAt <= now &&
  (delivery.leaseExpiresAt === null || delivery.leaseExpiresAt < now)

/** A due delivery, taken under a lease; a lapsed lease may be taken over. */
export const claimDelivery = (
  delivery: WebhookDeliveryRecord, now: number, owner: string, leaseMs: number
): Either.Either<WebhookDeliveryRecord, DeliveryTransitionRefused> =>
  isDue(delivery, now)
    ? Either.right(WebhookDeliveryRecord.copy(delivery, { leaseOwner: owner, leaseExpiresAt: now + leaseMs }))
    : Either.left(new DeliveryTransitionRefused({ deliveryId: delivery.id, move: "claim" }))

/**
 * The lease holder records an attempt: delivered on a 2xx, else retried on the schedule until
 * the attempts are spent. `endpointDisabled` fails it at once (no more attempts go out).
 */
export const recordAttempt = (
  delivery: WebhookDeliveryRecord,
  owner: string,
  attempt: WebhookAttemptRecord,
  endpointDisabled = false
): Either.Either<WebhookDeliveryRecord, DeliveryTransitionRefused> => {
  if (!holdsLease(delivery, owner)) return Either.left(new DeliveryTransitionRefused({ deliveryId: delivery.id, move: "record attempt" }))
  const attempts = [...delivery.attempts, attempt]
  const delivered = isDelivered(attempt)
  const spent = attempts.length >= MAX_WEBHOOK_ATTEMPTS || endpointDisabled
  const done = delivered || spent
  return Either.right(WebhookDeliveryRecord.copy(delivery, {
    attempts,
    status: delivered ? "succeeded" : spent ? "failed" : "pending",
    nextAttemptAt: done ? null : attempt.at + RETRY_DELAYS_MS[attempts.length - 1]!,
    leaseOwner: null,
    leaseExpiresAt: null,
    finishedAt: done ? attempt.at : null
  }))
}

/** The lease holder gives the delivery back unsent (it is shutting down): due again at once, for any worker. */
export const releaseLease = (delivery: WebhookDeliveryRecord, owner: string): Either.Either<WebhookDeliveryRecord, DeliveryTransitionRefused> =>
  holdsLease(delivery, owner)
    ? Either.right(WebhookDeliveryRecord.copy(delivery, { leaseOwner: null, leaseExpiresAt: null }))
    : Either.left(new DeliveryTransitionRefused({ deliveryId: delivery.id, move: "release" }))

/** A delivery whose endpoint is gone or disabled ends without sending. */
export const abandonDelivery = (delivery: WebhookDeliveryRecord, owner: string, now: number, reason: string) =>
  recordAttempt(delivery, owner, new WebhookAttemptRecord({ at: now, statusCode: null, durationMs: 0, error: reason }), true)

export const isDelivered = (attempt: WebhookAttemptRecord) =>
  attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300

/**
 * The endpoint after an attempt: a delivered one clears its failing streak; a failed one starts
 * it, and once every attempt failed for DISABLE_AFTER_FAILING_MS the endpoint is disabled.
 */
export const afterAttempt = (endpoint: WebhookEndpointRecord, attempt: WebhookAttemptRecord): WebhookEndpointRecord => {
  if (endpoint.status === "disabled") return endpoint
  if (isDelivered(attempt)) return endpoint.failingSince === null ? endpoint : new WebhookEndpointRecord({ ...endpoint, failingSince: null })
  const failingSince = endpoint.failingSince ?? attempt.at
  return attempt.at - failingSince >= DISABLE_AFTER_FAILING_MS
    ? new WebhookEndpointRecord({ ...endpoint, failingSince, status: "disabled", disabledAt: attempt.at })
    : endpoint.failingSince === failingSince ? endpoint : new WebhookEndpointRecord({ ...endpoint, failingSince })
}
