/**
 * The dashboard's session endpoints (decisions.md, Dashboard): `auth` needs no session
 * (signup, login, csrf, verify, forgot, reset, OAuth), `session` needs one. Both refuse
 * unsafe requests from other origins; `session` also checks the CSRF token.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidRequest, NotFound, ProviderError, RateLimited, ServiceUnavailable, Unauthorized } from "../../../../core/errors.js"
import {
  CsrfResponse, EmailRequest, LoginRequest, LoginResponse, OAuthStartRequest, OAuthStartResponse, PasswordChangeRequest,
  ResetRequest, Session, SignupRequest, StatusResponse, Text, TokenRequest, VerifyResponse
} from "../../../../core/schema/index.js"
import { NoStore } from "../annotations.js"
import { withoutCaller, withSession } from "../declare.js"
import { STRICT } from "../strict.js"
import { BrowserOrigin, CsrfHeaders } from "../middleware.js"

const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

const provider = HttpApiSchema.param("provider", Schema.String.annotations({ description: "`github`, `google` or `oidc` (404 when not configured here)." }))

/** What a provider sends back to the callback (others it adds are ignored). */
const CallbackParams = Schema.Struct({
  code: Schema.optional(Text).annotations({ description: "The provider's authorization code." }),
  state: Schema.optional(Text).annotations({ description: "The state given at start, checked against the state cookie." }),
  error: Schema.optional(Text).annotations({ description: "The provider's error code when sign-in was denied." })
})

export const AuthGroup = withoutCaller(HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("signup", "/v1/auth/signup")
      .annotate(OpenApi.Summary, "Sign up")
      .setPayload(strict(SignupRequest))
      .addSuccess(LoginResponse, { status: 201 })
      .addError(RateLimited)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Description, "Creates the account and its user, starts a session (Set-Cookie) and e-mails a verification link. 10 an hour per IP.")
  )
  .add(
    HttpApiEndpoint.post("login", "/v1/auth/login")
      .annotate(OpenApi.Summary, "Log in")
      .setPayload(strict(LoginRequest))
      .addSuccess(LoginResponse)
      .addError(Unauthorized)
      .addError(RateLimited)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Description, "Starts a new session (Set-Cookie). After 10 failures per address or 100 per IP in 15 minutes: 429.")
  )
  .add(
    HttpApiEndpoint.get("csrf", "/v1/auth/csrf")
      .annotate(OpenApi.Summary, "Get a CSRF token")
      .addSuccess(CsrfResponse)
      .annotate(OpenApi.Description, "The session's CSRF token; without a session, a pre-session token (double-submit cookie) for OAuth start.")
  )
  .add(
    HttpApiEndpoint.post("verifyEmail", "/v1/auth/email/verify")
      .annotate(OpenApi.Summary, "Verify an e-mail address")
      .annotate(OpenApi.Description, "Uses the token of a verification link (single use, while valid).")
      .setPayload(strict(TokenRequest))
      .addSuccess(VerifyResponse)
  )
  .add(
    HttpApiEndpoint.post("forgotPassword", "/v1/auth/password/forgot")
      .annotate(OpenApi.Summary, "Request a password reset")
      .setPayload(strict(EmailRequest))
      .addSuccess(StatusResponse, { status: 202 })
      .annotate(OpenApi.Description, "Answers 202 whether or not the address exists; an existing one gets a reset link (1 hour, single use).")
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/v1/auth/password/reset")
      .annotate(OpenApi.Summary, "Reset a password")
      .setPayload(strict(ResetRequest))
      .addSuccess(StatusResponse)
      .annotate(OpenApi.Description, "Sets the password and ends every session of the user.")
  )
  .add(
    HttpApiEndpoint.post("oauthStart")`/v1/auth/oauth/${provider}/start`
      .annotate(OpenApi.Summary, "Start an OAuth sign-in")
      .setPayload(strict(OAuthStartRequest))
      .setHeaders(CsrfHeaders)
      .addSuccess(OAuthStartResponse)
      .addError(NotFound)
      .addError(Unauthorized)
      .addError(ProviderError)
      .annotate(OpenApi.Description, "provider: github, google or oidc (404 when not configured). Sets the state cookie the callback checks.")
  )
  .add(
    HttpApiEndpoint.get("oauthCallback")`/v1/auth/oauth/${provider}/callback`
      .annotate(OpenApi.Summary, "Finish an OAuth sign-in")
      .setUrlParams(CallbackParams)
      .addSuccess(HttpApiSchema.Empty(302))
      .addError(NotFound)
      .annotate(OpenApi.Description, "302 to /dashboard on success, else to /login?error=<code>.")
  )
  .annotate(OpenApi.Description, "Dashboard sign-up and sign-in: no session needed; limited per IP.")
  // sessions start here: cookies, CSRF tokens
  .annotate(NoStore, true)
).middleware(BrowserOrigin)

export const SessionGroup = withSession(HttpApiGroup.make("session")
  .add(
    HttpApiEndpoint.post("logout", "/v1/auth/logout")
      .annotate(OpenApi.Summary, "Log out")
      .annotate(OpenApi.Description, "Ends this session and clears its cookie.")
      .setHeaders(CsrfHeaders)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.get("session", "/v1/auth/session").addSuccess(Session)
      .annotate(OpenApi.Summary, "Get the session")
      .annotate(OpenApi.Description, "The signed-in user and their account.")
  )
  .add(
    HttpApiEndpoint.post("resendVerification", "/v1/auth/email/resend")
      .annotate(OpenApi.Summary, "Resend the verification e-mail")
      .annotate(OpenApi.Description, "At most 5 e-mails an hour per user.")
      .setHeaders(CsrfHeaders)
      .addSuccess(StatusResponse, { status: 202 })
      // an address already verified
      .addError(InvalidRequest)
      .addError(RateLimited)
      .addError(ServiceUnavailable)
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/v1/auth/password/change")
      .annotate(OpenApi.Summary, "Change the password")
      .setPayload(strict(PasswordChangeRequest))
      .setHeaders(CsrfHeaders)
      .addSuccess(LoginResponse)
      .addError(RateLimited)
      .addError(ServiceUnavailable)
      .annotate(OpenApi.Description, "Needs the current password; ends every session of the user and starts a new one (Set-Cookie).")
  )
  .annotate(OpenApi.Description, "The signed-in session.")
)
