import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WebhookDeliveryPage, WebhookEndpointList } from "../../../../core/schema/index.js"
import { CurrentCaller } from "../../../../core/domain/caller.js"
import { presentCreatedEndpoint, presentDelivery, presentEndpoint } from "../../../../core/services/present.js"
import { createEndpoint, deleteEndpoint, getEndpoint, listDeliveries, listEndpoints, sendTestEvent } from "../../../../core/services/webhooks.js"
import { HushApi } from "../../contract/definition.js"

export const WebhooksHandlers = HttpApiBuilder.group(HushApi, "webhooks", (handlers) =>
  Effect.succeed(
    handlers
      .handle("createWebhookEndpoint", ({ payload }) =>
        Effect.flatMap(CurrentCaller, (caller) => createEndpoint(caller, payload)).pipe(Effect.map(presentCreatedEndpoint)))
      .handle("listWebhookEndpoints", () =>
        Effect.flatMap(CurrentCaller, listEndpoints).pipe(
          Effect.map((endpoints) => new WebhookEndpointList({ data: endpoints.map(presentEndpoint), next_cursor: null }))
        ))
      .handle("getWebhookEndpoint", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => getEndpoint(caller, path.endpoint_id)).pipe(Effect.map(presentEndpoint)))
      .handle("deleteWebhookEndpoint", ({ path }) => Effect.flatMap(CurrentCaller, (caller) => deleteEndpoint(caller, path.endpoint_id)))
      .handle("listWebhookDeliveries", ({ path, urlParams }) =>
        Effect.flatMap(CurrentCaller, (caller) => listDeliveries(caller, path.endpoint_id, urlParams)).pipe(
          Effect.map((page) => new WebhookDeliveryPage({ data: page.data.map(presentDelivery), next_cursor: page.nextCursor }))
        ))
      .handle("sendWebhookTest", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => sendTestEvent(caller, path.endpoint_id)).pipe(Effect.map(presentDelivery)))
  ))
