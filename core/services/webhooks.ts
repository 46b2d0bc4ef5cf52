/**
 * Webhook endpoints (`/v1/webhook_endpoints`) and the emission of events: an event is written
 * as one pending delivery per subscribed endpoint inside the transaction of the state change
 * that caused it (an outbox), so it exists exactly when the change committed. Sending happens
 * later, in the worker's delivery loop (webhook-delivery.ts), never on the path of the change.
 */
import { Clock, Effect, Option, Schema } from "effect"
import type { DeliveryEventType, Mode, WebhookEventType } from "../domain/enums.js"
import { LimitsConfig } from "../domain/limits.js"
import { type FileRecord, type JobRecord, WebhookDeliveryRecord, WebhookEndpointRecord } from "../domain/records.js"
import { excerpt, InvalidRequest, NotFound } from "../errors.js"
import { IdGenerator } from "../ports/ids.js"
import { WalletRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { type EndpointRefused, WebhookRepo, WebhookSender } from "../ports/webhooks.js"
import { Digests } from "../ports/digests.js"
import { requireScope } from "../rules/keys.js"
import {
  checkEndpointUrl, checkEventTypes, eventBody, MAX_WEBHOOK_DESCRIPTION_LENGTH, MAX_WEBHOOK_ENDPOINTS, subscribes,
  webhookSecretFrom
} from "../rules/webhooks.js"
import { File, Job } from "../schema/index.js"
import type { Actor } from "../domain/caller.js"
import { decodeCursor, encodeCursor } from "./cursor.js"
import { presentFile, presentJob } from "./present.js"

export interface NewEndpoint {
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly description?: string | null | undefined
}

const SCOPE = ["webhooks:write"] as const

const notFound = (id: string) => new NotFound({ detail: `no webhook endpoint '${excerpt(id)}' exists on this account` })

/** The caller's endpoint, or `404` for another account's or the other mode's. */
const ownedEndpoint = (caller: Actor, id: string) =>
  Effect.flatMap(WebhookRepo, (repo) => repo.getEndpoint(id)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(notFound(id)),
      onSome: (endpoint) =>
        endpoint.accountId === caller.accountId && endpoint.mode === caller.mode ? Effect.succeed(endpoint) : Effect.fail(notFound(id))
    }))
  )

const countLimit = (caller: Actor) =>
  Effect.gen(function*() {
    const existing = yield* Effect.flatMap(WebhookRepo, (repo) => repo.listEndpoints(caller.accountId, caller.mode))
    if (existing.length >= MAX_WEBHOOK_ENDPOINTS) {
      return yield* new InvalidRequest({
        status: 422,
        detail: `this account already has ${existing.length} webhook endpoints in ${caller.mode} mode (limit ${MAX_WEBHOOK_ENDPOINTS}): delete one first`
      })
    }
  })

/**
 * A refused address, for its caller (decisions.md, Events): the rule, the caller's own mode
 * (test keys are anyone's, so test endpoints follow it too), and the setting that lifts it for
 * local development.
 */
const refusedDetail = (refused: EndpointRefused, mode: Mode) =>
  !refused.nonPublic
    ? refused.reason
    : `${refused.reason}: ${mode}-mode endpoints must be publicly reachable` +
      (mode === "test" ? " too (anyone who signs up holds a test key)" : "") +
      "; for local development, WEBHOOKS_ALLOW_PRIVATE=true on the server lifts this rule"

/**
 * `POST /v1/webhook_endpoints`: checks the URL, then stores the endpoint. decisions.md requires
 * live endpoints to resolve to public addresses; test-mode ones must too, since anyone who
 * signs up holds a test key, and a test endpoint on an internal address would turn the
 * deliveries log into a scanner of the service's network. WEBHOOKS_ALLOW_PRIVATE lifts it for
 * local development (where a hosted service could not reach a developer's machine anyway).
 */
export const createEndpoint = (caller: Actor, request: NewEndpoint) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, SCOPE)
    const sender = yield* WebhookSender
    const url = yield* checkEndpointUrl(request.url, caller.mode, sender.allowPrivate)
    const events = yield* checkEventTypes(request.events)
    const description = request.description ?? null
    if (description !== null && description.length > MAX_WEBHOOK_DESCRIPTION_LENGTH) {
      return yield* new InvalidRequest({
        status: 422, field: "description", detail: `description must be at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters`
      })
    }
    yield* countLimit(caller)
    yield* sender.vet(url.href, !sender.allowPrivate).pipe(
      Effect.mapError((refused) => new InvalidRequest({ status: 422, field: "url", detail: refusedDetail(refused, caller.mode) }))
    )
    const ids = yield* IdGenerator
    const endpoint = new WebhookEndpointRecord({
      id: ids.next("whe"),
      accountId: caller.accountId,
      mode: caller.mode,
      url: url.href,
      events,
      description,
      secret: webhookSecretFrom(ids.secret(), yield* Digests),
      status: "enabled",
      createdAt: yield* Clock.currentTimeMillis,
      failingSince: null,
      disabledAt: null
    })
    // the limit again under the account's lock, so concurrent creations cannot pass it together
    yield* transactionally(Effect.all([
      Effect.flatMap(WalletRepo, (wallets) => wallets.lock(caller.accountId)),
      countLimit(caller),
      Effect.flatMap(WebhookRepo, (repo) => repo.insertEndpoint(endpoint))
    ], { discard: true }))
    return endpoint
  })

