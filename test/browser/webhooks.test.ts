/**
 * Webhook endpoints managed in Chromium, against a real server with its delivery loop and
 * receivers inside the test (WEBHOOKS_ALLOW_PRIVATE, so a live endpoint may be local and
 * http): create one (its secret shown once and copied), send it a test event (signed with that
 * secret, logged with its status and duration), see a failing endpoint's error, delete it.
 */
import type { Browser } from "playwright-core"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { type Receiver, startReceiver } from "../support/webhook-receiver.js"
import { checkPage, launchChromium } from "./chromium.js"
import { inPage, open, signedUpCustomer } from "./session.js"

let server: TestServer
let chromium: Browser
let receiver: Receiver
let failing: Receiver

beforeAll(async () => {
  ;[server, chromium, receiver, failing] = await Promise.all([
    startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" }, webhooksAllowPrivate: true, accountSettings: { signupsPerHourPerIp: 1_000 } }),
    launchChromium(),
    startReceiver(),
    startReceiver(() => 500)
  ])
}, 60_000)

afterAll(async () => {
  await chromium?.close()
  await server?.close()
  await receiver?.close()
  await failing?.close()
})

describe("webhooks in the dashboard", () => {
  it("create (secret once, copied), send a test event, read its delivery, a failing endpoint's error, delete", async () => {
    const context = await chromium.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server.baseUrl, reducedMotion: "reduce" })
    await context.grantPermissions(["clipboard-read", "clipboard-write"])
    const customer = await signedUpCustomer(server, context)
    const page = customer.page
    await open(page, "/dashboard/webhooks", "Webhooks")
    await page.getByText("No endpoints yet.").waitFor()
    expect(await page.locator("pre.code").innerText()).toContain('-H "Authorization: Bearer $HUSH_API_KEY"')

    // create: the secret is shown once, copied, and gone after
    await page.getByLabel("Endpoint URL").fill(receiver.url)
    await page.getByLabel("Description (optional)").fill("staging receiver")
    await page.getByRole("button", { name: "Add endpoint" }).click()
    const secret = (await page.getByTestId("new-secret").innerText()).trim()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    await page.getByRole("button", { name: "Copy secret" }).click()
    await page.getByText("Copied.").waitFor()
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(secret)
    await checkPage(page, "webhooks-secret-once")
    await page.getByRole("button", { name: "I have stored it" }).click()
    await page.reload()
    await page.getByRole("rowheader", { name: new RegExp(receiver.url) }).waitFor()
    expect(await page.content()).not.toContain(secret)
    const endpoint = (await inPage(page, "GET", "/v1/dashboard/webhook_endpoints")).json.data[0]
    expect(endpoint).toMatchObject({ url: receiver.url, mode: "live", events: ["job.succeeded", "job.failed"], description: "staging receiver" })

    // a test event: through the delivery loop, signed with the secret the page showed, logged
    const before = receiver.received.length
    await page.getByRole("button", { name: `Send test event to ${receiver.url}` }).click()
    const [request] = (await receiver.waitFor(before + 1)).slice(before)
    const event = new Webhook(secret).verify(request!.body, {
      "webhook-id": String(request!.headers["webhook-id"]),
      "webhook-timestamp": String(request!.headers["webhook-timestamp"]),
      "webhook-signature": String(request!.headers["webhook-signature"])
    }) as { type: string; data: unknown }
    expect(event).toMatchObject({ type: "webhook.test", data: { endpoint: endpoint.id } })
    const deliveries = page.getByRole("table", { name: `Deliveries to ${receiver.url}, newest first` })
    const row = deliveries.locator("tbody tr").first()
    await expect.poll(() => row.innerText(), { timeout: 15_000 }).toMatch(/succeeded/)
    const cells = (await row.locator("th, td").allInnerTexts()).map((t) => t.trim())
    expect(cells.slice(0, 4)).toEqual(["webhook.test", "succeeded", expect.stringMatching(/^HTTP 200 in \d+ ms$/), "—"])

    // a failing endpoint: the attempt's status and error are shown, the delivery stays pending for its retry
    await page.getByLabel("Endpoint URL").fill(failing.url)
    await page.getByRole("button", { name: "Add endpoint" }).click()
    await page.getByRole("button", { name: "I have stored it" }).click()
    await page.getByRole("button", { name: `Send test event to ${failing.url}` }).click()
    const failed = page.getByRole("table", { name: `Deliveries to ${failing.url}, newest first` }).locator("tbody tr").first()
    await expect.poll(() => failed.innerText(), { timeout: 15_000 }).toMatch(/HTTP 500 in \d+ ms/)
    const failedCells = (await failed.locator("th, td").allInnerTexts()).map((t) => t.trim())
    expect(failedCells[1]).toBe("pending")
    expect(failedCells[3]).toMatch(/500/)
    await checkPage(page, "webhooks-deliveries", { screenshot: false })

    // delete, after confirming: the endpoint is gone, and gets nothing more
    await page.getByRole("button", { name: `Delete ${receiver.url}` }).click()
    await page.getByRole("group", { name: `Confirm: Delete ${receiver.url}` }).waitFor()
    await page.getByRole("button", { name: "Yes, delete" }).click()
    await page.getByRole("rowheader", { name: new RegExp(receiver.url) }).waitFor({ state: "detached" })
    const left = (await inPage(page, "GET", "/v1/dashboard/webhook_endpoints")).json.data.map((e: any) => e.url)
    expect(left).toEqual([failing.url])
    expect((await inPage(page, "POST", `/v1/dashboard/webhook_endpoints/${endpoint.id}/test`)).status).toBe(404)
    await context.close()
  }, 120_000)
})
