/**
 * Self-serve accounts over real HTTP: signup, the verification mail in the dev outbox, login,
 * logout, password reset and change, the session cookie and its rotation, CSRF and origin
 * checks, and the limits on signups and failed logins.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DAY } from "../../core/time.js"
import { makeAdjustableClock } from "../support/clock.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { Browser, mailTo, PASSWORD, signUp, tokenIn, uniqueEmail, verifiedUser, waitForMail } from "./browser.js"
import { call, expectIso, expectProblem } from "./helpers.js"

const SESSION = "__Host-hush_session"

describe("signup, verification and the first live key", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ accountSettings: { signupsPerHourPerIp: 1_000 } })
  })
  afterAll(async () => {
    await server.close()
  })

  it("signup → verification mail from the outbox → verify → live key → the key works on /v1/me", async () => {
    const email = uniqueEmail("Flow")
    const browser = new Browser(server)
    const signup = await browser.request("POST", "/v1/auth/signup", { body: { email: `  ${email}  `, password: PASSWORD, accept_terms: true } })
    expect(signup.status, signup.text).toBe(201)
    expect(Object.keys(signup.json).sort()).toEqual(["account", "csrf_token", "user"])
    expect(signup.json.user).toEqual({ email, verified: false, email_verified_at: null })
    expect(signup.json.account).toMatchObject({ name: "", status: "active" })
    expect(signup.json.account.id).toMatch(/^acct_[a-z2-7]{20,}$/)
    expect(typeof signup.json.csrf_token).toBe("string")

    // the session cookie and its flags (decisions.md: Secure, HttpOnly, SameSite=Lax, Path=/)
    const cookie = signup.setCookies.find((c) => c.name === SESSION)!
    expect(cookie).toBeDefined()
    expect(cookie.value).toMatch(/^[a-z2-7]{52}$/)
    expect(cookie.attributes.has("secure")).toBe(true)
    expect(cookie.attributes.has("httponly")).toBe(true)
    expect(cookie.attributes.get("samesite")?.toLowerCase()).toBe("lax")
    expect(cookie.attributes.get("path")).toBe("/")
    expect(cookie.attributes.has("domain")).toBe(false) // a __Host- cookie has none
    // it lives as long as the session's absolute limit (30 days), never longer
    expect(Number(cookie.attributes.get("max-age"))).toBeGreaterThan(30 * 24 * 3600 - 10)
    expect(Number(cookie.attributes.get("max-age"))).toBeLessThanOrEqual(30 * 24 * 3600)

    const session = await browser.request("GET", "/v1/auth/session")
    expect(session.status).toBe(200)
    expect(session.json).toEqual({ user: { email, verified: false, email_verified_at: null }, account: { id: signup.json.account.id, name: "", status: "active" } })

    // the mail: plain text with the link; the outbox as `admin mail list` reads it
    const [mail, ...others] = await mailTo(server, email.toUpperCase())
    expect(others).toEqual([])
    expect(Object.keys(mail!).sort()).toEqual(["id", "links", "sent_at", "subject", "text", "to"])
    expect(mail!.to).toBe(email)
    expect(mail!.subject).toMatch(/verify/i)
    expect(mail!.links).toHaveLength(1)
    expect(mail!.links[0]).toMatch(new RegExp(`^${server.baseUrl}/verify-email\\?token=[a-z2-7]{52}$`))
    expect(mail!.text).toContain(mail!.links[0])
    expectIso(mail!.sent_at)

    // test keys right away, live keys only once verified
    const test = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test", name: "sandbox" } })
    expect(test.status, test.text).toBe(201)
    const refused = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live" } })
    const problem = await expectProblem(server, refused, 403, "forbidden")
    expect(problem.detail).toContain("verify")

    const token = tokenIn(mail!, server, "verify-email")
    const verified = await browser.request("POST", "/v1/auth/email/verify", { body: { token } })
    expect(verified.status, verified.text).toBe(200)
    expect(verified.json).toEqual({ verified: true })
    // single use: used again by its own user, signed in and verified, it says so kindly (decisions.md, OAuth
    // identities); without that session, or with another user's, it stays 422
    const again = await browser.request("POST", "/v1/auth/email/verify", { body: { token } })
    expect(again.status, again.text).toBe(200)
    expect(again.json).toEqual({ verified: true })
    await expectProblem(server, await new Browser(server).request("POST", "/v1/auth/email/verify", { body: { token } }), 422, "invalid_request")
    const stranger = await signUp(server)
    await expectProblem(server, await stranger.browser.request("POST", "/v1/auth/email/verify", { body: { token } }), 422, "invalid_request")
    const after = await browser.request("GET", "/v1/auth/session")
    expect(after.json.user.verified).toBe(true)
    expectIso(after.json.user.email_verified_at)

    const live = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live", name: "production" } })
    expect(live.status, live.text).toBe(201)
    expect(live.json.secret).toMatch(/^hush_live_[a-z2-7]{52}$/)
    expect(live.json.already_displayed).toBe(false)
    expect(live.json.key).toMatchObject({ name: "production", mode: "live", revoked_at: null, last_used_at: null })
    expect(live.json.key.prefix_display).toBe(live.json.secret.slice(0, "hush_live_".length + 4))
    expect(live.json.key.last_four).toBe(live.json.secret.slice(-4))
    expect(live.json.key.scopes).toEqual(["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"])

    const me = await call(server, "GET", "/v1/me", { key: live.json.secret })
    expect(me.status, me.text).toBe(200)
    expect(me.json).toMatchObject({ account_id: signup.json.account.id, key_id: live.json.key.id, mode: "live" })
  })

  it("signup refuses accept_terms false, a taken address (any case) and a short password, with 422", async () => {
    const email = uniqueEmail()
    const browser = new Browser(server)
    const noTerms = await browser.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, accept_terms: false } })
    expect((await expectProblem(server, noTerms, 422, "invalid_request")).field).toBe("accept_terms")
    expect(await mailTo(server, email)).toEqual([])
    await signUp(server, email)
    const taken = await browser.request("POST", "/v1/auth/signup", { body: { email: email.toUpperCase(), password: PASSWORD, accept_terms: true } })
    const problem = await expectProblem(server, taken, 422, "invalid_request")
    expect(problem.detail).toBe("an account with this e-mail address already exists")
    const short = await browser.request("POST", "/v1/auth/signup", { body: { email: uniqueEmail(), password: "1234567", accept_terms: true } })
    expect((await expectProblem(server, short, 422, "invalid_request")).field).toBe("password")
    const notAnAddress = await browser.request("POST", "/v1/auth/signup", { body: { email: "nobody", password: PASSWORD, accept_terms: true } })
    await expectProblem(server, notAnAddress, 422, "invalid_request")
  })

  it("resend sends a new link (the old one still works once); a verified user cannot resend", async () => {
    const { browser, email, verifyToken } = await signUp(server)
    const resent = await browser.request("POST", "/v1/auth/email/resend")
    expect(resent.status, resent.text).toBe(202)
    expect(resent.json).toEqual({ status: "sent" })
    const mails = await mailTo(server, email)
    expect(mails).toHaveLength(2)
    const newest = tokenIn(mails[0]!, server, "verify-email")
    expect(newest).not.toBe(verifyToken)
    expect((await browser.request("POST", "/v1/auth/email/verify", { body: { token: newest } })).status).toBe(200)
    // verifying used every link of the address: the older one is spent for anyone without the user's session
    await expectProblem(server, await new Browser(server).request("POST", "/v1/auth/email/verify", { body: { token: verifyToken } }), 422, "invalid_request")
    expect((await browser.request("POST", "/v1/auth/email/verify", { body: { token: verifyToken } })).json).toEqual({ verified: true })
    await expectProblem(server, await browser.request("POST", "/v1/auth/email/resend"), 422, "invalid_request")
  })

  it("resend is limited to 5 verification mails an hour (signup's counts)", async () => {
    const { browser } = await signUp(server)
    for (let i = 0; i < 4; i++) expect((await browser.request("POST", "/v1/auth/email/resend")).status).toBe(202)
    const limited = await browser.request("POST", "/v1/auth/email/resend")
    const problem = await expectProblem(server, limited, 429, "rate_limited")
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(3000)
    expect(problem.retry_after).toBe(Number(limited.headers.get("retry-after")))
  })

  it("an unknown, malformed or forged verification token is 422", async () => {
    const browser = new Browser(server)
    for (const token of ["a".repeat(52), "not a token", "x"]) {
      await expectProblem(server, await browser.request("POST", "/v1/auth/email/verify", { body: { token } }), 422, "invalid_request")
    }
    await expectProblem(server, await browser.request("POST", "/v1/auth/email/verify", { body: { token: "a".repeat(201) } }), 422, "invalid_request")
  })
})

describe("login, logout and sessions", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ accountSettings: { signupsPerHourPerIp: 1_000 } })
  })
  afterAll(async () => {
    await server.close()
  })

  it("a wrong password and an unknown address get identical answers", async () => {
    const { email } = await signUp(server)
    const wrongPassword = await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: "not the password" } })
    const unknownAddress = await new Browser(server).request("POST", "/v1/auth/login", { body: { email: uniqueEmail("nobody"), password: PASSWORD } })
    const a = await expectProblem(server, wrongPassword, 401, "unauthorized")
    const b = await expectProblem(server, unknownAddress, 401, "unauthorized")
    const { request_id: _a, ...restA } = a
    const { request_id: _b, ...restB } = b
    expect(restA).toEqual(restB)
    expect(wrongPassword.setCookies).toEqual([])
    expect(unknownAddress.setCookies).toEqual([])
  })

  it("login is case-insensitive on the address, returns the session and rotates the id (fixation)", async () => {
    const { email, browser: first } = await signUp(server)
    const before = first.session!
    // a fresh id on login, even when the browser presents a valid session of its own
    const login = await first.request("POST", "/v1/auth/login", { body: { email: ` ${email.toUpperCase()} `, password: PASSWORD } })
    expect(login.status, login.text).toBe(200)
    expect(login.json.user.email).toBe(email)
    expect(first.session).toBeDefined()
    expect(first.session).not.toBe(before)
    expect(login.json.csrf_token).not.toBe((await new Browser(server).request("GET", "/v1/auth/csrf")).json.csrf_token)
    // the presented session was ended: an attacker who planted it holds nothing
    const planted = new Browser(server)
    planted.cookies.set(SESSION, before)
    await expectProblem(server, await planted.request("GET", "/v1/auth/session"), 401, "unauthorized")
    expect((await first.request("GET", "/v1/auth/session")).status).toBe(200)

    // a planted id that the server never issued is never adopted
    const victim = new Browser(server)
    victim.cookies.set(SESSION, "a".repeat(52))
    const victimLogin = await victim.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })
    expect(victimLogin.status).toBe(200)
    expect(victim.session).not.toBe("a".repeat(52))
    const attacker = new Browser(server)
    attacker.cookies.set(SESSION, "a".repeat(52))
    expect((await attacker.request("GET", "/v1/auth/session")).status).toBe(401)
  })

  it("logout ends the session on the server and clears the cookie", async () => {
    const { browser } = await signUp(server)
    const copied = browser.session!
    const logout = await browser.request("POST", "/v1/auth/logout")
    expect(logout.status, logout.text).toBe(204)
    const cleared = logout.setCookies.find((c) => c.name === SESSION)!
    expect(cleared.value).toBe("")
    expect(cleared.attributes.get("max-age")).toBe("0")
    // the same cookie value, replayed, no longer works
    const replay = new Browser(server)
    replay.cookies.set(SESSION, copied)
    await expectProblem(server, await replay.request("GET", "/v1/auth/session"), 401, "unauthorized")
    await expectProblem(server, await replay.request("GET", "/v1/dashboard/account"), 401, "unauthorized")
  })

  it("without a session, /v1/auth/session, the dashboard and the session's own actions are 401", async () => {
    const anonymous = new Browser(server)
    for (const [method, path] of [
      ["GET", "/v1/auth/session"], ["POST", "/v1/auth/logout"], ["POST", "/v1/auth/email/resend"], ["GET", "/v1/dashboard/account"],
      ["GET", "/v1/dashboard/keys"], ["GET", "/v1/dashboard/credits"], ["GET", "/v1/dashboard/ledger"], ["GET", "/v1/dashboard/usage"],
      ["GET", "/v1/dashboard/jobs"], ["GET", "/v1/dashboard/jobs/job_x"], ["GET", "/v1/dashboard/jobs/job_x/output"], ["POST", "/v1/dashboard/keys/key_x/revoke"]
    ] as const) {
      await expectProblem(server, await anonymous.request(method, path), 401, "unauthorized")
    }
    // an API key is no dashboard session
    const { liveKey } = await server.createAccount()
    await expectProblem(server, await call(server, "GET", "/v1/dashboard/account", { key: liveKey }), 401, "unauthorized")
  })

  it("unsafe requests need the session's X-CSRF-Token (missing or wrong → 403) and a same-origin browser", async () => {
    const { browser } = await verifiedUser(server)
    const body = { mode: "test", name: "csrf" }
    const missing = await browser.request("POST", "/v1/dashboard/keys", { body, csrf: false })
    expect((await expectProblem(server, missing, 403, "forbidden")).detail).toContain("X-CSRF-Token")
    const wrong = await browser.request("POST", "/v1/dashboard/keys", { body, csrf: false, headers: { "x-csrf-token": "wrong" } })
    await expectProblem(server, wrong, 403, "forbidden")
    // another session's token is no good here
    const other = await signUp(server)
    const borrowed = await browser.request("POST", "/v1/dashboard/keys", { body, csrf: false, headers: { "x-csrf-token": other.browser.csrf! } })
    await expectProblem(server, borrowed, 403, "forbidden")
    await expectProblem(server, await browser.request("PATCH", "/v1/dashboard/account", { body: { name: "x" }, csrf: false }), 403, "forbidden")
    await expectProblem(server, await browser.request("POST", "/v1/auth/logout", { csrf: false }), 403, "forbidden")
    expect((await browser.request("GET", "/v1/dashboard/keys")).json.data).toEqual([])

    // a browser that says the request came from elsewhere is refused even with the token
    const crossOrigin = await browser.request("POST", "/v1/dashboard/keys", { body, headers: { origin: "https://evil.example" } })
    expect((await expectProblem(server, crossOrigin, 403, "forbidden")).detail).toContain("origin")
    const crossSite = await browser.request("POST", "/v1/dashboard/keys", { body, headers: { "sec-fetch-site": "cross-site" } })
    await expectProblem(server, crossSite, 403, "forbidden")
    const loginElsewhere = await new Browser(server).request("POST", "/v1/auth/login", {
      body: { email: "a@example.com", password: PASSWORD }, headers: { origin: "https://evil.example" }
    })
    await expectProblem(server, loginElsewhere, 403, "forbidden")
    // the page's own origin passes
    const sameOrigin = await browser.request("POST", "/v1/dashboard/keys", { body, headers: { origin: server.baseUrl, "sec-fetch-site": "same-origin" } })
    expect(sameOrigin.status, sameOrigin.text).toBe(201)
    // GET needs no token, and GET /v1/auth/csrf returns the session's
    const csrf = await browser.request("GET", "/v1/auth/csrf")
    expect(csrf.json).toEqual({ csrf_token: browser.csrf })
  })

  it("an idle session ends after 7 days, any session after 30, each on the server", async () => {
    const clock = makeAdjustableClock()
    const timed = await startTestServer({ clock })
    clock.freeze()
    try {
      const { browser, email } = await signUp(timed)
      clock.advance(7 * DAY - 60_000)
      expect((await browser.request("GET", "/v1/auth/session")).status).toBe(200) // used: idle time starts again
      clock.advance(7 * DAY - 1)
      expect((await browser.request("GET", "/v1/auth/session")).status).toBe(200)
      clock.advance(7 * DAY)
      await expectProblem(timed, await browser.request("GET", "/v1/auth/session"), 401, "unauthorized")

      const login = new Browser(timed)
      expect((await login.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })).status).toBe(200)
      for (const day of [6, 12, 18, 24, 29]) {
        clock.advance(day === 29 ? 5 * DAY : 6 * DAY)
        expect((await login.request("GET", "/v1/auth/session")).status, `day ${day}`).toBe(200)
      }
      clock.advance(1 * DAY) // day 30: past the absolute limit however recently used
      await expectProblem(timed, await login.request("GET", "/v1/auth/session"), 401, "unauthorized")
    } finally {
      await timed.close()
    }
  })
})

describe("password reset and change", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ accountSettings: { signupsPerHourPerIp: 1_000 } })
  })
  afterAll(async () => {
    await server.close()
  })

  it("forgot → link → reset ends every session; the token works once; the old password no longer does", async () => {
    const { browser, email } = await signUp(server)
    const second = new Browser(server)
    expect((await second.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })).status).toBe(200)

    const forgot = await new Browser(server).request("POST", "/v1/auth/password/forgot", { body: { email: email.toUpperCase() } })
    expect(forgot.status, forgot.text).toBe(202)
    expect(forgot.json).toEqual({ status: "sent" })
    const mail = await waitForMail(server, email, /reset/i)
    const token = tokenIn(mail, server, "reset-password")

    const anonymous = new Browser(server)
    const reset = await anonymous.request("POST", "/v1/auth/password/reset", { body: { token, password: "a brand new password" } })
    expect(reset.status, reset.text).toBe(200)
    expect(reset.json).toEqual({ status: "ok" })
    expect(reset.setCookies).toEqual([])
    for (const b of [browser, second]) await expectProblem(server, await b.request("GET", "/v1/auth/session"), 401, "unauthorized")

    const again = await anonymous.request("POST", "/v1/auth/password/reset", { body: { token, password: "yet another password" } })
    expect((await expectProblem(server, again, 422, "invalid_request")).field).toBe("token")

    await expectProblem(server, await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } }), 401, "unauthorized")
    expect((await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: "a brand new password" } })).status).toBe(200)
    const notice = await waitForMail(server, email, /password was changed/i)
    expect(notice.links).toEqual([])
  })

  it("forgot answers the same for an unknown address and sends nothing", async () => {
    const email = uniqueEmail("ghost")
    const reply = await new Browser(server).request("POST", "/v1/auth/password/forgot", { body: { email } })
    expect(reply.status).toBe(202)
    expect(reply.json).toEqual({ status: "sent" })
    expect(await mailTo(server, email)).toEqual([])
  })

  it("a reset link sets a first password for an operator-made account and verifies nothing else", async () => {
    const email = uniqueEmail("operator")
    const { run } = server
    const { createAccountWithKeys } = await import("../../core/services/accounts.js")
    await run(createAccountWithKeys({ email }))
    // no password yet: login fails like any wrong password
    await expectProblem(server, await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } }), 401, "unauthorized")
    expect((await new Browser(server).request("POST", "/v1/auth/password/forgot", { body: { email } })).status).toBe(202)
    const token = tokenIn(await waitForMail(server, email, /reset/i), server, "reset-password")
    expect((await new Browser(server).request("POST", "/v1/auth/password/reset", { body: { token, password: PASSWORD } })).status).toBe(200)
    const login = await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })
    expect(login.status).toBe(200)
    expect(login.json.user.verified).toBe(true)
  })

  it("change password needs the current one, ends every other session and rotates this one", async () => {
    const { browser, email } = await signUp(server)
    const other = new Browser(server)
    expect((await other.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })).status).toBe(200)
    const wrong = await browser.request("POST", "/v1/auth/password/change", { body: { password: "not it", new_password: "another password" } })
    expect((await expectProblem(server, wrong, 422, "invalid_request")).field).toBe("password")
    const before = browser.session
    const oldCsrf = browser.csrf
    const changed = await browser.request("POST", "/v1/auth/password/change", { body: { password: PASSWORD, new_password: "another password" } })
    expect(changed.status, changed.text).toBe(200)
    expect(browser.session).not.toBe(before)
    expect(browser.csrf).not.toBe(oldCsrf)
    expect((await browser.request("GET", "/v1/auth/session")).status).toBe(200)
    await expectProblem(server, await other.request("GET", "/v1/auth/session"), 401, "unauthorized")
    const stale = new Browser(server)
    stale.cookies.set(SESSION, before!)
    await expectProblem(server, await stale.request("GET", "/v1/auth/session"), 401, "unauthorized")
    await waitForMail(server, email, /password was changed/i)
  })
})

describe("limits on signups and failed logins", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("the 11th failed login of an address is 429 with Retry-After, and so is the right password then", async () => {
    const { email } = await signUp(server)
    for (let i = 1; i <= 10; i++) {
      const reply = await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: `wrong ${i}` } })
      expect(reply.status, `attempt ${i}`).toBe(401)
    }
    const eleventh = await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: "wrong 11" } })
    const problem = await expectProblem(server, eleventh, 429, "rate_limited")
    expect(Number(eleventh.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(problem.retry_after).toBe(Number(eleventh.headers.get("retry-after")))
    const right = await new Browser(server).request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })
    await expectProblem(server, right, 429, "rate_limited")
    expect(right.setCookies).toEqual([])
  })

  it("the 11th signup from one address in an hour is 429", async () => {
    // the failed-login test above signed up once from this address
    for (let i = 2; i <= 10; i++) {
      const reply = await new Browser(server).request("POST", "/v1/auth/signup", { body: { email: uniqueEmail(), password: PASSWORD, accept_terms: true } })
      expect(reply.status, `signup ${i}`).toBe(201)
    }
    const eleventh = await new Browser(server).request("POST", "/v1/auth/signup", { body: { email: uniqueEmail(), password: PASSWORD, accept_terms: true } })
    await expectProblem(server, eleventh, 429, "rate_limited")
    expect(Number(eleventh.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})
