/**
 * The dashboard's browser defences, the implementations of the contract's middleware tags
 * (apps/api/contract/middleware.ts):
 *  - `BrowserOrigin` (every /v1/auth and /v1/dashboard endpoint): an unsafe request that a
 *    browser marks as coming from another site (`Sec-Fetch-Site`) or another origin (`Origin`
 *    other than PUBLIC_BASE_URL's) is `403 forbidden`. Clients that send neither header (curl,
 *    servers) pass; the CSRF token still guards them.
 *  - `DashboardSession` (signed-in endpoints): the `__Host-hush_session` cookie must name a
 *    live session (`401 unauthorized`), and an unsafe request must carry the session's token in
 *    `X-CSRF-Token` (`403 forbidden`). It checks the origin too.
 * Sessionless unsafe endpoints that still need a CSRF token (OAuth start) use `checkCsrf` with
 * the pre-session token of `GET /v1/auth/csrf` (a double-submit cookie).
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Either, Layer, Redacted } from "effect"
import { AccountSettingsConfig } from "../../../../core/domain/account-settings.js"
import { excerpt, Forbidden } from "../../../../core/errors.js"
import { AccountRepo } from "../../../../core/ports/repositories.js"
import { SessionRepo, UserRepo } from "../../../../core/ports/users.js"
import { sameSecret } from "../../../../core/rules/secrets.js"
import { RateLimiter } from "../../../../core/ports/rate-limiter.js"
import { authenticateSession } from "../../../../core/services/sessions.js"
import { takeAddressToken, takeToken } from "../edge/rate-limit.js"
import { BrowserOrigin, CSRF_HEADER, DashboardSession } from "../../contract/middleware.js"

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"])

export const isUnsafe = (method: string) => UNSAFE.has(method.toUpperCase())

const originOf = (url: string) => new URL(url).origin

/** Passes safe methods; refuses an unsafe one a browser says came from elsewhere. */
export const checkBrowserOrigin = (request: HttpServerRequest.HttpServerRequest, publicBaseUrl: string): Either.Either<void, Forbidden> => {
  if (!isUnsafe(request.method)) return Either.void
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return Either.left(new Forbidden({ detail: `cross-site request refused (Sec-Fetch-Site: ${excerpt(site)})` }))
  }
  const origin = request.headers["origin"]
  if (origin !== undefined && origin !== originOf(publicBaseUrl)) {
    return Either.left(new Forbidden({ detail: `request from another origin refused (Origin: ${excerpt(origin)})` }))
  }
  return Either.void
}

/** `X-CSRF-Token` must equal `expected` (compared in constant time). */
export const checkCsrf = (request: HttpServerRequest.HttpServerRequest, expected: string | undefined): Either.Either<void, Forbidden> => {
  const presented = request.headers[CSRF_HEADER]
  if (presented === undefined || presented === "") {
    return Either.left(new Forbidden({ detail: "missing X-CSRF-Token header: send the token from login, signup or GET /v1/auth/csrf" }))
  }
  return expected !== undefined && sameSecret(presented, expected)
    ? Either.void
    : Either.left(new Forbidden({ detail: "the X-CSRF-Token header does not match this session's token (GET /v1/auth/csrf)" }))
}

export const layerBrowserOrigin = Layer.effect(BrowserOrigin, Effect.map(AccountSettingsConfig, (settings) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => checkBrowserOrigin(request, settings.publicBaseUrl))))

export const layerDashboardSession = Layer.effect(DashboardSession, Effect.gen(function*() {
  const context = yield* Effect.context<SessionRepo | UserRepo | AccountRepo | AccountSettingsConfig>()
  const settings = yield* AccountSettingsConfig
  const limiter = yield* RateLimiter
  return {
    // a request without a valid session draws on its IP's public bucket (EdgeRules: its account's)
    session: (secret) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* checkBrowserOrigin(request, settings.publicBaseUrl)
        const value = Redacted.value(secret)
        const signedIn = yield* authenticateSession(value === "" ? undefined : value).pipe(
          Effect.provide(context),
          Effect.tapError(() => takeAddressToken(limiter, request))
        )
        if (isUnsafe(request.method)) {
          // a refused token still costs the account a request
          yield* Effect.tapError(checkCsrf(request, signedIn.csrfToken), () => takeToken(limiter, "creates", `account:${signedIn.account.id}`))
        }
        return signedIn
      })
  }
}))
