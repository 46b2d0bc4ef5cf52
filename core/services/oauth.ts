/**
 * Sign-in with GitHub, Google or any OpenID Connect issuer (decisions.md, Dashboard details and
 * OAuth identities): authorization code flow with state and PKCE. The state is a 256-bit
 * secret, kept hashed on the server with the PKCE verifier, and also in a cookie of the browser
 * that started the flow, so a callback must come back to that browser.
 *
 * Every callback needs an address the provider vouches for (GitHub: a primary, verified one;
 * Google and OpenID Connect: `email_verified`): without it nothing is created, linked or signed
 * into (`oauth_email_unverified`). Identities link by provider and subject; an address that
 * belongs to a user is signed into only when that user never proved it (the pre-hijack rule,
 * `claimUnprovenUser`); a proven one is `email_in_use` (sign in, then `connect: true`).
 */
import { Clock, Effect, Option, Schema } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import { KeyRecord } from "../domain/records.js"
import { OAuthIdentityRecord, OAuthProviderName, OAuthStateRecord, UserRecord } from "../domain/users.js"
import { excerpt, NotFound, ProviderError, Unauthorized } from "../errors.js"
import { IdGenerator } from "../ports/ids.js"
import { type OAuthClient, OAuthProviders } from "../ports/oauth.js"
import { KeyRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { OAuthRepo, UserRepo } from "../ports/users.js"
import { WebhookRepo } from "../ports/webhooks.js"
import { Digests } from "../ports/digests.js"
import { sameSecret, sha256Hex } from "../rules/secrets.js"
import { emailKey, isVerified } from "../rules/users.js"
import { createAccountWithUser } from "./accounts.js"
import { authenticateSession, endSession, endUserSessions, startSession, type StartedSession } from "./sessions.js"

/** The `error` of `/login?error=…` after a failed callback. */
export type OAuthErrorCode =
  | "invalid_state" // no state, another browser's, expired, used, or another provider's
  | "access_denied" // the person declined at the provider
  | "oauth_failed" // the code exchange or the profile failed (a PKCE mismatch too)
  | "email_required" // the provider gave no address
  | "oauth_email_unverified" // the provider does not vouch for the address it gave
  | "email_in_use" // the address belongs to a user who proved it: sign in, then connect
  | "verify_email_first" // connect: the signed-in user never proved their address, and the provider vouches for another
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
    const digests = yield* Digests
    const now = yield* Clock.currentTimeMillis
    const state = ids.secret()
    const codeVerifier = ids.secret()
    const authorizeUrl = yield* client.authorizationUrl({ state, codeVerifier }).pipe(
      Effect.mapError((e) => new ProviderError({ detail: `the OAuth provider '${name}' cannot be reached: ${e.message}` }))
    )
    const expiresAt = now + settings.oauthStateTtlMs
    yield* Effect.flatMap(OAuthRepo, (repo) =>
      repo.insertState(new OAuthStateRecord({
        hash: sha256Hex(state, digests), provider: name, codeVerifier, acceptTerms: request.acceptTerms,
        connectUserId: Option.getOrNull(Option.map(connectUser, (u) => u.id)), createdAt: now, expiresAt
      })))
    return { authorizeUrl, state, expiresAt }
  })

/**
 * The pre-hijack rule (decisions.md, OAuth identities): a provider vouches for an address whose
 * user never proved it. Whoever set that user up may not own the address (someone can sign up
 * with another's address and wait): the provider's holder gets the user, and the address counts
 * as verified. decisions.md removes the password and every session; by the same reasoning so
 * go the user's other identities, API keys and webhook endpoints, which the unproven holder
 * could have made and would otherwise keep using (a linked identity signs in again; a test key
 * reads the account's test files; an endpoint receives its jobs' events). Then this identity is
 * linked and a new session starts.
 */
