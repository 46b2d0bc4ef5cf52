/**
 * Sign-in with GitHub, Google or any OpenID Connect issuer (decisions.md, Dashboard details):
 * authorization code flow with state and PKCE. The state is a 256-bit secret, kept hashed on
 * the server with the PKCE verifier, and also in a cookie of the browser that started the
 * flow, so a callback must come back to that browser. Identities link by provider and subject,
 * never by e-mail: an address that already belongs to a user is not signed into
 * (`email_in_use`); a signed-in user links a provider with `connect: true`.
 */
import { Clock, Effect, Option, Schema } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import { OAuthIdentityRecord, OAuthProviderName, OAuthStateRecord, type UserRecord } from "../domain/users.js"
import { excerpt, NotFound, ProviderError, Unauthorized } from "../errors.js"
import { IdGenerator } from "../ports/ids.js"
import { type OAuthClient, OAuthProviders } from "../ports/oauth.js"
import { transactionally } from "../ports/transactor.js"
import { OAuthRepo, UserRepo } from "../ports/users.js"
import { sameSecret, sha256Hex } from "../rules/secrets.js"
import { createAccountWithUser } from "./accounts.js"
import { sendVerification } from "./email-links.js"
import { authenticateSession, endSession, startSession, type StartedSession } from "./sessions.js"

/** The `error` of `/login?error=…` after a failed callback. */
export type OAuthErrorCode =
  | "invalid_state" // no state, another browser's, expired, used, or another provider's
  | "access_denied" // the person declined at the provider
  | "oauth_failed" // the code exchange or the profile failed (a PKCE mismatch too)
  | "email_required" // the provider gave no address
  | "email_in_use" // the address belongs to a user already: sign in, then connect
  | "terms_required" // a first sign-in needs accept_terms: true at start
  | "identity_in_use" // connect: that provider account is linked to another user

export type OAuthOutcome =
  | { readonly _tag: "SignedIn"; readonly started: StartedSession }
  | { readonly _tag: "Linked" }
  | { readonly _tag: "Failed"; readonly code: OAuthErrorCode }

const failed = (code: OAuthErrorCode): OAuthOutcome => ({ _tag: "Failed", code })

const isProviderName = Schema.is(OAuthProviderName)

/** The configured client of a provider named in a path; `404 not_found` otherwise. */
const clientOf = (provider: string) =>
  Effect.flatMap(OAuthProviders, (providers) => {
    const client: Option.Option<OAuthClient> = isProviderName(provider) ? providers.get(provider) : Option.none()
    return Option.match(client, {
      onNone: () => Effect.fail(new NotFound({ detail: `the OAuth provider '${excerpt(provider)}' is not configured here` })),
      onSome: (c) => Effect.succeed({ name: provider as OAuthProviderName, client: c })
    })
  })

/**
 * `POST /v1/auth/oauth/{provider}/start`: the provider's authorization URL, and the state the
 * browser must keep (a cookie) until the callback. `connect` needs a session.
 */
export const startOAuth = (
  provider: string,
  request: { readonly acceptTerms: boolean; readonly connect: boolean },
  presentedSession: string | undefined
) =>
  Effect.gen(function*() {
    const { name, client } = yield* clientOf(provider)
    const connectUser = request.connect ? Option.some((yield* authenticateSession(presentedSession)).user) : Option.none<UserRecord>()
    const ids = yield* IdGenerator
    const settings = yield* AccountSettingsConfig
    const now = yield* Clock.currentTimeMillis
    const state = ids.secret()
    const codeVerifier = ids.secret()
    const authorizeUrl = yield* client.authorizationUrl({ state, codeVerifier }).pipe(
      Effect.mapError((e) => new ProviderError({ detail: `the OAuth provider '${name}' cannot be reached: ${e.message}` }))
    )
    const expiresAt = now + settings.oauthStateTtlMs
    yield* Effect.flatMap(OAuthRepo, (repo) =>
      repo.insertState(new OAuthStateRecord({
        hash: sha256Hex(state), provider: name, codeVerifier, acceptTerms: request.acceptTerms,
        connectUserId: Option.getOrNull(Option.map(connectUser, (u) => u.id)), createdAt: now, expiresAt
      })))
    return { authorizeUrl, state, expiresAt }
  })

