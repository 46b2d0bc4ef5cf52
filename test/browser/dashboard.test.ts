/**
 * The web dashboard in a real Chromium (playwright-core on the system's chromium), against a
 * real Hush server with its built-in worker. One long journey through every page, then the
 * small checks: a wrong password, a stale CSRF token, and the 375 px screen. Every page passes
 * axe-core (no serious or critical violation) and fits its window.
 */
import { Redacted } from "effect"
import { OAuth2Server } from "oauth2-mock-server"
import type { Browser, Page, Response } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PASSWORD, tokenIn, uniqueEmail, waitForMail } from "../e2e/browser.js"
import { call, denoise, readyFile, waitForJob } from "../e2e/helpers.js"
import { freePort, startTestServer, type TestServer } from "../support/server.js"
import { checkPage, launchChromium } from "./chromium.js"
import { open, signUpInBrowser } from "./session.js"

const FIRST_LOAD_BUDGET_BYTES = 150 * 1024

let server: TestServer
let chromium: Browser

beforeAll(async () => {
  ;[server, chromium] = await Promise.all([
    startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" }, accountSettings: { signupsPerHourPerIp: 1_000 } }),
    launchChromium()
  ])
}, 60_000)

afterAll(async () => {
  await chromium?.close()
  await server?.close()
})

const newContext = (width = 1280) =>
  chromium.newContext({ viewport: { width, height: 900 }, baseURL: server.baseUrl, reducedMotion: "reduce" })

/** Goes through the dashboard's navigation, as a person would. */
const navTo = async (page: Page, link: string, heading: string | RegExp = link) => {
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: link, exact: true }).click()
  await page.getByRole("heading", { level: 1, name: heading }).waitFor()
  await page.getByText(/^Loading /).first().waitFor({ state: "detached" })
}

/** Creates a key on the keys page; returns the secret shown once. */
const createKey = async (page: Page, mode: "test" | "live", name: string) => {
  await page.getByRole("radio", { name: new RegExp(`^${mode === "test" ? "Test" : "Live"}:`) }).check()
  await page.getByLabel("Name (optional)").fill(name)
  await page.getByRole("button", { name: `Create ${mode} key` }).click()
  const secret = page.getByTestId("new-secret")
  await secret.waitFor()
  return (await secret.textContent())!
}

