/** Handlers of the `auth` and `session` groups: HTTP in and out (cookies, redirects) around core/services/auth.ts & co. */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import type { AccountRecord } from "../../../../core/domain/records.js"
import type { UserRecord } from "../../../../core/domain/users.js"
import { IdGenerator } from "../../../../core/ports/ids.js"
import { isWellFormedSecret } from "../../../../core/rules/secrets.js"
import { LoginResponse, Session } from "../../../../core/schema/index.js"
import { changePassword, type ClientInfo, login, logout, signup } from "../../../../core/services/auth.js"
import { forgotPassword, resendVerification, resetPassword, verifyEmail } from "../../../../core/services/email-links.js"
import { finishOAuth, startOAuth } from "../../../../core/services/oauth.js"
import { presentSessionAccount, presentSessionUser } from "../../../../core/services/present-dashboard.js"
import { CurrentSession } from "../../../../core/domain/caller.js"
import { authenticateSession, type StartedSession } from "../../../../core/services/sessions.js"
import { DAY } from "../../../../core/time.js"
import { HushApi } from "../../contract/definition.js"
import { SESSION_COOKIE } from "../../contract/middleware.js"
import { clearCookie, CSRF_COOKIE, OAUTH_STATE_COOKIE, setCookie } from "../middleware/cookies.js"
import { checkCsrf } from "../middleware/session.js"

const clientOf = (request: HttpServerRequest.HttpServerRequest): ClientInfo => ({
  ip: Option.getOrElse(request.remoteAddress, () => "unknown")
})

const presentedSession = (request: HttpServerRequest.HttpServerRequest): string | undefined => request.cookies[SESSION_COOKIE]

const loginResponse = (signedIn: { readonly started: StartedSession; readonly user: UserRecord; readonly account: AccountRecord }) =>
  Effect.as(
    setCookie(SESSION_COOKIE, signedIn.started.secret, signedIn.started.expiresAt),
    new LoginResponse({
      user: presentSessionUser(signedIn.user),
      account: presentSessionAccount(signedIn.account),
      csrf_token: signedIn.started.csrfToken
    })
  )

/** How long a pre-session CSRF token lives. */
const PRE_SESSION_MS = DAY

const redirect = (path: string) => HttpServerResponse.redirect(path, { status: 302 })

export const AuthHandlers = HttpApiBuilder.group(HushApi, "auth", (handlers) =>
  Effect.succeed(
    handlers
      .handle("signup", ({ payload, request }) =>
        signup(
          { email: payload.email, password: payload.password, acceptTerms: payload.accept_terms },
          clientOf(request),
          presentedSession(request)
        ).pipe(Effect.flatMap(loginResponse)))
      .handle("login", ({ payload, request }) =>
        login({ email: payload.email, password: payload.password }, clientOf(request), presentedSession(request))
          .pipe(Effect.flatMap(loginResponse)))
      .handle("csrf", ({ request }) =>
        Effect.gen(function*() {
          const signedIn = yield* Effect.option(authenticateSession(presentedSession(request)))
          if (Option.isSome(signedIn)) return { csrf_token: signedIn.value.csrfToken }
          // no session: a pre-session token, kept in a cookie the OAuth start compares it with
          const kept = request.cookies[CSRF_COOKIE]
          const token = kept !== undefined && isWellFormedSecret(kept) ? kept : (yield* IdGenerator).secret()
          const now = yield* Clock.currentTimeMillis
          yield* setCookie(CSRF_COOKIE, token, now + PRE_SESSION_MS)
          return { csrf_token: token }
        }))
      .handle("verifyEmail", ({ payload, request }) =>
        Effect.gen(function*() {
          // a link used again answers its own signed-in user kindly (core/services/email-links.ts)
          const signedIn = yield* Effect.option(authenticateSession(presentedSession(request)))
          yield* verifyEmail(payload.token, Option.getOrUndefined(Option.map(signedIn, (s) => s.user.id)))
          return { verified: true as const }
        }))
      .handle("forgotPassword", ({ payload }) => Effect.as(forgotPassword(payload.email), { status: "sent" }))
      .handle("resetPassword", ({ payload }) => Effect.as(resetPassword(payload.token, payload.password), { status: "ok" }))
      .handle("oauthStart", ({ path, payload, request }) =>
        Effect.gen(function*() {
          const signedIn = yield* Effect.option(authenticateSession(presentedSession(request)))
          yield* checkCsrf(request, Option.isSome(signedIn) ? signedIn.value.csrfToken : request.cookies[CSRF_COOKIE])
          const started = yield* startOAuth(path.provider, { acceptTerms: payload.accept_terms, connect: payload.connect }, presentedSession(request))
          yield* setCookie(OAUTH_STATE_COOKIE, started.state, started.expiresAt)
          return { authorize_url: started.authorizeUrl }
        }))
      .handle("oauthCallback", ({ path, urlParams, request }) =>
        Effect.gen(function*() {
          const outcome = yield* finishOAuth(path.provider, urlParams, request.cookies[OAUTH_STATE_COOKIE], presentedSession(request))
          yield* clearCookie(OAUTH_STATE_COOKIE)
          switch (outcome._tag) {
            case "SignedIn":
              yield* setCookie(SESSION_COOKIE, outcome.started.secret, outcome.started.expiresAt)
              return redirect("/dashboard")
            case "Linked":
              return redirect("/dashboard")
            case "Failed":
              return redirect(`/login?error=${outcome.code}`)
          }
        }))
  ))

export const SessionHandlers = HttpApiBuilder.group(HushApi, "session", (handlers) =>
  Effect.succeed(
    handlers
      .handle("logout", ({ request }) =>
        Effect.gen(function*() {
          yield* logout(presentedSession(request) ?? "")
          yield* clearCookie(SESSION_COOKIE)
        }))
      .handle("session", () =>
        Effect.map(CurrentSession, (signedIn) =>
          new Session({ user: presentSessionUser(signedIn.user), account: presentSessionAccount(signedIn.account) })))
      .handle("resendVerification", () =>
        Effect.flatMap(CurrentSession, (signedIn) => Effect.as(resendVerification(signedIn.user), { status: "sent" })))
      .handle("changePassword", ({ payload, request }) =>
        Effect.flatMap(CurrentSession, (signedIn) =>
          changePassword(signedIn, { password: payload.password, newPassword: payload.new_password }, clientOf(request))
        ).pipe(Effect.flatMap(loginResponse)))
  ))
