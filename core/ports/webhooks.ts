/** Outbound webhooks: where endpoints and deliveries are kept, and how an attempt goes out. */
import { Context, Data, Effect, Option } from "effect"
import type { Mode } from "../domain/enums.js"
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from "../domain/records.js"

export interface DeliveryPageQuery {
  readonly endpointId: string
  readonly limit: number
  /** Keyset position: deliveries strictly older than this (createdAt desc, id desc). */
  readonly after?: { readonly createdAt: number; readonly id: string } | undefined
}

export class WebhookRepo extends Context.Tag("hush/WebhookRepo")<WebhookRepo, {
  readonly insertEndpoint: (endpoint: WebhookEndpointRecord) => Effect.Effect<void>
  readonly getEndpoint: (id: string) => Effect.Effect<Option.Option<WebhookEndpointRecord>>
  readonly updateEndpoint: (endpoint: WebhookEndpointRecord) => Effect.Effect<void>
  /** The endpoint and every delivery of it. */
  readonly deleteEndpoint: (id: string) => Effect.Effect<void>
  /** Oldest first. */
  readonly listEndpoints: (accountId: string, mode: Mode) => Effect.Effect<ReadonlyArray<WebhookEndpointRecord>>
  readonly insertDeliveries: (deliveries: ReadonlyArray<WebhookDeliveryRecord>) => Effect.Effect<void>
  readonly updateDelivery: (delivery: WebhookDeliveryRecord) => Effect.Effect<void>
  /** The delivery locked for the current transaction. */
  readonly lockDelivery: (id: string) => Effect.Effect<Option.Option<WebhookDeliveryRecord>>
  /**
   * Up to `limit` pending deliveries due at `now` (nextAttemptAt ≤ now) whose lease is free or
   * lapsed, earliest due first, locked for the current transaction so that no other claimer
   * gets them (SKIP LOCKED on Postgres).
   */
  readonly lockDue: (now: number, limit: number) => Effect.Effect<ReadonlyArray<WebhookDeliveryRecord>>
  /** Newest first: createdAt descending, then id descending. */
  readonly listDeliveries: (query: DeliveryPageQuery) => Effect.Effect<ReadonlyArray<WebhookDeliveryRecord>>
}>() {}

/**
 * Why an endpoint URL is refused, for the caller (`422 invalid_request`) and the deliveries log.
 * `nonPublic`: the host is, or resolves to, an address the address rule refuses (which
 * WEBHOOKS_ALLOW_PRIVATE lifts); otherwise it cannot be resolved.
 */
export class EndpointRefused extends Data.TaggedError("EndpointRefused")<{ readonly reason: string; readonly nonPublic: boolean }> {}

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
  /** Refuse private, loopback and link-local addresses (unless WEBHOOKS_ALLOW_PRIVATE). */
  readonly publicOnly: boolean
}

export interface WebhookResponse {
  /** The status answered; null when none came. */
  readonly statusCode: number | null
  readonly durationMs: number
  /** What went wrong, for the deliveries log; null on a 2xx. */
  readonly error: string | null
}

/** Sends webhook attempts over HTTP without following redirects. */
export class WebhookSender extends Context.Tag("hush/WebhookSender")<WebhookSender, {
  /** WEBHOOKS_ALLOW_PRIVATE: endpoints may resolve anywhere, live ones use http:// (local development). */
  readonly allowPrivate: boolean
  /** Resolves the URL's host and refuses it when `publicOnly` and any address is not public. */
  readonly vet: (url: string, publicOnly: boolean) => Effect.Effect<void, EndpointRefused>
  /** One attempt; never fails: a refusal, timeout or connection error is in the response. */
  readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse>
}>() {}
