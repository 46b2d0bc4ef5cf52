/**
 * The API reference at /docs (issue 13): it renders the operations with no request leaving the
 * server's origin (no fonts, telemetry, registry or proxy), so it also works offline.
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
    const text = await page.locator("body").innerText()
    for (const group of ["files", "jobs", "account", "webhooks"]) expect(text.split("\n")).toContain(group)
    // the toolbar with Scalar's share and paid SDK generation is not shown
    expect(await page.getByText("Generate SDKs").count()).toBe(0)
    await page.waitForTimeout(500)
    expect(elsewhere).toEqual([])
    await context.close()
  })
})
