/**
 * Every page of the dashboard at 1280 and 375 px, on an account with something on every page
 * (credit, live jobs of real noisy speech, a test job, keys, a webhook endpoint with a
 * delivery): no axe violation, nothing wider than the window, no table cell or button outside
 * it, and a screenshot of each (`SCREENSHOTS=docs/screenshots`). The ledger's and the usage
 * page's numbers are checked against the API's own answers, the chart's values by keyboard and
 * pointer, and a test job's page (its notice and its output's player) and the test jobs' list say
 * its output is the sample clip and nothing was charged.
 */
import type { Browser } from "playwright-core"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { formatMicros } from "../../core/money.js"
import { denoise, readyFile, waitForJob } from "../e2e/helpers.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { type Receiver, startReceiver } from "../support/webhook-receiver.js"
import { checkPage, launchChromium } from "./chromium.js"
import { type Customer, inPage, keyOf, open, signedUpCustomer } from "./session.js"
import { noisySpeech, removeScratch } from "./speech.js"

let server: TestServer
let chromium: Browser
let receiver: Receiver
let customer: Customer
const jobs: Record<"speech" | "options" | "test", string> = { speech: "", options: "", test: "" }

beforeAll(async () => {
  ;[server, chromium, receiver] = await Promise.all([
    startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" }, webhooksAllowPrivate: true, accountSettings: { signupsPerHourPerIp: 1_000 } }),
    launchChromium(),
    startReceiver()
  ])
  const context = await chromium.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server.baseUrl })
  customer = await signedUpCustomer(server, context, 20_000_000)
  const [live, test] = [await keyOf(customer, "live", "production"), await keyOf(customer, "test", "playground")]
  const speech = new Uint8Array(readFileSync(noisySpeech()))
  const run = async (key: string, filename: string, body: object = {}) => {
    const file = await readyFile(server, key, speech, { filename })
    const started = await denoise(server, key, { file, ...body })
    expect(started.status, started.text).toBe(202)
    expect((await waitForJob(server, key, started.json.id)).json.status).toBe("succeeded")
    return started.json.id as string
  }
  jobs.speech = await run(live, "interview.wav")
  jobs.options = await run(live, "Podcast episode 12 (raw).wav", { strength: 0.8, output: { format: "flac", loudness: -16 } })
  jobs.test = await run(test, "trial.wav")
  const endpoint = await inPage(customer.page, "POST", "/v1/dashboard/webhook_endpoints", { url: receiver.url, events: ["job.succeeded"], description: "staging" })
  expect(endpoint.status).toBe(201)
  expect((await inPage(customer.page, "POST", `/v1/dashboard/webhook_endpoints/${endpoint.json.id}/test`)).status).toBe(202)
  await receiver.waitFor(1)
  await customer.page.close()
}, 180_000)

afterAll(async () => {
  removeScratch()
  await chromium?.close()
  await server?.close()
  await receiver?.close()
})

const WIDTHS = [1280, 375] as const

/** The signed-in customer's pages in a window `width` px wide. */
const customerPage = async (width: number) => {
  const context = await chromium.newContext({ viewport: { width, height: 900 }, baseURL: server.baseUrl, reducedMotion: "reduce" })
  await context.addCookies(await customer.page.context().cookies())
  return context.newPage()
}

