/**
 * The OAuth providers of decisions.md with `arctic`: GitHub, Google, and any OpenID Connect
 * issuer (discovery from `OIDC_ISSUER`); each answers the address it vouches for, or says it
 * does not (decisions.md, OAuth identities; core/services/oauth.ts refuses those). Every
 * flow is the authorization code flow with state and PKCE (S256); the redirect URI is
 * `{PUBLIC_BASE_URL}/v1/auth/oauth/{provider}/callback`. The profile comes from the provider's
 * API with the access token (Google and OIDC: the userinfo endpoint and its `email_verified`;
 * GitHub: /user and /user/emails, its primary address and whether it is verified).
 *
 * arctic builds the authorization URLs (state, S256 challenge) and reads the token answers; the
 * token request itself is sent here. arctic's own sets `Content-Length` by hand, and once
 * @effect/platform-node has loaded undici 7 (which installs itself as the global dispatcher),
 * Node 20's fetch sends that header doubled ("n, n"), which undici 7 refuses: every exchange
 * would fail with "invalid content-length header".
 */
import { CodeChallengeMethod, OAuth2Client, OAuth2Tokens } from "arctic"
import { Duration, Effect, Layer, Option, Redacted, Ref } from "effect"
import type { OAuthProviderName } from "../../core/domain/users.js"
import { type OAuthClient, OAuthFailure, type OAuthProfile, OAuthProviders } from "../../core/ports/oauth.js"

export interface OAuthCredentials {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /**
   * Where the provider is, when not at its public addresses: a local stand-in that speaks the
   * provider's protocol (the tests' servers). GitHub: `web` serves /login/oauth/*, `api` serves
   * /user and /user/emails. Google: `web` serves /authorize, /token and /userinfo. Not read
   * from the environment.
   */
  readonly endpoints?: { readonly web: string; readonly api?: string | undefined } | undefined
}

export interface OAuthSettings {
  readonly publicBaseUrl: string
  readonly github?: OAuthCredentials | undefined
  readonly google?: OAuthCredentials | undefined
  readonly oidc?: (OAuthCredentials & { readonly issuer: string }) | undefined
}

const TIMEOUT = Duration.seconds(15)

export const redirectUriOf = (publicBaseUrl: string, provider: OAuthProviderName) =>
  `${publicBaseUrl.replace(/\/+$/, "")}/v1/auth/oauth/${provider}/callback`

const attempt = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) => new OAuthFailure({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
  }).pipe(
    Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => new OAuthFailure({ message: `${what}: no answer in 15 s` }) })
  )

const getJson = async (url: string, accessToken: string): Promise<any> => {
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: "application/json", "user-agent": "hush" }
  })
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  return response.json()
}

/** The authorization code → tokens (client authentication: HTTP Basic, as arctic does). */
const exchangeCode = (
  tokenEndpoint: string,
  client: { readonly credentials: OAuthCredentials; readonly redirectUri: string },
  code: string,
  codeVerifier: string
) =>
  attempt("the token exchange failed", async () => {
    const basic = Buffer.from(`${client.credentials.clientId}:${Redacted.value(client.credentials.clientSecret)}`).toString("base64")
    const response = await fetch(tokenEndpoint, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded", accept: "application/json", "user-agent": "hush", authorization: `Basic ${basic}`
      },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: client.redirectUri, code_verifier: codeVerifier })
    })
    const data = await response.json().catch(() => null) as Record<string, unknown> | null
    if (!response.ok || data === null || typeof data !== "object" || typeof data.error === "string") {
      throw new Error(`the token endpoint answered ${response.status}${typeof data?.error === "string" ? ` (${data.error})` : ""}`)
    }
    return new OAuth2Tokens(data)
  })

/**
 * An OpenID Connect userinfo document → profile. The address counts only with `email_verified`
 * true (some issuers send the string "true"); absent, false or anything else is unverified.
 */
const profileOfUserinfo = (info: any): OAuthProfile => {
  if (typeof info?.sub !== "string" || info.sub === "") throw new Error("the userinfo has no subject")
  return {
    subject: info.sub,
    email: typeof info.email === "string" ? info.email : null,
    emailVerified: info.email_verified === true || info.email_verified === "true"
  }
}

/** A provider given by its endpoints (fetched lazily for OIDC discovery), with PKCE. */
const pkceClient = (options: {
  readonly credentials: OAuthCredentials
  readonly redirectUri: string
  readonly scopes: ReadonlyArray<string>
  readonly endpoints: Effect.Effect<{ readonly authorization: string; readonly token: string; readonly userinfo?: string | undefined }, OAuthFailure>
  readonly profile: (accessToken: string, endpoints: { readonly userinfo?: string | undefined }) => Promise<OAuthProfile>
}): OAuthClient => {
  const client = new OAuth2Client(options.credentials.clientId, Redacted.value(options.credentials.clientSecret), options.redirectUri)
  return {
    authorizationUrl: ({ state, codeVerifier }) =>
      Effect.map(options.endpoints, (endpoints) =>
        client.createAuthorizationURLWithPKCE(endpoints.authorization, state, CodeChallengeMethod.S256, codeVerifier, [...options.scopes]).toString()),
    exchange: ({ code, codeVerifier }) =>
      Effect.gen(function*() {
        const endpoints = yield* options.endpoints
        const tokens = yield* exchangeCode(endpoints.token, options, code, codeVerifier)
        const accessToken = yield* Effect.try({
          try: () => tokens.accessToken(),
          catch: (cause) => new OAuthFailure({ message: "the token answer has no access token", cause })
        })
        return yield* attempt("the profile could not be read", () => options.profile(accessToken, endpoints))
      })
  }
}

