/** Handlers of the `dashboardWebhooks` group: the keyed webhooks handlers' services, acted by the session in live mode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WebhookDeliveryPage, WebhookEndpointList } from "../../../../core/schema/index.js"
import { sessionActor } from "../../../../core/services/caller.js"
import { presentCreatedEndpoint, presentDelivery, presentEndpoint } from "../../../../core/services/present.js"
import { CurrentSession } from "../../../../core/domain/caller.js"
import { createEndpoint, deleteEndpoint, listDeliveries, listEndpoints, sendTestEvent } from "../../../../core/services/webhooks.js"
import { HushApi } from "../../contract/definition.js"

const actor = Effect.flatMap(CurrentSession, (signedIn) => sessionActor(signedIn.account))

export const DashboardWebhooksHandlers = HttpApiBuilder.group(HushApi, "dashboardWebhooks", (handlers) =>
  Effect.succeed(
    handlers
      .handle("listDashboardWebhookEndpoints", () =>
        Effect.flatMap(actor, listEndpoints).pipe(
          Effect.map((endpoints) => new WebhookEndpointList({ data: endpoints.map(presentEndpoint), next_cursor: null }))
        ))
      .handle("createDashboardWebhookEndpoint", ({ payload }) =>
        Effect.flatMap(actor, (acting) => createEndpoint(acting, payload)).pipe(Effect.map(presentCreatedEndpoint)))
      .handle("deleteDashboardWebhookEndpoint", ({ path }) => Effect.flatMap(actor, (acting) => deleteEndpoint(acting, path.endpoint_id)))
      .handle("listDashboardWebhookDeliveries", ({ path, urlParams }) =>
        Effect.flatMap(actor, (acting) => listDeliveries(acting, path.endpoint_id, urlParams)).pipe(
          Effect.map((page) => new WebhookDeliveryPage({ data: page.data.map(presentDelivery), next_cursor: page.nextCursor }))
        ))
      .handle("sendDashboardWebhookTest", ({ path }) =>
        Effect.flatMap(actor, (acting) => sendTestEvent(acting, path.endpoint_id)).pipe(Effect.map(presentDelivery)))
  ))
