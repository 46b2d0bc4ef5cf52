import { Schema } from "effect"
import { DeliveryEventType, WebhookDeliveryStatus, WebhookEndpointStatus, WebhookEventType } from "../domain/enums.js"
import { constant, field, FreeText, nextCursorField, Text, Timestamp } from "./common.js"
import { cursorDescription, PageLimit, pageLimitDescription } from "./job.js"

/** Body of `POST /v1/webhook_endpoints`. */
export const WebhookEndpointIn = Schema.Struct({
  url: field(
    Text.pipe(Schema.minLength(1), Schema.maxLength(2048)),
    "Where events are POSTed, up to 2,048 characters. Live mode needs `https://`; every URL must resolve to a public address on port 80, 443 or 1024–65535."
  ),
  events: field(
    Schema.Array(WebhookEventType).pipe(Schema.minItems(1), Schema.maxItems(16)),
    "The events to send, at least one: `job.succeeded`, `job.failed`, `job.canceled`, `file.ready`, `file.rejected`."
  ),
  description: Schema.optional(Schema.NullOr(FreeText.pipe(Schema.maxLength(500)))).annotations({
    description: "A note for yourself, up to 500 characters."
  })
}).annotations({ identifier: "WebhookEndpointIn", description: "A webhook endpoint to create." })
export type WebhookEndpointIn = typeof WebhookEndpointIn.Type

const endpointFields = {
  id: field(Schema.String, "The endpoint's id (`whe_…`)."),
  object: constant("webhook_endpoint"),
  url: field(Schema.String, "Where events are POSTed."),
  events: field(Schema.Array(WebhookEventType), "The events sent to it."),
  description: field(Schema.NullOr(Schema.String), "Your note; null when none was given."),
  status: field(
    WebhookEndpointStatus,
    "`enabled`, or `disabled` once its deliveries all failed for 5 days: a disabled endpoint gets no more deliveries."
  ),
  mode: field(Schema.Literal("live", "test"), "The mode of the key that created it: it receives that mode's events only."),
  created_at: field(Timestamp, "When it was created (ISO 8601, UTC)."),
  disabled_at: field(Schema.NullOr(Timestamp), "When it was disabled; null while enabled.")
}

export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")(endpointFields, {
  description: "Where Hush POSTs events (Standard Webhooks), signed with the endpoint's secret."
}) {}

/** The answer to a creation: the only time `secret` is shown. */
export class WebhookEndpointCreated extends Schema.Class<WebhookEndpointCreated>("WebhookEndpointCreated")({
  ...endpointFields,
  secret: field(
    Schema.String,
    "`whsec_…`: verifies each delivery's `webhook-signature` header (Standard Webhooks). Shown only in this answer: store it now."
  )
}, { description: "A created webhook endpoint with its signing secret." }) {}

export class WebhookEndpointList extends Schema.Class<WebhookEndpointList>("WebhookEndpointList")({
  data: field(Schema.Array(WebhookEndpoint), "The endpoints, oldest first, without their secrets."),
  next_cursor: nextCursorField
}, { description: "The webhook endpoints of the key's account and mode." }) {}

export const WebhookAttempt = Schema.Struct({
  at: field(Timestamp, "When the attempt was sent (ISO 8601, UTC)."),
  status_code: field(Schema.NullOr(Schema.Int), "The HTTP status the endpoint answered; null when none came."),
  duration_ms: field(Schema.Int, "How long the attempt took, in milliseconds (at most 10,000)."),
  error: field(Schema.NullOr(Schema.String), "Why the attempt failed (timeout, refused address, non-2xx status, redirect); null when delivered.")
}).annotations({ identifier: "WebhookAttempt", description: "One try at delivering an event." })

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: field(Schema.String, "The delivery's id (`whd_…`)."),
  object: constant("webhook_delivery"),
  event_id: field(Schema.String, "The event's id (`evt_…`): the body's `id` and the `webhook-id` header, the same on every attempt. Use it to drop duplicates."),
  event_type: field(DeliveryEventType, "A subscribed event, or `webhook.test` (sent by `POST /v1/webhook_endpoints/{endpoint_id}/test`)."),
  status: field(
    WebhookDeliveryStatus,
    "`pending` (being tried: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h), `succeeded` (a 2xx within 10 s) or `failed` (every attempt failed)."
  ),
  attempts: field(Schema.Array(WebhookAttempt), "Every attempt so far, oldest first."),
  next_attempt_at: field(Schema.NullOr(Timestamp), "When the next attempt goes out; null unless `pending`."),
  created_at: field(Timestamp, "When the event happened (ISO 8601, UTC)."),
  finished_at: field(Schema.NullOr(Timestamp), "When it succeeded or finally failed; null while pending.")
}, { description: "One event's delivery to one endpoint, with every attempt." }) {}

export class WebhookDeliveryPage extends Schema.Class<WebhookDeliveryPage>("WebhookDeliveryPage")({
  data: field(Schema.Array(WebhookDelivery), "The deliveries of this page, newest first."),
  next_cursor: nextCursorField
}, { description: "A page of an endpoint's deliveries, newest first." }) {}

/** Query of `GET /v1/webhook_endpoints/{id}/deliveries`. */
export const DeliveryListParams = Schema.Struct({
  limit: Schema.optional(PageLimit).annotations({ description: pageLimitDescription }),
  cursor: Schema.optional(Text).annotations({ description: cursorDescription })
}).annotations({ identifier: "DeliveryListParams" })
