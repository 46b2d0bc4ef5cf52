/**
 * The dashboard's cookies, all `__Host-` (Secure, Path=/, no Domain), HttpOnly and
 * SameSite=Lax: the session, the pre-session CSRF token, and the OAuth state of a flow in
 * progress. Browsers keep `Secure` cookies on http://localhost (a secure context), so local
 * development over plain HTTP works there; any other host needs HTTPS (docs/accounts.md).
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Clock, Effect } from "effect"

// the session cookie's name is the contract's (apps/api/contract/middleware.ts SESSION_COOKIE)
export const CSRF_COOKIE = "__Host-hush_csrf"
export const OAUTH_STATE_COOKIE = "__Host-hush_oauth_state"

const FLAGS = { secure: true, httpOnly: true, sameSite: "lax", path: "/" } as const

/** Sets a cookie on this request's response (whatever the handler returns), living until `expiresAt`. */
export const setCookie = (name: string, value: string, expiresAt: number) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.orDie(HttpServerResponse.setCookie(response, name, value, {
        ...FLAGS,
        maxAge: `${Math.max(0, Math.floor((expiresAt - now) / 1000))} seconds`
      }))))

/** Tells the browser to forget a cookie. */
export const clearCookie = (name: string) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.orDie(HttpServerResponse.setCookie(response, name, "", { ...FLAGS, maxAge: 0, expires: new Date(0) })))
