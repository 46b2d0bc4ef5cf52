/** The HTTP app: the HttpApi, its handlers, the edge, storage and page routes. */
import { HttpApiBuilder, HttpMiddleware, type HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { layerBackground } from "./background.js"
import { ServerInfo } from "./context.js"
import { HushApi } from "../contract/definition.js"
import { layerBodyCap } from "./edge/body.js"
import { layerEdge, TrustedProxies } from "./edge/index.js"
import type { Cidr } from "../../../core/rules/ip-address.js"
import { layerRoutes, Routes } from "./edge/routes.js"
import { layerEdgeRules } from "./edge/rules.js"
import { ErrorsBaseUrl, errorsBaseUrlOf } from "./edge/problem.js"
import { AccountHandlers } from "./handlers/account.js"
import { layerAuthentication } from "./handlers/auth.js"
import { FilesHandlers } from "./handlers/files.js"
import { JobsHandlers } from "./handlers/jobs.js"
import { WebhooksHandlers } from "./handlers/webhooks.js"
import { DashboardHandlers } from "./handlers/dashboard.js"
import { DashboardWebhooksHandlers } from "./handlers/dashboard-webhooks.js"
import { DashboardWorkHandlers } from "./handlers/dashboard-work.js"
import { PaymentWebhookHandlers } from "./handlers/payments.js"
import { PublicHandlers } from "./handlers/public.js"
import { AuthHandlers, SessionHandlers } from "./handlers/sessions.js"
import { layerBrowserOrigin, layerDashboardSession } from "./middleware/session.js"
import { MetricsAccess, type MetricsAccessOptions } from "./operations/access.js"
import { OperationsHandlers } from "./operations/handlers.js"
import { layerDraining } from "./operations/readiness.js"
import { FakeCheckoutRoutes } from "./fake-checkout.js"
import { referenceRoutes } from "./openapi/serve.js"
import { pageRoutes } from "./pages.js"
import { layerStatusProbe } from "./status.js"
import { webRoutes } from "./web.js"
import { HUSH_VERSION } from "../../../core/version.js"

/** Where each error code's page is (edge/problem.ts): main.ts refuses early requests with it. */
export { errorsBaseUrlOf }

export interface ApiOptions {
  readonly publicBaseUrl: string
  readonly env: string
  readonly gpuConfigured: boolean
  /** Where signed storage URLs point when not at this origin (S3): the dashboard uploads to and plays from them. */
  readonly storageOrigins?: ReadonlyArray<string> | undefined
  /** `/metrics`: off (404) without a token (apps/runtime/observability.ts). */
  readonly metrics?: MetricsAccessOptions | undefined
  /** `TRUSTED_PROXIES`: whose `X-Forwarded-For` names the client (edge/index.ts); none when absent. */
  readonly trustedProxies?: ReadonlyArray<Cidr> | undefined
}


/**
 * Needs an HttpServer and the core's services (apps/runtime/layers.ts layerCore), plus the
 * blob store's own routes where it has some (storageLayers).
 */
export const layerApi = <E, R>(options: ApiOptions, storageRoutes: Layer.Layer<never, E, R>) => {
  const handlers = Layer.mergeAll(PublicHandlers, FilesHandlers, JobsHandlers, AccountHandlers, AuthHandlers, SessionHandlers, DashboardHandlers, PaymentWebhookHandlers,
    WebhooksHandlers, DashboardWorkHandlers, DashboardWebhooksHandlers, OperationsHandlers
  ).pipe(
    Layer.provide(Layer.mergeAll(
      layerBackground,
      layerDraining,
      Layer.succeed(MetricsAccess, options.metrics ?? { token: Option.none(), ownPort: false }),
      layerStatusProbe({ gpuConfigured: options.gpuConfigured }),
      Layer.succeed(ServerInfo, { version: HUSH_VERSION, env: options.env })
    ))
  )
  const api = HttpApiBuilder.api(HushApi).pipe(
    Layer.provide(handlers),
    Layer.provide(Layer.mergeAll(layerAuthentication, layerBrowserOrigin, layerDashboardSession, layerEdgeRules))
  )
  return HttpApiBuilder.serve().pipe(
    Layer.provide(Layer.mergeAll(
      storageRoutes, pageRoutes, referenceRoutes(options.publicBaseUrl), webRoutes(options.storageOrigins ?? []), FakeCheckoutRoutes, layerEdge
    )),
    Layer.provide(api),
    Layer.provide(Layer.succeed(ErrorsBaseUrl, errorsBaseUrlOf(options.publicBaseUrl))),
    // in the context every request is served from (edge/body.ts)
    Layer.provide(layerBodyCap),
    Layer.provide(Layer.succeed(TrustedProxies, options.trustedProxies ?? [])),
    // a request's span is named by its route template (`GET /v1/jobs/:job_id`), never its raw path
    Layer.provide(Layer.effect(
      HttpMiddleware.SpanNameGenerator,
      Effect.map(Routes, (routes) => (request: HttpServerRequest.HttpServerRequest) => `${request.method} ${routes.routeOf(request)}`)
    ).pipe(Layer.provide(layerRoutes)))
  )
}
