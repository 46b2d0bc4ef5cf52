/**
 * Sign-in with OpenID Connect against a real OIDC server started here (oauth2-mock-server):
 * discovery, state and PKCE, first sign-in (terms), returning sign-in by subject, linking with
 * `connect`, and every failure as `302 /login?error=<code>`. The provider shapes and the
 * takeover of issue 29 are in oauth-takeover.test.ts.
 */
import { Effect, Either, Option, Redacted } from "effect"
import { OAuth2Server } from "oauth2-mock-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layerOAuthProviders } from "../../adapters/oauth/providers.js"
import { OAuthProviders } from "../../core/ports/oauth.js"
import { freePort, startTestServer, type TestServer } from "../support/server.js"
import { Browser, mailTo, PASSWORD, uniqueEmail, verifiedUser } from "./browser.js"
import { expectProblem } from "./helpers.js"

/** What the provider's userinfo says next. */
let userinfo: Record<string, unknown> = {}
let subjects = 0
const newSubject = () => `subject-${process.pid}-${++subjects}`

describe("OAuth sign-in (OpenID Connect)", () => {
  const provider = new OAuth2Server()
  let server: TestServer
  let issuer = ""
  beforeAll(async () => {
    await provider.issuer.keys.generate("RS256")
    await provider.start(await freePort(), "127.0.0.1")
    issuer = provider.issuer.url!
    provider.service.on("beforeUserinfo", (response: { body: unknown }) => {
      response.body = userinfo
    })
    server = await startTestServer({
      accounts: { oidc: { issuer, clientId: "hush-test-client", clientSecret: Redacted.make("hush-test-secret") } },
      accountSettings: { signupsPerHourPerIp: 1_000 }
    })
  })
  afterAll(async () => {
    await server.close()
    await provider.stop()
  })

  /** start → the provider's authorize step → the callback URL it redirects the browser to. */
  const authorize = async (browser: Browser, body: { accept_terms?: boolean; connect?: boolean }) => {
    if (browser.session === undefined) expect((await browser.request("GET", "/v1/auth/csrf")).status).toBe(200)
    const start = await browser.request("POST", "/v1/auth/oauth/oidc/start", { body })
    expect(start.status, start.text).toBe(200)
    const url = new URL(start.json.authorize_url)
    expect(url.origin + url.pathname).toBe(`${issuer}/authorize`)
    expect(url.searchParams.get("code_challenge_method")).toBe("S256")
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(url.searchParams.get("redirect_uri")).toBe(`${server.baseUrl}/v1/auth/oauth/oidc/callback`)
    expect(url.searchParams.get("client_id")).toBe("hush-test-client")
    expect(url.searchParams.get("state")).toBe(browser.cookies.get("__Host-hush_oauth_state"))
    const stateCookie = start.setCookies.find((c) => c.name === "__Host-hush_oauth_state")!
    expect(stateCookie.attributes.has("httponly") && stateCookie.attributes.has("secure")).toBe(true)
    const redirect = await fetch(url, { redirect: "manual" })
    expect(redirect.status).toBe(302)
    return new URL(redirect.headers.get("location")!)
  }

  const signInWithProvider = async (browser: Browser, body: { accept_terms?: boolean; connect?: boolean }) => {
    const callback = await authorize(browser, body)
    return browser.request("GET", callback.toString())
  }

  it("a first sign-in with accept_terms creates the account, signs in and redirects to /dashboard; the subject signs in again later", async () => {
    const email = uniqueEmail("oidc")
    const subject = newSubject()
    userinfo = { sub: subject, email, email_verified: true }
    const browser = new Browser(server)
    const callback = await signInWithProvider(browser, { accept_terms: true })
    expect(callback.status, callback.text).toBe(302)
    expect(callback.headers.get("location")).toBe("/dashboard")
    expect(browser.session).toMatch(/^[a-z2-7]{52}$/)
    expect(browser.cookies.has("__Host-hush_oauth_state")).toBe(false)
    const session = await browser.request("GET", "/v1/auth/session")
    expect(session.json.user).toMatchObject({ email, verified: true })
    const accountId = session.json.account.id

    // the same subject, whatever address the provider reports now, is the same account
    userinfo = { sub: subject, email: uniqueEmail("changed"), email_verified: true }
    const again = new Browser(server)
    const second = await signInWithProvider(again, {})
    expect(second.headers.get("location")).toBe("/dashboard")
    expect((await again.request("GET", "/v1/auth/session")).json.account.id).toBe(accountId)
  })

  it("an address the provider does not vouch for (email_verified false, absent or not true) creates nothing and signs in nobody", async () => {
    const email = uniqueEmail("unverified")
    for (const claims of [{ email_verified: false }, {}, { email_verified: "yes" }, { email_verified: 1 }]) {
      userinfo = { sub: newSubject(), email, ...claims }
      const browser = new Browser(server)
      const refused = await signInWithProvider(browser, { accept_terms: true })
      expect(refused.headers.get("location"), JSON.stringify(claims)).toBe("/login?error=oauth_email_unverified")
      expect(browser.session).toBeUndefined()
    }
    // no user was made for the address and no mail went to it: it signs up as anyone would
    expect(await mailTo(server, email)).toEqual([])
    const signup = await new Browser(server).request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, accept_terms: true } })
    expect(signup.status, signup.text).toBe(201)
  })

  it("a used, altered or foreign state, a denial and missing terms each redirect to /login?error=…", async () => {
    userinfo = { sub: newSubject(), email: uniqueEmail(), email_verified: true }
    const browser = new Browser(server)
    const callback = await authorize(browser, { accept_terms: true })

    // the state altered in the URL
    const altered = new URL(callback)
    altered.searchParams.set("state", "a".repeat(52))
    const tampered = await browser.request("GET", altered.toString())
    expect(tampered.status).toBe(302)
    expect(tampered.headers.get("location")).toBe("/login?error=invalid_state")
    expect(browser.session).toBeUndefined()

    // the right URL in another browser (no state cookie): refused, and the state is spent
    const stranger = new Browser(server)
    expect((await stranger.request("GET", callback.toString())).headers.get("location")).toBe("/login?error=invalid_state")
    expect(stranger.session).toBeUndefined()
    // …so even the browser that started it cannot use it afterwards
    const late = await browser.request("GET", callback.toString())
    expect(late.headers.get("location")).toBe("/login?error=invalid_state")

    // the person declined at the provider
    const declined = new Browser(server)
    const declinedCallback = await authorize(declined, { accept_terms: true })
    const denied = new URL(declinedCallback)
    denied.searchParams.delete("code")
    denied.searchParams.set("error", "access_denied")
    expect((await declined.request("GET", denied.toString())).headers.get("location")).toBe("/login?error=access_denied")

    // a first sign-in without accept_terms
    const noTerms = new Browser(server)
    expect((await signInWithProvider(noTerms, {})).headers.get("location")).toBe("/login?error=terms_required")
    expect(noTerms.session).toBeUndefined()

    // no address from the provider
    userinfo = { sub: newSubject() }
    const noEmail = new Browser(server)
    expect((await signInWithProvider(noEmail, { accept_terms: true })).headers.get("location")).toBe("/login?error=email_required")
  })

  it("an address its password user proved is not signed into: email_in_use; logged in, connect links it", async () => {
    const { email, browser: owner, reply } = await verifiedUser(server)
    const subject = newSubject()
    userinfo = { sub: subject, email: email.toUpperCase(), email_verified: true }
    const intruder = new Browser(server)
    const refused = await signInWithProvider(intruder, { accept_terms: true })
    expect(refused.status).toBe(302)
    expect(refused.headers.get("location")).toBe("/login?error=email_in_use")
    expect(intruder.session).toBeUndefined()

    // the owner, signed in, links the provider account
    const linked = await signInWithProvider(owner, { connect: true })
    expect(linked.headers.get("location")).toBe("/dashboard")
    expect((await owner.request("GET", "/v1/auth/session")).status).toBe(200)
    // from now on the provider signs in to the owner's account
    const viaProvider = new Browser(server)
    expect((await signInWithProvider(viaProvider, {})).headers.get("location")).toBe("/dashboard")
    expect((await viaProvider.request("GET", "/v1/auth/session")).json.account.id).toBe(reply.json.account.id)

    // that provider account cannot be linked to another user
    const other = await verifiedUser(server)
    expect((await signInWithProvider(other.browser, { connect: true })).headers.get("location")).toBe("/login?error=identity_in_use")
  })

  it("start needs the CSRF token (pre-session or session), connect needs a session, and an unconfigured provider is 404", async () => {
    const browser = new Browser(server)
    await expectProblem(server, await browser.request("POST", "/v1/auth/oauth/oidc/start", { body: {} }), 403, "forbidden")
    expect((await browser.request("GET", "/v1/auth/csrf")).status).toBe(200)
    expect(browser.cookies.get("__Host-hush_csrf")).toBe(browser.csrf)
    const wrong = await browser.request("POST", "/v1/auth/oauth/oidc/start", { body: {}, csrf: false, headers: { "x-csrf-token": "x".repeat(52) } })
    await expectProblem(server, wrong, 403, "forbidden")
    await expectProblem(server, await browser.request("POST", "/v1/auth/oauth/oidc/start", { body: { connect: true } }), 401, "unauthorized")
    for (const name of ["github", "google", "facebook"]) {
      await expectProblem(server, await browser.request("POST", `/v1/auth/oauth/${name}/start`, { body: {} }), 404, "not_found")
      await expectProblem(server, await browser.request("GET", `/v1/auth/oauth/${name}/callback?code=x&state=y`), 404, "not_found")
    }
  })

  it("the code exchange sends the PKCE verifier: the right one gets the profile, a wrong one is refused", async () => {
    const exchangeWith = (verifier: string) => Effect.gen(function*() {
      const providers = yield* OAuthProviders
      const client = Option.getOrThrow(providers.get("oidc"))
      const url = new URL(yield* client.authorizationUrl({ state: "s".repeat(52), codeVerifier: "a".repeat(52) }))
      const redirect = yield* Effect.promise(() => fetch(url, { redirect: "manual" }))
      const code = new URL(redirect.headers.get("location")!).searchParams.get("code")!
      return yield* Effect.either(client.exchange({ code, codeVerifier: verifier }))
    }).pipe(Effect.provide(layerOAuthProviders({
      publicBaseUrl: server.baseUrl,
      oidc: { issuer, clientId: "hush-test-client", clientSecret: Redacted.make("hush-test-secret") }
    })))
    const subject = newSubject()
    userinfo = { sub: subject, email: "pkce@example.com", email_verified: "true" }
    const right = await Effect.runPromise(exchangeWith("a".repeat(52)))
    expect(right).toEqual(Either.right({ subject, email: "pkce@example.com", emailVerified: true }))
    const wrong = await Effect.runPromise(exchangeWith("b".repeat(52)))
    expect(Either.isLeft(wrong) && wrong.left.message).toMatch(/token exchange failed/)
  })
})
