/**
 * The edge's HttpApi middleware, in the order they run on a request (after routing):
 * who calls (`Authentication` for an API key, `DashboardSession` in middleware/session.ts for
 * the dashboard's cookie, or nobody), then `EdgeRules`: the rate bucket, required scopes, the
 * body's shape and idempotency, each read from the endpoint's annotations (annotations.ts).
 * Groups get them through edge/declare.ts, so no endpoint is served without them.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountFrozen, IdempotencyKeyReused, InsufficientScope, InvalidRequest, RateLimited, ServiceUnavailable, Unauthorized,
  UnsupportedMediaType
} from "../../../core/errors.js"
import { CurrentCaller } from "../../../core/services/caller.js"

/** Bearer API key → the calling account, mode and scopes; the only place a key is looked up. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(Unauthorized, AccountFrozen, RateLimited, ServiceUnavailable),
  provides: CurrentCaller,
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

const EdgeRulesFailure = Schema.Union(RateLimited, ServiceUnavailable, InsufficientScope, IdempotencyKeyReused, InvalidRequest, UnsupportedMediaType)
export type EdgeRulesFailure = typeof EdgeRulesFailure.Type

/** The per-endpoint rules (edge/rules.ts). */
export class EdgeRules extends HttpApiMiddleware.Tag<EdgeRules>()("EdgeRules", { failure: EdgeRulesFailure }) {}