describe("web dashboard in Chromium", () => {
  it("the journey: signup, verify, a test key, buy $20, a live key, live jobs, usage, jobs, ledger, account, revoke, log out", async () => {
    const context = await newContext()
    await context.grantPermissions(["clipboard-read", "clipboard-write"])
    const page = await context.newPage()
    const email = uniqueEmail("web")

    // first load of /dashboard: what script and style cross the wire, compressed, and how they are cached
    const scripts: Array<Response> = []
    page.on("response", (response) => {
      if (["script", "stylesheet"].includes(response.request().resourceType())) scripts.push(response)
    })
    const shell = await page.goto("/dashboard")
    expect(shell!.headers()["cache-control"]).toBe("no-cache")
    expect(shell!.headers()["content-security-policy"]).toContain("script-src 'self'")
    await page.getByRole("heading", { level: 1, name: "Log in to Hush" }).waitFor()
    expect(page.url()).toBe(`${server.baseUrl}/login?next=%2Fdashboard`)
    expect(scripts.length).toBeGreaterThan(0)
    let transferred = 0
    for (const script of scripts) {
      expect(script.url()).toMatch(/\/assets\/[\w-]+\.(js|css)$/)
      expect(script.headers()["cache-control"]).toBe("public, max-age=31536000, immutable")
      expect(["br", "gzip"]).toContain(script.headers()["content-encoding"])
      transferred += (await script.request().sizes()).responseBodySize
    }
    console.log(`first load of /dashboard: ${scripts.map((s) => s.url().split("/").pop()).join(", ")}: ${(transferred / 1024).toFixed(1)} KiB transferred (${scripts[0]!.headers()["content-encoding"]})`)
    expect(transferred).toBeLessThan(FIRST_LOAD_BUDGET_BYTES)
    await checkPage(page, "login", { screenshot: false })
    await open(page, "/forgot-password", "Reset your password")
    await checkPage(page, "forgot-password", { screenshot: false })

    // signup (the terms checkbox is required), then the overview in its empty state
    await open(page, "/signup", "Create your Hush account")
    await page.getByLabel("E-mail address").fill(email)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Create account" }).click()
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/accept the terms/)
    await checkPage(page, "signup", { screenshot: false })
    await page.getByLabel("I accept the Hush terms of service.").check()
    await page.getByRole("button", { name: "Create account" }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await page.getByText("No live jobs yet.").waitFor()
    await expect(page.getByTestId("available").textContent()).resolves.toBe("$0.00")

    // before the address is confirmed a live key is refused, and the 403 is said in words
    await navTo(page, "API keys")
    await page.getByText("No keys yet.").waitFor()
    await page.getByRole("radio", { name: /^Live:/ }).check()
    await page.getByRole("button", { name: "Create live key" }).click()
    await expect(page.getByRole("alert").first().textContent()).resolves.toMatch(/^Not allowed: .*verif/i)

    // the verification link from the outbox
    const verifyLink = `${server.baseUrl}/verify-email?token=${tokenIn(await waitForMail(server, email, /verify/i), server, "verify-email")}`
    await page.goto(verifyLink)
    await page.getByText("Your e-mail address is confirmed.").waitFor()
    await checkPage(page, "verify-email", { screenshot: false })

    // a test key, read once: the secret is shown, copied, and gone after
    await open(page, "/dashboard/keys", "API keys")
    const testSecret = await createKey(page, "test", "playground")
    expect(testSecret).toMatch(/^hush_test_[a-z2-7]{52}$/)
    await page.getByRole("button", { name: "Copy key" }).click()
    await page.getByText("Copied.").waitFor()
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(testSecret)
    await checkPage(page, "keys-secret-once")
    await page.getByRole("button", { name: "I have stored it" }).click()
    await page.reload()
    await page.getByRole("rowheader", { name: "playground", exact: true }).waitFor()
    expect(await page.content()).not.toContain(testSecret)
    expect((await call(server, "GET", "/v1/me", { key: testSecret })).json.mode).toBe("test")

    // buy $20 with the fake provider: the credits page → its payment page → back with the result
    await navTo(page, "Credits")
    await page.getByText("No credit yet.").waitFor()
    await page.getByRole("radio", { name: "$20", exact: true }).check()
    await page.getByRole("button", { name: "Continue to payment" }).click()
    await page.waitForURL(/\/fake-checkout\/chk_[a-z2-7]+$/)
    await page.getByRole("button", { name: "Pay $20.00" }).click()
    await page.waitForURL(`${server.baseUrl}/dashboard/credits?checkout=paid`)
    await page.getByText("Payment received: $20.00 added to your credit.").waitFor()
    await expect(page.getByTestId("available").textContent()).resolves.toBe("$20.00")
    await page.getByRole("rowheader", { name: "purchase", exact: true }).waitFor()
    await page.getByRole("cell", { name: "$20.00", exact: true }).first().waitFor()
    await checkPage(page, "credits", { screenshot: false })
    // a canceled checkout comes back saying so, and adds nothing
    await page.getByRole("radio", { name: "$10", exact: true }).check()
    await page.getByRole("button", { name: "Continue to payment" }).click()
    await page.getByRole("button", { name: "Cancel" }).click()
    await page.getByText("The checkout was canceled; nothing was charged.").waitFor()
    await expect(page.getByTestId("available").textContent()).resolves.toBe("$20.00")

    // a live key, and two live jobs through the API with it
    await navTo(page, "API keys")
    const liveSecret = await createKey(page, "live", "production")
    expect(liveSecret).toMatch(/^hush_live_[a-z2-7]{52}$/)
    await page.getByRole("button", { name: "I have stored it" }).click()
    const jobIds: Array<string> = []
    for (const name of ["interview.wav", "podcast.wav"]) {
      const file = await readyFile(server, liveSecret, undefined, { filename: name })
      const started = await denoise(server, liveSecret, { file })
      expect(started.status, started.text).toBe(202)
      jobIds.push(started.json.id)
    }
    for (const id of jobIds) expect((await waitForJob(server, liveSecret, id)).json.status).toBe("succeeded")

    // the overview's chart and recent jobs show them
    await navTo(page, "Overview")
    await expect(page.getByRole("group", { name: /^Jobs per day/ }).getAttribute("aria-label")).resolves.toMatch(/: 2 in total over 30 days\./)
    for (const name of ["interview.wav", "podcast.wav"]) await page.getByRole("link", { name, exact: true }).waitFor()
    await checkPage(page, "overview", { screenshot: false })

    // the jobs page, and one job with its ledger entries and its download
    await navTo(page, "Jobs")
    for (const name of ["interview.wav", "podcast.wav"]) await page.getByRole("link", { name, exact: true }).waitFor()
    await checkPage(page, "jobs", { screenshot: false })
    await page.getByLabel("Status").selectOption("failed")
    await page.getByRole("button", { name: "Filter" }).click()
    await page.getByText("No live jobs match.").waitFor()
    await page.getByLabel("Status").selectOption("succeeded")
    await page.getByRole("button", { name: "Filter" }).click()
    for (const name of ["interview.wav", "podcast.wav"]) await page.getByRole("link", { name, exact: true }).waitFor()
    await page.getByRole("link", { name: "interview.wav", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "interview.wav" }).waitFor()
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/jobs/${jobIds[0]}`)
    const ledger = page.getByRole("table", { name: "The job's ledger entries, oldest first" })
    await ledger.getByRole("cell", { name: "hold", exact: true }).waitFor()
    await ledger.getByRole("cell", { name: "capture", exact: true }).waitFor()
    await checkPage(page, "job", { screenshot: false })
    const download = page.waitForEvent("download")
    await page.getByRole("button", { name: "Download output" }).click()
    expect((await download).suggestedFilename()).toBe("interview.denoised.mp3")

    // ledger, usage (and its CSV), account, webhooks
    await navTo(page, "Ledger")
    await page.getByRole("cell", { name: "purchase", exact: true }).waitFor()
    expect(await page.getByRole("cell", { name: "capture", exact: true }).count()).toBe(2)
    await checkPage(page, "ledger", { screenshot: false })
    await navTo(page, "Usage")
    await page.getByRole("rowheader", { name: "Total" }).waitFor()
    const csvHref = await page.getByRole("link", { name: "Download CSV" }).getAttribute("href")
    const csv = decodeURIComponent(csvHref!.slice(csvHref!.indexOf(",") + 1)).trim().split("\r\n")
    expect(csv[0]).toBe("day,name,jobs,succeeded,failed,billable_seconds,charged_micros,charged")
    expect(csv.length).toBe(31)
    expect(csv.filter((line) => line.includes(",2,2,0,")).length).toBe(1)
    await page.getByLabel("Group by").selectOption("model")
    await page.getByRole("button", { name: "Show" }).click()
    await page.getByRole("rowheader", { name: "xiph/rnnoise", exact: true }).waitFor()
    await checkPage(page, "usage", { screenshot: false })
    await navTo(page, "Account")
    await page.getByLabel("Name", { exact: true }).fill("Acme Audio")
    await page.getByRole("button", { name: "Save name" }).click()
    await page.getByText("Saved.").waitFor()
    await checkPage(page, "account", { screenshot: false })
    await navTo(page, "Webhooks")
    await checkPage(page, "webhooks", { screenshot: false })

    // revoke the live key, after confirming
    await navTo(page, "API keys")
    await page.getByRole("button", { name: "Revoke production" }).click()
    await page.getByRole("group", { name: "Confirm: Revoke production" }).waitFor()
    await page.getByRole("button", { name: "Yes, revoke" }).click()
    await page.getByText(/^Revoked /).waitFor()
    expect((await call(server, "GET", "/v1/me", { key: liveSecret })).status).toBe(401)

    // log out: the session is gone, and the dashboard sends to the login page
    await page.getByRole("button", { name: "Log out" }).click()
    await page.getByText("You are logged out.").waitFor()
    await page.goto("/dashboard/keys")
    await page.getByRole("heading", { level: 1, name: "Log in to Hush" }).waitFor()
    await context.close()
  }, 240_000)

  it("a wrong password is said on the login page, the right one then signs in; a 429 is said with its wait", async () => {
    const context = await newContext()
    const page = await context.newPage()
    const email = uniqueEmail("web-login")
    await signUpInBrowser(page, email)
    await context.clearCookies()
    await open(page, "/login", "Log in to Hush")
    await page.getByLabel("E-mail address").fill(email)
    await page.getByLabel("Password").fill("not the password")
    await page.getByRole("button", { name: "Log in" }).click()
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/password/i)
    expect(page.url()).toBe(`${server.baseUrl}/login`)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Log in" }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()

    // a 429 is said in words too, with the wait: the 11th failure for one address
    await context.clearCookies()
    await open(page, "/login", "Log in to Hush")
    await page.getByLabel("E-mail address").fill(uniqueEmail("web-guess"))
    await page.getByLabel("Password").fill("guess")
    const login = page.getByRole("button", { name: "Log in" })
    for (let attempt = 1; attempt <= 11; attempt++) {
      const answered = page.waitForResponse((r) => r.url().endsWith("/v1/auth/login"))
      await login.click()
      expect((await answered).status()).toBe(attempt <= 10 ? 401 : 429)
    }
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/^Too many requests: .*Try again in \d+ seconds?\.$/)
    await context.close()
  }, 60_000)

  it("a stale CSRF token (a new session from another tab) is refused by the server and the page recovers; an ended session goes to login and back", async () => {
    const context = await newContext()
    const first = await context.newPage()
    const email = uniqueEmail("web-csrf")
    await signUpInBrowser(first, email)
    await open(first, "/dashboard/account", "Account")
    // another tab logs in: a new session id and token; the first tab still holds the old token
    const second = await context.newPage()
    await open(second, "/login", "Log in to Hush")
    await second.getByLabel("E-mail address").fill(email)
    await second.getByLabel("Password").fill(PASSWORD)
    await second.getByRole("button", { name: "Log in" }).click()
    await second.getByRole("heading", { level: 1, name: "Overview" }).waitFor()

    const statuses: Array<number> = []
    first.on("response", (r) => {
      if (r.url().endsWith("/v1/dashboard/account") && r.request().method() === "PATCH") statuses.push(r.status())
    })
    await first.getByLabel("Name", { exact: true }).fill("Tab one")
    await first.getByRole("button", { name: "Save name" }).click()
    await first.getByText("Saved.").waitFor()
    expect(statuses).toEqual([403, 200])

    // the second tab logs out: the first tab's next page load says so and comes back after login
    await second.getByRole("button", { name: "Log out" }).click()
    await second.getByText("You are logged out.").waitFor()
    await first.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "API keys" }).click()
    await first.getByText("Your session ended. Log in again to continue.").waitFor()
    await first.getByLabel("E-mail address").fill(email)
    await first.getByLabel("Password").fill(PASSWORD)
    await first.getByRole("button", { name: "Log in" }).click()
    await first.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
    await context.close()
  }, 60_000)

  it("at 375 px every page fits the screen and the navigation works by keyboard", async () => {
    const context = await newContext(375)
    const page = await context.newPage()
    await signUpInBrowser(page, uniqueEmail("web-narrow"))
    await checkPage(page, "overview-375", { screenshot: false })
    // keyboard only, on a fresh load: the skip link first, then the navigation
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await page.keyboard.press("Tab")
    await expect(page.evaluate<string>("document.activeElement.textContent")).resolves.toBe("Skip to content")
    await page.getByRole("link", { name: "Usage", exact: true }).focus()
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Usage" }).waitFor()
    for (const [link, heading] of [["API keys", "API keys"], ["Credits", "Credits"], ["Ledger", "Ledger"], ["Usage", "Usage"], ["Jobs", "Jobs"], ["Account", "Account"]] as const) {
      await navTo(page, link, heading)
      await checkPage(page, `${heading.toLowerCase().replace(/ /g, "-")}-375`, { screenshot: false })
    }
    await context.close()
  }, 90_000)

  it("sign-in with OpenID Connect: the button shows when configured; a first sign-in needs the terms (said in words), then works from signup", async () => {
    const provider = new OAuth2Server()
    await provider.issuer.keys.generate("RS256")
    await provider.start(await freePort(), "127.0.0.1")
    const email = uniqueEmail("web-oidc")
    provider.service.on("beforeUserinfo", (response: { body: unknown }) => {
      response.body = { sub: `web-${email}`, email, email_verified: true }
    })
    const oidc = await startTestServer({
      accounts: { oidc: { issuer: provider.issuer.url!, clientId: "hush-web-client", clientSecret: Redacted.make("hush-web-secret") } }
    })
    try {
      const context = await chromium.newContext({ viewport: { width: 1280, height: 900 }, baseURL: oidc.baseUrl })
      const page = await context.newPage()
      await open(page, "/login", "Log in to Hush")
      await page.getByRole("button", { name: "Continue with single sign-on" }).click()
      await page.waitForURL(`${oidc.baseUrl}/login?error=terms_required`)
      await page.getByText("A first sign-in needs the terms accepted: use the sign-up page.").waitFor()
      await open(page, "/signup", "Create your Hush account")
      expect(await page.getByRole("button", { name: "Continue with single sign-on" }).count()).toBe(0)
      await page.getByLabel("I accept the Hush terms of service.").check()
      await page.getByRole("button", { name: "Continue with single sign-on" }).click()
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
      expect(page.url()).toBe(`${oidc.baseUrl}/dashboard`)
      await page.getByText(email).waitFor()
      // the provider vouched for the address: no "confirm your address" notice
      expect(await page.getByText("Confirm your e-mail address").count()).toBe(0)
      await context.close()
    } finally {
      await oidc.close()
      await provider.stop()
    }
  }, 60_000)
})