/**
 * `GET /v1/auth/oauth/{provider}/callback`: signs in (or up), or links, or says why not. Only an
 * unconfigured provider is an error answer (`404`); every other failure is an outcome the
 * edge turns into a redirect to `/login?error=<code>`.
 */
export const finishOAuth = (
  provider: string,
  params: { readonly code?: string | undefined; readonly state?: string | undefined; readonly error?: string | undefined },
  browserState: string | undefined,
  presentedSession: string | undefined
) =>
  Effect.gen(function*() {
    const { name, client } = yield* clientOf(provider)
    if (params.state === undefined || params.state === "") return failed("invalid_state")
    const repo = yield* OAuthRepo
    // taken first: a state works once, whatever happens next
    const stored = yield* repo.takeState(sha256Hex(params.state))
    const now = yield* Clock.currentTimeMillis
    if (
      browserState === undefined || !sameSecret(browserState, params.state) || Option.isNone(stored) ||
      stored.value.provider !== name || now >= stored.value.expiresAt
    ) return failed("invalid_state")
    const state = stored.value
    if (params.error !== undefined) return failed(params.error === "access_denied" ? "access_denied" : "oauth_failed")
    if (params.code === undefined || params.code === "") return failed("oauth_failed")
    const profile = yield* Effect.either(client.exchange({ code: params.code, codeVerifier: state.codeVerifier }))
    if (profile._tag === "Left") {
      yield* Effect.logWarning(`OAuth callback of '${name}' failed: ${profile.left.message}`)
      return failed("oauth_failed")
    }
    const { subject, email, emailVerified } = profile.right
    const identity = yield* repo.findIdentity(name, subject)

    if (state.connectUserId !== null) {
      const signedIn = yield* Effect.option(authenticateSession(presentedSession))
      if (Option.isNone(signedIn) || signedIn.value.user.id !== state.connectUserId) return failed("invalid_state")
      if (Option.isSome(identity)) return identity.value.userId === state.connectUserId ? { _tag: "Linked" } as const : failed("identity_in_use")
      const linked = yield* repo.insertIdentity(new OAuthIdentityRecord({ provider: name, subject, userId: state.connectUserId, email, createdAt: now }))
      return linked === "inserted" ? { _tag: "Linked" } as const : failed("identity_in_use")
    }

    if (Option.isSome(identity)) {
      const user = yield* Effect.flatMap(UserRepo, (users) => users.get(identity.value.userId))
      if (Option.isNone(user)) return failed("oauth_failed")
      yield* endSession(presentedSession)
      return { _tag: "SignedIn", started: yield* startSession(user.value.id) } as const
    }

    if (email === null || email.trim() === "") return failed("email_required")
    if (Option.isSome(yield* Effect.flatMap(UserRepo, (users) => users.findByEmail(email)))) return failed("email_in_use")
    if (!state.acceptTerms) return failed("terms_required")
    const created = yield* transactionally(Effect.gen(function*() {
      const { user } = yield* createAccountWithUser({ email, name: "", passwordHash: null, emailVerified })
      const linked = yield* repo.insertIdentity(new OAuthIdentityRecord({ provider: name, subject, userId: user.id, email, createdAt: now }))
      if (linked === "taken") return yield* new Unauthorized({ detail: "identity linked meanwhile" })
      return user
    })).pipe(Effect.either)
    if (created._tag === "Left") return failed(created.left._tag === "InvalidRequest" ? "email_in_use" : "oauth_failed")
    if (!emailVerified) yield* sendVerification(created.right)
    yield* endSession(presentedSession)
    return { _tag: "SignedIn", started: yield* startSession(created.right.id) } as const
  })
