/**
 * The API reference at /docs (issues 13 and 31): it renders the operations with no request leaving
 * the server's origin (no fonts, telemetry, registry or proxy), so it also works offline, with the
 * bearer scheme selected; the dashboard's endpoints have their own page, /docs/dashboard.
 */
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { launchChromium } from "./chromium.js"

let browser: Browser
let server: TestServer

beforeAll(async () => {
  ;[browser, server] = await Promise.all([launchChromium(), startTestServer()])
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe("/docs", { timeout: 60_000 }, () => {
  it("renders the operations and every group and asks nothing of another origin, even offline", async () => {
    const context = await browser.newContext({ offline: false })
    const page = await context.newPage()
    const elsewhere: Array<string> = []
    // every request is seen; one for another origin is recorded and refused (as offline would)
    await page.route("**/*", (route) => {
      const url = route.request().url()
      if (new URL(url).origin === server.baseUrl || url.startsWith("data:") || url.startsWith("blob:")) return route.continue()
      elsewhere.push(url)
      return route.abort("internetdisconnected")
    })
    await page.goto(`${server.baseUrl}/docs`)
    // the first group open, every other listed (collapsed) in the sidebar
    await expect.poll(() => page.getByText("Check the service is up").count(), { timeout: 30_000 }).toBeGreaterThan(0)
    // the authentication panel renders after the operations (later still on a loaded machine)
    await expect.poll(async () => (await page.locator("body").innerText()).includes("Bearer"), { timeout: 30_000 }).toBe(true)
    const text = await page.locator("body").innerText()
    for (const group of ["files", "jobs", "account", "webhooks"]) expect(text.split("\n")).toContain(group)
    // the toolbar with Scalar's share and paid SDK generation is not shown
    expect(await page.getByText("Generate SDKs").count()).toBe(0)
    // the bearer key is declared and selected: "Try it" sends it
    expect(text).not.toContain("No authentication selected")
    expect(text).toContain("Bearer")
    // the public reference only: no dashboard or session endpoint
    expect(text).not.toContain("Log in")
    expect(text.split("\n")).not.toContain("dashboard")
    await page.waitForTimeout(500)
    expect(elsewhere).toEqual([])
    await context.close()
  })

  it("renders the dashboard's own document at /docs/dashboard, with the session cookie selected", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${server.baseUrl}/docs/dashboard`)
    await expect.poll(() => page.getByText("Log in").count(), { timeout: 30_000 }).toBeGreaterThan(0)
    await expect.poll(async () => (await page.locator("body").innerText()).includes("__Host-hush_session"), { timeout: 30_000 }).toBe(true)
    const text = await page.locator("body").innerText()
    expect(text).not.toContain("No authentication selected")
    expect(text).toContain("__Host-hush_session")
    await context.close()
  })
})