export const listEndpoints = (caller: Actor) =>
  Effect.zipRight(
    requireScope(caller.scopes, SCOPE),
    Effect.flatMap(WebhookRepo, (repo) => repo.listEndpoints(caller.accountId, caller.mode))
  )

export const getEndpoint = (caller: Actor, id: string) => Effect.zipRight(requireScope(caller.scopes, SCOPE), ownedEndpoint(caller, id))

/** `DELETE`: the endpoint and its deliveries go; pending ones are never sent. */
export const deleteEndpoint = (caller: Actor, id: string) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, SCOPE)
    const endpoint = yield* ownedEndpoint(caller, id)
    yield* Effect.flatMap(WebhookRepo, (repo) => repo.deleteEndpoint(endpoint.id))
  })

const cursorScope = (caller: Actor, endpointId: string) => `webhook-deliveries:${caller.accountId}:${caller.mode}:${endpointId}`

/** `GET …/{id}/deliveries`: newest first, by cursor. */
export const listDeliveries = (
  caller: Actor, endpointId: string, query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, SCOPE)
    const endpoint = yield* ownedEndpoint(caller, endpointId)
    const limit = query.limit ?? 20
    const scope = cursorScope(caller, endpoint.id)
    const after = query.cursor === undefined ? undefined : yield* decodeCursor(scope, query.cursor)
    const rows = yield* Effect.flatMap(WebhookRepo, (repo) => repo.listDeliveries({ endpointId: endpoint.id, limit: limit + 1, after }))
    const data = rows.slice(0, limit)
    const last = data[data.length - 1]
    const nextCursor = rows.length > limit && last !== undefined ? yield* encodeCursor(scope, { createdAt: last.createdAt, id: last.id }) : null
    return { data, nextCursor }
  })

/**
 * Writes the event for every enabled endpoint of the account and mode that subscribes to it.
 * Call it inside the transaction of the change it reports.
 */
export const emitEvent = (event: { readonly accountId: string; readonly mode: Mode; readonly type: WebhookEventType; readonly data: unknown }) =>
  Effect.flatMap(subscribersOf(event.accountId, event.mode, event.type), (endpoints) => writeDeliveries(endpoints, event))

/** One pending delivery of one new event (`evt_…`) for each of `endpoints`; the deliveries written. */
const writeDeliveries = (
  endpoints: ReadonlyArray<WebhookEndpointRecord>,
  event: { readonly accountId: string; readonly mode: Mode; readonly type: DeliveryEventType; readonly data: unknown }
) =>
  Effect.gen(function*() {
    if (endpoints.length === 0) return []
    const repo = yield* WebhookRepo
    const ids = yield* IdGenerator
    const now = yield* Clock.currentTimeMillis
    const eventId = ids.next("evt")
    const body = eventBody({ id: eventId, type: event.type, createdAt: now, data: event.data })
    const deliveries = endpoints.map((endpoint) =>
      new WebhookDeliveryRecord({
        id: ids.next("whd"),
        endpointId: endpoint.id,
        accountId: event.accountId,
        mode: event.mode,
        eventId,
        eventType: event.type,
        body,
        status: "pending",
        attempts: [],
        nextAttemptAt: now,
        leaseOwner: null,
        leaseExpiresAt: null,
        createdAt: now,
        finishedAt: null
      })
    )
    yield* repo.insertDeliveries(deliveries)
    return deliveries
  })

/**
 * `POST /v1/webhook_endpoints/{id}/test`: a `webhook.test` event (`data: {endpoint: id}`) for this
 * endpoint alone, whatever it subscribes to, sent by the delivery loop like any other delivery
 * (signed, retried, logged). The pending delivery.
 */
export const sendTestEvent = (caller: Actor, id: string) =>
  Effect.gen(function*() {
    yield* requireScope(caller.scopes, SCOPE)
    const endpoint = yield* ownedEndpoint(caller, id)
    const [delivery] = yield* writeDeliveries([endpoint], {
      accountId: endpoint.accountId, mode: endpoint.mode, type: "webhook.test", data: { endpoint: endpoint.id }
    })
    return delivery!
  })

/** The account's endpoints (of the mode) that an event of `type` would be written for. */
export const subscribersOf = (accountId: string, mode: Mode, type: WebhookEventType) =>
  Effect.map(Effect.flatMap(WebhookRepo, (repo) => repo.listEndpoints(accountId, mode)), (endpoints) => endpoints.filter((e) => subscribes(e, type)))

const encodeJob = Schema.encodeSync(Job)
const encodeFile = Schema.encodeSync(File)

/** `job.succeeded`, `job.failed` or `job.canceled` for a job that just reached that state; data as `GET` shows it. */
export const emitJobEvent = (job: JobRecord) =>
  Effect.gen(function*() {
    if (job.status !== "succeeded" && job.status !== "failed" && job.status !== "canceled") return
    const limits = yield* LimitsConfig
    yield* emitEvent({ accountId: job.accountId, mode: job.mode, type: `job.${job.status}`, data: encodeJob(presentJob(job, limits)) })
  })

/** `file.ready` or `file.rejected` for a file that just reached that state. */
export const emitFileEvent = (file: FileRecord) =>
  Effect.gen(function*() {
    if (file.status !== "ready" && file.status !== "rejected") return
    const limits = yield* LimitsConfig
    yield* emitEvent({ accountId: file.accountId, mode: file.mode, type: `file.${file.status}`, data: encodeFile(presentFile(file, limits)) })
  })
