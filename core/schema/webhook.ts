import { Schema } from "effect"
import { DeliveryEventType, WebhookDeliveryStatus, WebhookEndpointStatus, WebhookEventType } from "../domain/enums.js"
import { constant, FreeText, NextCursor, Text, Timestamp } from "./common.js"
import { PageLimit } from "./job.js"

/** Body of `POST /v1/webhook_endpoints`. */
export const WebhookEndpointIn = Schema.Struct({
  /** Live mode: `https://`, resolving to public addresses only. */
  url: Text.pipe(Schema.minLength(1), Schema.maxLength(2048)),
  /** The events sent to this endpoint (at least one). */
  events: Schema.Array(WebhookEventType).pipe(Schema.minItems(1), Schema.maxItems(16)),
  description: Schema.optional(Schema.NullOr(FreeText.pipe(Schema.maxLength(500))))
}).annotations({ identifier: "WebhookEndpointIn" })
export type WebhookEndpointIn = typeof WebhookEndpointIn.Type

const endpointFields = {
  id: Schema.String,
  object: constant("webhook_endpoint"),
  url: Schema.String,
  events: Schema.Array(WebhookEventType),
  description: Schema.NullOr(Schema.String),
  /** `disabled` once every attempt failed for 5 days; a disabled endpoint gets no more deliveries. */
  status: WebhookEndpointStatus,
  mode: Schema.Literal("live", "test"),
  created_at: Timestamp,
  disabled_at: Schema.NullOr(Timestamp)
}

export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")(endpointFields) {}

/** The answer to a creation: the only time `secret` is shown. */
export class WebhookEndpointCreated extends Schema.Class<WebhookEndpointCreated>("WebhookEndpointCreated")({
  ...endpointFields,
  /** `whsec_…`: verifies the `webhook-signature` header (Standard Webhooks). Shown on creation only. */
  secret: Schema.String
}) {}

export class WebhookEndpointList extends Schema.Class<WebhookEndpointList>("WebhookEndpointList")({
  data: Schema.Array(WebhookEndpoint),
  next_cursor: NextCursor
}) {}

export const WebhookAttempt = Schema.Struct({
  at: Timestamp,
  /** The HTTP status the endpoint answered; null when none came. */
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  /** Why the attempt failed (timeout, refused address, non-2xx status, redirect); null when delivered. */
  error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookAttempt" })

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: Schema.String,
  object: constant("webhook_delivery"),
  /** The event's id: the body's `id` and the `webhook-id` header, the same on every attempt. */
  event_id: Schema.String,
  /** A subscribed event, or `webhook.test` (POST /v1/webhook_endpoints/{id}/test). */
  event_type: DeliveryEventType,
  status: WebhookDeliveryStatus,
  attempts: Schema.Array(WebhookAttempt),
  /** When the next attempt goes out (pending only). */
  next_attempt_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp)
}) {}

export class WebhookDeliveryPage extends Schema.Class<WebhookDeliveryPage>("WebhookDeliveryPage")({
  data: Schema.Array(WebhookDelivery),
  next_cursor: NextCursor
}) {}

/** Query of `GET /v1/webhook_endpoints/{id}/deliveries`. */
export const DeliveryListParams = Schema.Struct({
  limit: Schema.optional(PageLimit),
  /** Opaque, from `next_cursor`. */
  cursor: Schema.optional(Text)
}).annotations({ identifier: "DeliveryListParams" })
