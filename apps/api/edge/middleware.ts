/**
 * The edge's HttpApi middleware, in the order they run on a request (after routing):
 * who calls (`Authentication` for an API key, `DashboardSession` in middleware/session.ts for
 * the dashboard's cookie, or nobody), then `EdgeRules`: the rate bucket, required scopes, the
 * body's shape and idempotency, each read from the endpoint's annotations (annotations.ts).
 * Groups get them through edge/declare.ts, so no endpoint is served without them.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountFrozen, IdempotencyKeyReused, InsufficientScope, InvalidRequest, RateLimited, ServiceUnavailable, Unauthorized,
  UnsupportedMediaType
} from "../../../core/errors.js"
import { CurrentCaller } from "../../../core/services/caller.js"

/** How a key is sent, as the reference declares it (its scheme `apiKey`, selected on every keyed operation). */
const bearerKey = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "An API key, sent as `Authorization: Bearer <key>`: `hush_live_…` (runs models, costs credit) or `hush_test_…` " +
      "(free; every job's output is the sample clip). Create keys in the dashboard; each is shown once."
  ),
  HttpApiSecurity.annotate(OpenApi.Format, "hush_live_… or hush_test_…")
)

/** Bearer API key → the calling account, mode and scopes; the only place a key is looked up. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(Unauthorized, AccountFrozen, RateLimited, ServiceUnavailable),
  provides: CurrentCaller,
  security: { apiKey: bearerKey }
}) {}

const EdgeRulesFailure = Schema.Union(RateLimited, ServiceUnavailable, InsufficientScope, IdempotencyKeyReused, InvalidRequest, UnsupportedMediaType)
export type EdgeRulesFailure = typeof EdgeRulesFailure.Type

/** The per-endpoint rules (edge/rules.ts). */
export class EdgeRules extends HttpApiMiddleware.Tag<EdgeRules>()("EdgeRules", { failure: EdgeRulesFailure }) {}
