/** Outbound webhook endpoints (decisions.md, Events): bearer key, scope `webhooks:write`. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFound } from "../../../../core/errors.js"
import {
  DeliveryListParams, WebhookDelivery, WebhookDeliveryPage, WebhookEndpoint, WebhookEndpointCreated, WebhookEndpointIn, WebhookEndpointList
} from "../../../../core/schema/index.js"
import { Idempotent, NoStore, RequiredScopes } from "../annotations.js"
import { withApiKey } from "../declare.js"
import { STRICT } from "../strict.js"

const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

const endpointId = HttpApiSchema.param("endpoint_id", Schema.String.annotations({ description: "The webhook endpoint's id (`whe_…`)." }))

export const WebhooksGroup = withApiKey(HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("createWebhookEndpoint", "/v1/webhook_endpoints")
      .setPayload(strict(WebhookEndpointIn))
      .addSuccess(WebhookEndpointCreated, { status: 201 })
      .annotate(Idempotent, true)
      // the answer carries the signing secret
      .annotate(NoStore, true)
      .annotate(OpenApi.Summary, "Create a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "Subscribes a URL to events of the key's mode (at most 16 endpoints per account and mode). The `secret` (`whsec_…`) that signs every delivery is shown only in this answer. Live-mode URLs must be `https://`; every URL must resolve to a public address (`422 invalid_request` otherwise)."
      )
  )
  .add(
    HttpApiEndpoint.get("listWebhookEndpoints", "/v1/webhook_endpoints")
      .addSuccess(WebhookEndpointList)
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(OpenApi.Description, "The endpoints of the key's account and mode, oldest first; never their secrets.")
  )
  .add(
    HttpApiEndpoint.get("getWebhookEndpoint")`/v1/webhook_endpoints/${endpointId}`
      .addSuccess(WebhookEndpoint)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Get a webhook endpoint")
      .annotate(OpenApi.Description, "One endpoint, without its secret.")
  )
  .add(
    HttpApiEndpoint.del("deleteWebhookEndpoint")`/v1/webhook_endpoints/${endpointId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Delete a webhook endpoint")
      .annotate(OpenApi.Description, "The endpoint and its deliveries log go; pending deliveries are not sent.")
  )
  .add(
    HttpApiEndpoint.get("listWebhookDeliveries")`/v1/webhook_endpoints/${endpointId}/deliveries`
      .setUrlParams(Schema.Struct(DeliveryListParams.fields))
      .addSuccess(WebhookDeliveryPage)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "List an endpoint's deliveries")
      .annotate(OpenApi.Description, "Newest first, by cursor. Each delivery lists every attempt: when, the status answered, the duration and the error.")
  )
  .add(
    HttpApiEndpoint.post("sendWebhookTest")`/v1/webhook_endpoints/${endpointId}/test`
      .addSuccess(WebhookDelivery, { status: 202 })
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Send a test event")
      .annotate(
        OpenApi.Description,
        "Sends a `webhook.test` event (`data: {endpoint: id}`) to this endpoint, whatever events it subscribes to, through the normal delivery path: signed, retried and logged like any other delivery. Answers the pending delivery; its attempts appear under GET …/deliveries."
      )
  )
  .annotate(RequiredScopes, ["webhooks:write"])
  .annotate(
    OpenApi.Description,
    "Outbound webhooks (Standard Webhooks): job.succeeded, job.failed, job.canceled, file.ready and file.rejected, signed with the endpoint's secret."
  ))
