/**
 * decisions.md, OAuth identities, over HTTP against real providers started here
 * (oauth-providers.ts): only an address the provider vouches for creates or links a user, for
 * each provider shape (GitHub's primary verified address; Google's and OpenID Connect's
 * `email_verified`); the account takeover of issue 29 replayed step by step; and the
 * pre-hijack rule (a provider proving the address of a user who never proved it takes that
 * user, whose password, sessions, identities, keys and webhook endpoints go).
 */
import { Effect, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OAuthRepo, UserRepo } from "../../core/ports/users.js"
import { WebhookRepo } from "../../core/ports/webhooks.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { Browser, PASSWORD, signUp, uniqueEmail } from "./browser.js"
import { call, expectProblem } from "./helpers.js"
import { type GitHubProvider, landedOn, type OidcProvider, signInWith, startGitHubProvider, startOidcProvider } from "./oauth-providers.js"

let subjects = 0
const newSubject = () => `subject-${process.pid}-${++subjects}`

describe("OAuth identities (decisions.md): a provider-verified address only", () => {
  let oidc: OidcProvider
  let github: GitHubProvider
  let server: TestServer
  beforeAll(async () => {
    oidc = await startOidcProvider()
    github = await startGitHubProvider()
    const client = { clientId: "hush-test-client", clientSecret: Redacted.make("hush-test-secret") }
    server = await startTestServer({
      accounts: {
        oidc: { ...client, issuer: oidc.issuer },
        // Google's shape is OpenID Connect's userinfo at Google's own fixed addresses: here the issuer stands in
        google: { ...client, endpoints: { web: oidc.issuer } },
        github: { ...client, endpoints: { web: github.web, api: github.api } }
      },
      accountSettings: { signupsPerHourPerIp: 1_000 }
    })
  })
  afterAll(async () => {
    await server.close()
    await oidc.stop()
    await github.stop()
  })

  /** Whether an address has a user: signing it up is refused as "already exists" then. */
  const isTaken = async (email: string) => {
    const reply = await new Browser(server).request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, accept_terms: true } })
    if (reply.status === 201) return false
    expect((await expectProblem(server, reply, 422, "invalid_request")).detail).toBe("an account with this e-mail address already exists")
    return true
  }

  const identity = (provider: "github" | "google" | "oidc", subject: string) =>
    server.run(Effect.flatMap(OAuthRepo, (repo) => repo.findIdentity(provider, subject)))

  it("GitHub: only the primary address, and only when GitHub verified it, signs up", async () => {
    const primary = uniqueEmail("gh-primary")
    const secondary = uniqueEmail("gh-secondary")
    const shown = uniqueEmail("gh-public")
    // the primary address unverified, another one verified, and /user's public `email` (never checked by GitHub)
    github.user = {
      id: 4_000_001, email: shown,
      emails: [{ email: primary, primary: true, verified: false }, { email: secondary, primary: false, verified: true }]
    }
    const refused = new Browser(server)
    expect(landedOn(await signInWith(refused, "github", { accept_terms: true }))).toBe("/login?error=oauth_email_unverified")
    expect(refused.session).toBeUndefined()
    expect(Option.isNone(await identity("github", "4000001"))).toBe(true)
    for (const email of [primary, secondary, shown]) expect(await isTaken(email), email).toBe(false)

    // no primary address at all
    github.user = { id: 4_000_002, email: uniqueEmail(), emails: [{ email: uniqueEmail(), primary: false, verified: true }] }
    expect(landedOn(await signInWith(new Browser(server), "github", { accept_terms: true }))).toBe("/login?error=email_required")

    // the primary address, verified: the account is made, its address verified
    const email = uniqueEmail("gh-verified")
    github.user = { id: 4_000_003, emails: [{ email, primary: true, verified: true }] }
    const accepted = new Browser(server)
    expect(landedOn(await signInWith(accepted, "github", { accept_terms: true }))).toBe("/dashboard")
    expect((await accepted.request("GET", "/v1/auth/session")).json.user).toMatchObject({ email, verified: true })
    expect(Option.isSome(await identity("github", "4000003"))).toBe(true)
  })

  it.each(["google", "oidc"] as const)("%s: email_verified false or absent creates nothing; true signs up verified", async (provider) => {
    const email = uniqueEmail(`${provider}-shape`)
    for (const claims of [{ email_verified: false }, {}]) {
      const subject = newSubject()
      oidc.userinfo = { sub: subject, email, ...claims }
      const browser = new Browser(server)
      expect(landedOn(await signInWith(browser, provider, { accept_terms: true }))).toBe("/login?error=oauth_email_unverified")
      expect(browser.session).toBeUndefined()
      expect(Option.isNone(await identity(provider, subject))).toBe(true)
    }
    expect(await isTaken(email)).toBe(false)

    const verified = uniqueEmail(`${provider}-verified`)
    oidc.userinfo = { sub: newSubject(), email: verified, email_verified: true }
    const browser = new Browser(server)
    expect(landedOn(await signInWith(browser, provider, { accept_terms: true }))).toBe("/dashboard")
    expect((await browser.request("GET", "/v1/auth/session")).json.user).toMatchObject({ email: verified, verified: true })
  })

  it("the takeover of issue 29, replayed: the attacker's identity never gets the victim's account", async () => {
    const victimEmail = uniqueEmail("victim")
    const attackerSubject = newSubject()
    // 1. the attacker's provider account claims the victim's address, unverified
    oidc.userinfo = { sub: attackerSubject, email: victimEmail, email_verified: false }
    const attacker = new Browser(server)
    expect(landedOn(await signInWith(attacker, "oidc", { accept_terms: true }))).toBe("/login?error=oauth_email_unverified")
    expect(attacker.session).toBeUndefined()
    expect(Option.isNone(await identity("oidc", attackerSubject))).toBe(true)

    // 2. the victim signs up as usual (not "already exists"), verifies, names the account, makes a live key
    const victim = await signUp(server, victimEmail)
    const verified = await victim.browser.request("POST", "/v1/auth/email/verify", { body: { token: victim.verifyToken } })
    expect(verified.status, verified.text).toBe(200)
    const named = await victim.browser.request("PATCH", "/v1/dashboard/account", { body: { name: "Victim Ltd" } })
    expect(named.status, named.text).toBe(200)
    const key = await victim.browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live", name: "production" } })
    expect(key.status, key.text).toBe(201)
    expect((await call(server, "GET", "/v1/me", { key: key.json.secret })).status).toBe(200)

    // 3. the attacker's identity signs in again, unverified as before, then claiming the address verified
    const again = new Browser(server)
    expect(landedOn(await signInWith(again, "oidc", {}))).toBe("/login?error=oauth_email_unverified")
    oidc.userinfo = { sub: attackerSubject, email: victimEmail, email_verified: true }
    expect(landedOn(await signInWith(again, "oidc", { accept_terms: true }))).toBe("/login?error=email_in_use")
    expect(again.session).toBeUndefined()
    await expectProblem(server, await again.request("GET", "/v1/auth/session"), 401, "unauthorized")
    await expectProblem(server, await again.request("POST", "/v1/dashboard/keys", { body: { mode: "live" } }), 401, "unauthorized")
    expect(Option.isNone(await identity("oidc", attackerSubject))).toBe(true)

    // the victim's account is as the victim left it
    const account = await victim.browser.request("GET", "/v1/dashboard/account")
    expect(account.json).toMatchObject({ id: victim.reply.json.account.id, name: "Victim Ltd" })
    expect((await victim.browser.request("GET", "/v1/dashboard/keys")).json.data).toHaveLength(1)
  })

  it("pre-hijack: an unproven password user claimed by a provider vouching for the address loses password, sessions, identities, keys and endpoints", async () => {
    const victimEmail = uniqueEmail("prehijack")
    // the attacker signs up first with the victim's address (never proven) and prepares the account
    const attacker = await signUp(server, victimEmail)
    const accountId = attacker.reply.json.account.id
    const testKey = await attacker.browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test", name: "mine" } })
    expect(testKey.status, testKey.text).toBe(201)
    const hook = await attacker.browser.request("POST", "/v1/dashboard/webhook_endpoints", {
      body: { url: "https://93.184.215.14/hooks", events: ["job.succeeded"] }
    })
    expect(hook.status, hook.text).toBe(201)
    const testHook = await call(server, "POST", "/v1/webhook_endpoints", {
      key: testKey.json.secret, body: { url: "https://93.184.215.14/test-hooks", events: ["file.ready"] }
    })
    expect(testHook.status, testHook.text).toBe(201)
    // linking the attacker's own provider account to the unproven user is refused
    oidc.userinfo = { sub: newSubject(), email: uniqueEmail("attacker"), email_verified: true }
    expect(landedOn(await signInWith(attacker.browser, "oidc", { connect: true }))).toBe("/login?error=verify_email_first")
    const secondSession = new Browser(server)
    expect((await secondSession.request("POST", "/v1/auth/login", { body: { email: victimEmail, password: PASSWORD } })).status).toBe(200)

    // the victim signs in with Google, which vouches for the address
    const victimSubject = newSubject()
    oidc.userinfo = { sub: victimSubject, email: victimEmail.toUpperCase(), email_verified: true }
    const victim = new Browser(server)
    expect(landedOn(await signInWith(victim, "google", {}))).toBe("/dashboard")
    const session = await victim.request("GET", "/v1/auth/session")
    expect(session.json.account.id).toBe(accountId)
    expect(session.json.user).toMatchObject({ verified: true })
    const user = Option.getOrThrow(await server.run(Effect.flatMap(UserRepo, (users) => users.findByAccount(accountId))))
    expect(Option.getOrThrow(await identity("google", victimSubject)).userId).toBe(user.id)

    // everything the attacker held is gone
    for (const browser of [attacker.browser, secondSession]) {
      await expectProblem(server, await browser.request("GET", "/v1/auth/session"), 401, "unauthorized")
    }
    await expectProblem(server, await new Browser(server).request("POST", "/v1/auth/login", { body: { email: victimEmail, password: PASSWORD } }), 401, "unauthorized")
    await expectProblem(server, await call(server, "GET", "/v1/me", { key: testKey.json.secret }), 401, "unauthorized")
    const endpoints = await server.run(Effect.flatMap(WebhookRepo, (repo) =>
      Effect.all([repo.listEndpoints(accountId, "live"), repo.listEndpoints(accountId, "test")])))
    expect(endpoints).toEqual([[], []])
    expect((await victim.request("GET", "/v1/dashboard/keys")).json.data.every((k: { revoked_at: string | null }) => k.revoked_at !== null)).toBe(true)
  })

  it("connect by a signed-in user who never proved the address, with a provider vouching for that address, claims it the same way", async () => {
    const owner = await signUp(server)
    const subject = newSubject()
    oidc.userinfo = { sub: subject, email: owner.email, email_verified: true }
    const before = owner.browser.session
    expect(landedOn(await signInWith(owner.browser, "oidc", { connect: true }))).toBe("/dashboard")
    // a new session for the browser that connected; the password set before the proof is gone
    expect(owner.browser.session).not.toBe(before)
    expect((await owner.browser.request("GET", "/v1/auth/session")).json.user).toMatchObject({ email: owner.email, verified: true })
    await expectProblem(server, await new Browser(server).request("POST", "/v1/auth/login", { body: { email: owner.email, password: PASSWORD } }), 401, "unauthorized")
    expect(landedOn(await signInWith(new Browser(server), "oidc", {}))).toBe("/dashboard")
  })
})
