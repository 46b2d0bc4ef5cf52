/**
 * Webhook endpoints from the dashboard (decisions.md, Events: "the dashboard manages endpoints
 * with the same rules"): the keyed API's operations on the session's account in live mode,
 * through the same core services.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AccountFrozen, NotFound } from "../../../../core/errors.js"
import {
  DeliveryListParams, WebhookDelivery, WebhookDeliveryPage, WebhookEndpointCreated, WebhookEndpointIn, WebhookEndpointList
} from "../../../../core/schema/index.js"
import { Idempotent } from "../annotations.js"
import { withSession } from "../declare.js"
import { STRICT } from "../strict.js"
import { CsrfHeaders } from "../middleware.js"
import { IdempotentCsrfHeaders } from "./dashboard-work.js"

const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

const endpointId = HttpApiSchema.param("endpoint_id", Schema.String.annotations({ description: "The webhook endpoint's id (`whe_…`)." }))

export const DashboardWebhooksGroup = withSession(HttpApiGroup.make("dashboardWebhooks")
  .add(
    HttpApiEndpoint.get("listDashboardWebhookEndpoints", "/v1/dashboard/webhook_endpoints")
      .addSuccess(WebhookEndpointList)
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(OpenApi.Description, "The account's live-mode endpoints, oldest first; never their secrets.")
  )
  .add(
    HttpApiEndpoint.post("createDashboardWebhookEndpoint", "/v1/dashboard/webhook_endpoints")
      .setPayload(strict(WebhookEndpointIn))
      .setHeaders(IdempotentCsrfHeaders)
      .addSuccess(WebhookEndpointCreated, { status: 201 })
      .annotate(Idempotent, true)
      .annotate(OpenApi.Summary, "Create a webhook endpoint")
      .annotate(OpenApi.Description, "As POST /v1/webhook_endpoints, in live mode: the `secret` is shown only in this answer.")
  )
  .add(
    HttpApiEndpoint.del("deleteDashboardWebhookEndpoint")`/v1/dashboard/webhook_endpoints/${endpointId}`
      .setHeaders(CsrfHeaders)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Delete a webhook endpoint")
      .annotate(OpenApi.Description, "The endpoint and its deliveries log go; pending deliveries are not sent.")
  )
  .add(
    HttpApiEndpoint.get("listDashboardWebhookDeliveries")`/v1/dashboard/webhook_endpoints/${endpointId}/deliveries`
      .setUrlParams(Schema.Struct(DeliveryListParams.fields))
      .addSuccess(WebhookDeliveryPage)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "List an endpoint's deliveries")
      .annotate(OpenApi.Description, "Newest first, by cursor; each with every attempt's time, status, duration and error.")
  )
  .add(
    HttpApiEndpoint.post("sendDashboardWebhookTest")`/v1/dashboard/webhook_endpoints/${endpointId}/test`
      .setHeaders(CsrfHeaders)
      .addSuccess(WebhookDelivery, { status: 202 })
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Send a test event")
      .annotate(OpenApi.Description, "As POST /v1/webhook_endpoints/{endpoint_id}/test: a `webhook.test` event through the normal delivery path.")
  )
  .addError(AccountFrozen)
  .annotate(OpenApi.Description, "Webhook endpoints from the dashboard: the keyed API's, on the session's account in live mode, with the same rules.")
)
