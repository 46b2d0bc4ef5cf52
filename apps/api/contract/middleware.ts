/**
 * The API's HttpApi middleware tags: what each provides and how it can fail, nothing that runs.
 * In the order they run on a request (after routing): who calls (`Authentication` for an API
 * key, `DashboardSession` for the dashboard's cookie, or nobody; `BrowserOrigin` on the
 * sessionless dashboard endpoints), then `EdgeRules`: the rate bucket, required scopes, the
 * body's shape and idempotency, each read from the endpoint's annotations (annotations.ts).
 * Groups get them through declare.ts, so no endpoint is served without them. The server
 * implements them: apps/api/server/handlers/auth.ts, server/middleware/session.ts, server/edge/rules.ts.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountFrozen, Forbidden, IdempotencyKeyReused, InsufficientScope, InvalidRequest, RateLimited, ServiceUnavailable, Unauthorized,
  UnsupportedMediaType
} from "../../../core/errors.js"
import { CurrentCaller, CurrentSession } from "../../../core/domain/caller.js"

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

/** The dashboard's session cookie (apps/api/server/middleware/cookies.ts sets and clears it). */
export const SESSION_COOKIE = "__Host-hush_session"

export const CSRF_HEADER = "x-csrf-token"

export const sessionSecurity = HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The dashboard's session cookie (Secure, HttpOnly, SameSite=Lax, Path=/), set by signup, login and OAuth sign-in. " +
      "Unsafe methods also need the session's CSRF token in the X-CSRF-Token header."
  )
)

/** The `X-CSRF-Token` header, documented on the unsafe endpoints that need it (checked by the middleware). */
export const CsrfHeaders = Schema.Struct({
  [CSRF_HEADER]: Schema.optional(Schema.String).annotations({
    description: "The session's CSRF token (from login, signup or GET /v1/auth/csrf); required on unsafe methods, else 403 forbidden."
  })
})

/** Refuses an unsafe request a browser says came from another site or origin (server/middleware/session.ts). */
export class BrowserOrigin extends HttpApiMiddleware.Tag<BrowserOrigin>()("BrowserOrigin", {
  failure: Forbidden
}) {}

/** The session cookie → the signed-in user and account; CSRF and origin checked on unsafe methods. */
export class DashboardSession extends HttpApiMiddleware.Tag<DashboardSession>()("DashboardSession", {
  failure: Schema.Union(Unauthorized, Forbidden, RateLimited, ServiceUnavailable),
  provides: CurrentSession,
  security: { session: sessionSecurity }
}) {}