describe("every page at 1280 and 375 px", () => {
  for (const width of WIDTHS) {
    it(`the signed-in pages at ${width} px: axe, fit, every cell and button on screen; screenshots`, async () => {
      const page = await customerPage(width)
      const pages: ReadonlyArray<readonly [string, string, string | RegExp]> = [
        ["overview", "/dashboard", "Overview"],
        ["new-job", "/dashboard/new", "Denoise a file"],
        ["jobs", "/dashboard/jobs", "Jobs"],
        ["keys", "/dashboard/keys", "API keys"],
        ["credits", "/dashboard/credits", "Credits"],
        ["ledger", "/dashboard/ledger", "Ledger"],
        ["usage", "/dashboard/usage", "Usage"],
        ["account", "/dashboard/account", "Account"]
      ]
      for (const [name, path, heading] of pages) {
        await open(page, path, heading)
        await checkPage(page, `${name}-${width}`)
      }
      // a job with both players drawn, and one with options
      for (const [name, id, heading] of [["job", jobs.speech, "interview.wav"], ["job-options", jobs.options, "Podcast episode 12 (raw).wav"]] as const) {
        await open(page, `/dashboard/jobs/${id}`, heading)
        await page.locator('.spectrogram[data-state="drawn"]').nth(1).waitFor()
        await checkPage(page, `${name}-${width}`)
      }
      await open(page, `/dashboard/jobs/${jobs.test}?mode=test`, "trial.wav")
      await page.getByText("Test mode: the output is Hush's sample clip, not your audio, and nothing was charged.").waitFor()
      // the output's player says the same where the result plays; a test job has no report
      expect(await page.locator("figcaption", { hasText: "Output" }).innerText()).toBe("Output (the sample clip: test mode)")
      expect(await page.getByTestId("report").count()).toBe(0)
      await checkPage(page, `job-test-${width}`)
      // the jobs list, filtered to test jobs, says it too
      await open(page, "/dashboard/jobs", "Jobs")
      await page.getByLabel("Mode", { exact: true }).selectOption("test")
      await page.getByRole("button", { name: "Filter" }).click()
      await page.getByRole("rowheader", { name: "trial.wav" }).waitFor()
      await page.getByText("Test jobs return Hush's sample clip, not your audio, and are never charged.").waitFor()
      // webhooks, with an endpoint's deliveries shown
      await open(page, "/dashboard/webhooks", "Webhooks")
      await page.getByRole("button", { name: `Deliveries to ${receiver.url}` }).click()
      await page.getByRole("rowheader", { name: "webhook.test" }).waitFor()
      await checkPage(page, `webhooks-${width}`)
      await page.context().close()
    }, 180_000)

    it(`the pages before signing in at ${width} px`, async () => {
      const context = await chromium.newContext({ viewport: { width, height: 900 }, baseURL: server.baseUrl, reducedMotion: "reduce" })
      const page = await context.newPage()
      for (const [name, path, heading] of [
        ["login", "/login", "Log in to Hush"], ["signup", "/signup", "Create your Hush account"], ["forgot-password", "/forgot-password", "Reset your password"],
        ["reset-password", "/reset-password?token=unknown", "Choose a new password"],
        ["verify-email", "/verify-email?token=unknown", "Confirm your e-mail address"]
      ] as const) {
        await open(page, path, heading)
        await checkPage(page, `${name}-${width}`)
      }
      await context.close()
    }, 90_000)
  }
})

