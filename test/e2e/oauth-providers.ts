/**
 * Real OAuth providers for the tests, started here on 127.0.0.1 with oauth2-mock-server: an
 * OpenID Connect issuer (discovery, PKCE, userinfo), which also stands in for Google (same
 * shape: `email_verified` in the userinfo), and a GitHub-like server (GitHub's paths for the
 * authorize and token steps, `/user` and `/user/emails` with the bearer token). Each answers
 * the profile a test sets next, as a provider answers whoever signed in there.
 */
import { OAuth2Issuer, OAuth2Server, OAuth2Service } from "oauth2-mock-server"
import { createServer, type Server } from "node:http"
import { expect } from "vitest"
import { freePort } from "../support/server.js"
import type { Browser, BrowserReply } from "./browser.js"

export interface OidcProvider {
  readonly issuer: string
  /** What userinfo answers next (`sub`, `email`, `email_verified`, …). */
  userinfo: Record<string, unknown>
  readonly stop: () => Promise<void>
}

export const startOidcProvider = async (): Promise<OidcProvider> => {
  const server = new OAuth2Server()
  await server.issuer.keys.generate("RS256")
  await server.start(await freePort(), "127.0.0.1")
  const provider: OidcProvider = { issuer: server.issuer.url!, userinfo: {}, stop: () => server.stop() }
  server.service.on("beforeUserinfo", (response: { body: unknown }) => {
    response.body = provider.userinfo
  })
  return provider
}

export interface GitHubEmail {
  readonly email: string
  readonly primary: boolean
  readonly verified: boolean
}

export interface GitHubProvider {
  /** Serves /login/oauth/authorize and /login/oauth/access_token. */
  readonly web: string
  /** Serves /user and /user/emails. */
  readonly api: string
  /** Who signs in next: `/user`'s id (and its public, unchecked `email`) and `/user/emails`. */
  user: { readonly id: number; readonly email?: string | null; readonly emails: ReadonlyArray<GitHubEmail> }
  readonly stop: () => Promise<void>
}

/** GitHub's shape: the token endpoint and API as GitHub has them, on one local server. */
export const startGitHubProvider = async (): Promise<GitHubProvider> => {
  const issuer = new OAuth2Issuer()
  await issuer.keys.generate("RS256")
  const service = new OAuth2Service(issuer, {
    authorize: "/login/oauth/authorize",
    token: "/login/oauth/access_token",
    userinfo: "/oauth-userinfo-unused"
  })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  issuer.url = base
  const provider: GitHubProvider = {
    web: base,
    api: `${base}/api`,
    user: { id: 0, emails: [] },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "").split("?")[0]
    if (path === "/api/user" || path === "/api/user/emails") {
      // GitHub's API answers only with the access token the token step issued
      if (!/^Bearer [\w.-]{20,}$/.test(request.headers.authorization ?? "")) {
        response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ message: "Requires authentication" }))
        return
      }
      const body = path === "/api/user"
        ? { id: provider.user.id, login: `user${provider.user.id}`, email: provider.user.email ?? null }
        : provider.user.emails.map((e) => ({ ...e, visibility: e.primary ? "public" : null }))
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
      return
    }
    service.requestHandler(request, response)
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return provider
}

/**
 * The browser's round trip: start (with its CSRF token) → the provider's authorize step (it
 * redirects straight back, as a provider does for someone signed in there) → the callback.
 */
export const signInWith = async (
  browser: Browser,
  provider: "github" | "google" | "oidc",
  body: { accept_terms?: boolean; connect?: boolean }
): Promise<BrowserReply> => {
  if (browser.session === undefined) expect((await browser.request("GET", "/v1/auth/csrf")).status).toBe(200)
  const start = await browser.request("POST", `/v1/auth/oauth/${provider}/start`, { body })
  expect(start.status, start.text).toBe(200)
  const authorize = new URL(start.json.authorize_url)
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256")
  const redirect = await fetch(authorize, { redirect: "manual" })
  expect(redirect.status).toBe(302)
  return browser.request("GET", redirect.headers.get("location")!)
}

/** Where the callback sent the browser. */
export const landedOn = (reply: BrowserReply) => {
  expect(reply.status, reply.text).toBe(302)
  return reply.headers.get("location")
}