const claimUnprovenUser = (user: UserRecord, identity: OAuthIdentityRecord, now: number, presentedSession: string | undefined) =>
  Effect.gen(function*() {
    const claimed = yield* transactionally(Effect.gen(function*() {
      const repo = yield* OAuthRepo
      yield* Effect.flatMap(UserRepo, (users) => users.update(new UserRecord({ ...user, passwordHash: null, emailVerifiedAt: now })))
      yield* endUserSessions(user.id)
      yield* repo.deleteIdentitiesOf(user.id)
      const keys = yield* KeyRepo
      for (const key of yield* keys.listByAccount(user.accountId)) {
        if (key.revokedAt === null) yield* keys.update(new KeyRecord({ ...key, revokedAt: now }))
      }
      const webhooks = yield* WebhookRepo
      for (const mode of ["live", "test"] as const) {
        for (const endpoint of yield* webhooks.listEndpoints(user.accountId, mode)) yield* webhooks.deleteEndpoint(endpoint.id)
      }
      if ((yield* repo.insertIdentity(identity)) === "taken") return yield* new Unauthorized({ detail: "identity linked meanwhile" })
    })).pipe(Effect.either)
    if (claimed._tag === "Left") return failed("identity_in_use")
    yield* Effect.logWarning("OAuth sign-in claimed a user whose address was never proven: its password, sessions, identities, keys and endpoints are gone")
      .pipe(Effect.annotateLogs({ userId: user.id, provider: identity.provider }))
    yield* endSession(presentedSession)
    return { _tag: "SignedIn", started: yield* startSession(user.id) } as const
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
    const stored = yield* repo.takeState(sha256Hex(params.state, yield* Digests))
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
    const { subject, emailVerified } = profile.right
    const email = profile.right.email?.trim() ?? ""
    if (email === "") return failed("email_required")
    // whoever controls the provider account may have typed any address: only a vouched one counts
    if (!emailVerified) return failed("oauth_email_unverified")
    const identity = yield* repo.findIdentity(name, subject)
    const identityOf = (userId: string) => new OAuthIdentityRecord({ provider: name, subject, userId, email, createdAt: now })

    if (state.connectUserId !== null) {
      const signedIn = yield* Effect.option(authenticateSession(presentedSession))
      if (Option.isNone(signedIn) || signedIn.value.user.id !== state.connectUserId) return failed("invalid_state")
      if (Option.isSome(identity)) return identity.value.userId === state.connectUserId ? { _tag: "Linked" } as const : failed("identity_in_use")
      const user = signedIn.value.user
      if (!isVerified(user)) {
        // nothing links to a user whose address is unproven, unless the provider proves that very address
        return emailKey(user.email) === emailKey(email)
          ? yield* claimUnprovenUser(user, identityOf(user.id), now, presentedSession)
          : failed("verify_email_first")
      }
      const linked = yield* repo.insertIdentity(identityOf(user.id))
      return linked === "inserted" ? { _tag: "Linked" } as const : failed("identity_in_use")
    }

    if (Option.isSome(identity)) {
      const user = yield* Effect.flatMap(UserRepo, (users) => users.get(identity.value.userId))
      if (Option.isNone(user)) return failed("oauth_failed")
      yield* endSession(presentedSession)
      return { _tag: "SignedIn", started: yield* startSession(user.value.id) } as const
    }

    const existing = yield* Effect.flatMap(UserRepo, (users) => users.findByEmail(email))
    if (Option.isSome(existing)) {
      return isVerified(existing.value)
        ? failed("email_in_use")
        : yield* claimUnprovenUser(existing.value, identityOf(existing.value.id), now, presentedSession)
    }
    if (!state.acceptTerms) return failed("terms_required")
    const created = yield* transactionally(Effect.gen(function*() {
      const { user } = yield* createAccountWithUser({ email, name: "", passwordHash: null, emailVerified: true })
      const linked = yield* repo.insertIdentity(identityOf(user.id))
      if (linked === "taken") return yield* new Unauthorized({ detail: "identity linked meanwhile" })
      return user
    })).pipe(Effect.either)
    if (created._tag === "Left") return failed(created.left._tag === "InvalidRequest" ? "email_in_use" : "oauth_failed")
    yield* endSession(presentedSession)
    return { _tag: "SignedIn", started: yield* startSession(created.right.id) } as const
  })