describe("the numbers against the API's", () => {
  it("the ledger: each entry's date, kind, changes to balance and to reserved, balance after; a hold only reserves", async () => {
    const page = await customerPage(1280)
    await open(page, "/dashboard/ledger", "Ledger")
    const api = (await inPage(page, "GET", "/v1/dashboard/ledger?limit=25")).json.data as Array<any>
    expect(api.map((e) => e.kind)).toEqual(["capture", "hold", "capture", "hold", "grant"])
    const rows = page.getByRole("table", { name: "Ledger entries, newest first" }).locator("tbody tr")
    expect(await rows.count()).toBe(api.length)
    const dash = (micros: number) => (micros === 0 ? "—" : formatMicros(micros))
    for (const [i, entry] of api.entries()) {
      const cells = (await rows.nth(i).locator("td").allInnerTexts()).map((t) => t.trim())
      expect(cells.slice(1, 5), entry.kind).toEqual([entry.kind, dash(entry.balance_delta), dash(entry.reserved_delta), formatMicros(entry.balance_after)])
      if (entry.job !== null) expect(cells[5]).toContain(entry.job)
    }
    // the hold: nothing off the balance, its cost reserved; the capture takes it off both
    const hold = api.find((e) => e.kind === "hold")!
    expect(hold.balance_delta).toBe(0)
    expect(hold.reserved_delta).toBeGreaterThan(0)
    const holdCells = await rows.nth(api.indexOf(hold)).locator("td").allInnerTexts()
    expect(holdCells[2]!.trim()).toBe("—")
    expect(holdCells[3]!.trim()).toBe(formatMicros(hold.reserved_delta))
    await page.context().close()
  }, 60_000)

  it("usage: the days with jobs and the totals in the table, every day in the CSV, each day's values on the chart by keyboard and pointer", async () => {
    const page = await customerPage(1280)
    await open(page, "/dashboard/usage", "Usage")
    const usage = (await inPage(page, "GET", "/v1/dashboard/usage?group=day&mode=live")).json
    const busy = usage.rows.filter((r: any) => r.jobs > 0)
    expect(busy).toHaveLength(1)
    const table = page.getByRole("table", { name: "Usage on the days with jobs, with the totals" })
    expect(await table.locator("tbody tr").count()).toBe(busy.length)
    const day = busy[0]
    const row = (await table.locator("tbody tr").first().locator("th, td").allInnerTexts()).map((t) => t.trim())
    expect(row.slice(1)).toEqual([String(day.jobs), String(day.succeeded), String(day.failed), `0:${String(day.billable_seconds).padStart(2, "0")}`, day.display])
    const totals = (await table.locator("tfoot tr").locator("th, td").allInnerTexts()).map((t) => t.trim())
    expect(totals).toEqual(["Total", String(usage.totals.jobs), String(usage.totals.succeeded), String(usage.totals.failed), expect.any(String), usage.totals.display])
    expect(usage.totals.display).toBe(formatMicros(usage.totals.charged_micros))

    const href = await page.getByRole("link", { name: /^Download CSV/ }).getAttribute("href")
    const csv = decodeURIComponent(href!.slice(href!.indexOf(",") + 1)).trim().split("\r\n")
    expect(csv).toHaveLength(usage.rows.length + 1)
    expect(csv.filter((line) => line.startsWith(`${day.key},`))).toEqual([
      `${day.key},,${day.jobs},${day.succeeded},${day.failed},${day.billable_seconds},${day.charged_micros},${day.display}`
    ])

    // the chart: focus it, the last day (today) is read out; Home goes to the first, empty, day
    const chart = page.getByRole("group", { name: /^Jobs per day/ })
    expect(await chart.getAttribute("aria-label")).toContain(`${usage.totals.jobs} in total over ${usage.rows.length} days`)
    await chart.focus()
    const readout = page.locator(".chart-readout")
    await expect.poll(() => readout.innerText()).toMatch(new RegExp(`: ${day.jobs} jobs, ${day.succeeded} succeeded, .* ${day.display.replace("$", "\\$")} charged$`))
    await page.keyboard.press("Home")
    await expect.poll(() => readout.innerText()).toMatch(/: 0 jobs, 0 succeeded, 0:00 billed, \$0\.00 charged$/)
    // the pointer over the last bar reads it too
    await page.locator("body").click({ position: { x: 5, y: 5 } })
    const box = (await page.locator(".chart-area").boundingBox())!
    await page.mouse.move(box.x + box.width - 20, box.y + 100)
    await expect.poll(() => readout.innerText()).toContain(`${day.display} charged`)
    await page.context().close()
  }, 60_000)

  it("the jobs list: filename, status, duration, cost and date of each, as the API has them", async () => {
    const page = await customerPage(1280)
    await open(page, "/dashboard/jobs", "Jobs")
    const api = (await inPage(page, "GET", "/v1/dashboard/jobs?mode=live")).json.data as Array<any>
    const rows = page.getByRole("table", { name: "Live jobs, newest first" }).locator("tbody tr")
    expect(await rows.count()).toBe(api.length)
    for (const [i, job] of api.entries()) {
      const cells = (await rows.nth(i).locator("th, td").allInnerTexts()).map((t) => t.trim())
      const seconds = Math.round(job.input.duration_seconds)
      expect(seconds).toBeLessThan(60)
      expect(cells.slice(0, 4)).toEqual([job.input.filename, "succeeded", `0:${String(seconds).padStart(2, "0")}`, `${formatMicros(job.cost.charged_micros)} charged`])
    }
    // each filename links to its job's page
    expect(await page.locator("tbody th a").evaluateAll((links) => links.map((a) => a.getAttribute("href")))).toEqual(api.map((j) => `/dashboard/jobs/${j.id}`))
    await page.context().close()
  }, 60_000)
})