/**
 * GitHub's profile: the id from /user, the address from /user/emails, and only the primary one
 * (decisions.md, OAuth identities): /user's `email` is whatever public address the person
 * typed, never checked by GitHub; another verified address is not the one they sign in as.
 */
const githubProfile = async (apiBase: string, accessToken: string): Promise<OAuthProfile> => {
  const user = await getJson(`${apiBase}/user`, accessToken)
  if (typeof user?.id !== "number" && typeof user?.id !== "string") throw new Error("GitHub's /user has no id")
  const emails: unknown = await getJson(`${apiBase}/user/emails`, accessToken)
  if (!Array.isArray(emails)) throw new Error("GitHub's /user/emails is not a list")
  const primary = emails.find((e) => e?.primary === true)
  return {
    subject: String(user.id),
    email: typeof primary?.email === "string" ? primary.email : null,
    emailVerified: primary?.verified === true
  }
}

const GITHUB = { web: "https://github.com", api: "https://api.github.com" }
const GOOGLE = {
  authorization: "https://accounts.google.com/o/oauth2/v2/auth",
  token: "https://oauth2.googleapis.com/token",
  userinfo: "https://openidconnect.googleapis.com/v1/userinfo"
}

/** `{issuer}/.well-known/openid-configuration`, read once (retried after a failure). */
const discover = (issuer: string) => {
  const base = issuer.replace(/\/+$/, "")
  return attempt(`OpenID Connect discovery of ${base} failed`, async () => {
    const response = await fetch(`${base}/.well-known/openid-configuration`, { headers: { accept: "application/json" } })
    if (!response.ok) throw new Error(`it answered ${response.status}`)
    const document = await response.json() as Record<string, unknown>
    if (typeof document.issuer !== "string" || document.issuer.replace(/\/+$/, "") !== base) {
      throw new Error(`the document names issuer ${String(document.issuer)}`)
    }
    const { authorization_endpoint: authorization, token_endpoint: token, userinfo_endpoint: userinfo } = document
    if (typeof authorization !== "string" || typeof token !== "string" || typeof userinfo !== "string") {
      throw new Error("the document lacks the authorization, token or userinfo endpoint")
    }
    return { authorization, token, userinfo }
  })
}

/** Runs `effect` until it succeeds once, then answers that value (a failure is retried next time). */
const keepSuccess = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Ref.make(Option.none<A>()), (kept) =>
    Effect.flatMap(Ref.get(kept), Option.match({
      onSome: Effect.succeed,
      onNone: () => Effect.tap(effect, (value) => Ref.set(kept, Option.some(value)))
    })))

export const layerOAuthProviders = (settings: OAuthSettings) =>
  Layer.effect(OAuthProviders, Effect.gen(function*() {
    const clients = new Map<OAuthProviderName, OAuthClient>()
    if (settings.github !== undefined) {
      const web = settings.github.endpoints?.web ?? GITHUB.web
      const api = settings.github.endpoints?.api ?? GITHUB.api
      clients.set("github", pkceClient({
        credentials: settings.github,
        redirectUri: redirectUriOf(settings.publicBaseUrl, "github"),
        scopes: ["read:user", "user:email"],
        endpoints: Effect.succeed({ authorization: `${web}/login/oauth/authorize`, token: `${web}/login/oauth/access_token` }),
        profile: (accessToken) => githubProfile(api, accessToken)
      }))
    }
    if (settings.google !== undefined) {
      const web = settings.google.endpoints?.web
      clients.set("google", pkceClient({
        credentials: settings.google,
        redirectUri: redirectUriOf(settings.publicBaseUrl, "google"),
        scopes: ["openid", "email", "profile"],
        endpoints: Effect.succeed(web === undefined
          ? GOOGLE
          : { authorization: `${web}/authorize`, token: `${web}/token`, userinfo: `${web}/userinfo` }),
        profile: async (accessToken, endpoints) => profileOfUserinfo(await getJson(endpoints.userinfo!, accessToken))
      }))
    }
    if (settings.oidc !== undefined) {
      clients.set("oidc", pkceClient({
        credentials: settings.oidc,
        redirectUri: redirectUriOf(settings.publicBaseUrl, "oidc"),
        scopes: ["openid", "email", "profile"],
        endpoints: yield* keepSuccess(discover(settings.oidc.issuer)),
        profile: async (accessToken, endpoints) => profileOfUserinfo(await getJson(endpoints.userinfo!, accessToken))
      }))
    }
    return { get: (provider) => Option.fromNullable(clients.get(provider)) }
  }))
