/**
 * Denoising from the browser, in Chromium, against real servers: real noisy speech (espeak-ng
 * over pink noise) picked on the New job page, uploaded to its signed URL, denoised live by
 * RNNoise; the job page updates by itself, plays and draws both input and output, and its
 * download decodes to the input's length with the noise-only lead-in much quieter. A file over
 * 100 MiB goes up as a multipart upload, its parts in parallel and one retried after the store
 * fails it, to a GPU model (the fake GPU host of test/support). A queued job is canceled from
 * its page (on a server without a worker, where jobs stay queued). The second CPU model (GTCRN),
 * chosen from the models the API lists, runs a short live job whose page shows its report.
 */
import { createHash } from "node:crypto"
import { execFileSync } from "node:child_process"
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Page, Request } from "playwright-core"
import { Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DENOISE_PRO, GTCRN, RNNOISE } from "../../core/domain/catalog.js"
import { type FakeGpuProvider, startFakeGpuProvider } from "../support/fake-gpu-provider.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { launchChromium } from "./chromium.js"
import { inPage, open, signedUpCustomer } from "./session.js"
import { decode, levelDb, NOISE_LEAD_SECONDS, noisySpeech, removeScratch, scratchDir, secondsOf } from "./speech.js"

const MIB = 1024 * 1024

let fake: FakeGpuProvider
let server: TestServer
let queued: TestServer
let chromium: Browser

beforeAll(async () => {
  fake = await startFakeGpuProvider({ workMs: 3_000 })
  ;[server, queued, chromium] = await Promise.all([
    startTestServer({
      worker: true,
      workerOptions: { pollInterval: "100 millis" },
      accountSettings: { signupsPerHourPerIp: 1_000 },
      gpuProvider: { name: "gpu", url: fake.url, token: Redacted.make(fake.token), pollIntervalMs: 100, deadlineMs: 60_000 }
    }),
    // no worker: its live jobs stay queued
    startTestServer({ accountSettings: { signupsPerHourPerIp: 1_000 } }),
    launchChromium()
  ])
}, 60_000)

afterAll(async () => {
  removeScratch()
  await chromium?.close()
  await server?.close()
  await queued?.close()
  await fake?.close()
})

const newContext = (on: TestServer) => chromium.newContext({ viewport: { width: 1280, height: 900 }, baseURL: on.baseUrl, reducedMotion: "reduce" })

/** Picks `path` on the New job page and starts the upload with the options given. */
const upload = async (page: Page, path: string, options: { readonly model?: string; readonly format?: string; readonly loudness?: string } = {}) => {
  await open(page, "/dashboard/new", "Denoise a file")
  await page.getByLabel("Audio or video file").setInputFiles(path)
  await page.getByTestId("chosen-file").waitFor()
  if (options.model !== undefined) await page.getByLabel("Model").selectOption(options.model)
  if (options.format !== undefined) await page.getByLabel("Output format").selectOption(options.format)
  if (options.loudness !== undefined) await page.getByLabel("Loudness target (LUFS)").fill(options.loudness)
  await page.getByRole("button", { name: "Upload and denoise" }).click()
}

const statusOf = (page: Page) => page.getByTestId("job-status").innerText()

describe("denoising in the browser", () => {
  it("real noisy speech: upload, the live job updating by itself, both players and spectrograms, a download that decodes", async () => {
    const context = await newContext(server)
    const customer = await signedUpCustomer(server, context, 1_000_000)
    const page = customer.page
    const speech = noisySpeech("noisy interview.wav")
    const input = decode(speech)

    await upload(page, speech, { format: "flac", loudness: "-20" })
    await page.waitForURL(/\/dashboard\/jobs\/job_[a-z2-7]+$/)
    await page.getByRole("heading", { level: 1, name: "noisy interview.wav" }).waitFor()
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toBe("succeeded")
    const jobId = page.url().split("/").pop()!
    const job = (await inPage(page, "GET", `/v1/dashboard/jobs/${jobId}`)).json
    expect(job).toMatchObject({ status: "succeeded", mode: "live", options: { output: { format: "flac", loudness: -20 } }, input: { filename: "noisy interview.wav" } })
    expect(job.ledger.map((e: any) => e.kind)).toEqual(["hold", "capture"])
    const details = await page.locator(".details").innerText()
    expect(details).toContain("FLAC, lossless")
    expect(details).toContain("−20.0 LUFS (EBU R128)")
    expect(details).toContain(`${job.cost.display} charged`)

    // both players load their audio, and both spectrograms are drawn from it
    await page.locator('.spectrogram[data-state="drawn"]').nth(1).waitFor({ timeout: 30_000 })
    await expect.poll(() => page.locator("audio").evaluateAll((players) => players.map((p) => (p as unknown as { readyState: number }).readyState >= 1)))
      .toEqual([true, true])
    const durations = await page.locator("audio").evaluateAll((players) => players.map((p) => (p as unknown as { duration: number }).duration))
    for (const seconds of durations) expect(seconds).toBeCloseTo(secondsOf(input), 1)
    expect(await page.getByRole("img", { name: /^Input spectrogram/ }).count()).toBe(1)
    expect(await page.getByRole("img", { name: /^Output spectrogram/ }).count()).toBe(1)

    // the download: the denoised speech, as long as the input, the noise-only lead-in far quieter
    const downloading = page.waitForEvent("download")
    await page.getByRole("button", { name: "Download output" }).click()
    const download = await downloading
    expect(download.suggestedFilename()).toBe("noisy interview.denoised.flac")
    const output = decode((await download.path())!)
    expect(Math.abs(secondsOf(output) - secondsOf(input))).toBeLessThan(0.01)
    const leadIn = levelDb(input, 0.1, NOISE_LEAD_SECONDS - 0.1)
    const leadOut = levelDb(output, 0.1, NOISE_LEAD_SECONDS - 0.1)
    expect(leadOut, `noise alone: ${leadIn.toFixed(1)} dBFS in, ${leadOut.toFixed(1)} dBFS out`).toBeLessThan(leadIn - 10)
    await context.close()
  }, 180_000)

  it("GTCRN chosen from the models the API lists: a short live job succeeds and its page shows the report", async () => {
    const context = await newContext(server)
    const customer = await signedUpCustomer(server, context, 1_000_000)
    const page = customer.page
    await open(page, "/dashboard/new", "Denoise a file")
    // the Model menu offers every live denoise model of GET /v1/models, both CPU models among them
    const listed = (await inPage(page, "GET", "/v1/models")).json.data
      .filter((m: any) => m.task === "denoise" && m.status === "live").map((m: any) => m.id)
    expect(listed).toEqual(expect.arrayContaining([RNNOISE.id, GTCRN.id]))
    const offered = await page.getByLabel("Model").locator("option").evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value))
    expect(offered).toEqual(["", ...listed])

    await upload(page, noisySpeech("gtcrn take.wav"), { model: GTCRN.id })
    await page.waitForURL(/\/dashboard\/jobs\/job_[a-z2-7]+$/)
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toBe("succeeded")
    const jobId = page.url().split("/").pop()!
    const job = (await inPage(page, "GET", `/v1/dashboard/jobs/${jobId}`)).json
    expect(job).toMatchObject({ model: GTCRN.id, status: "succeeded", mode: "live" })
    expect(job.report).not.toBeNull()
    // the report as the page words it: one decimal, a true minus sign
    const db = (value: number, unit: string) => `${value.toFixed(1)} ${unit}`.replace("-", "−")
    const { input_loudness_lufs, output_loudness_lufs, output_true_peak_dbtp, noise_reduction_db } = job.report
    expect(await page.getByTestId("report").innerText()).toBe(
      `Loudness ${db(input_loudness_lufs, "LUFS")} in, ${db(output_loudness_lufs, "LUFS")} out; ` +
      `true peak ${db(output_true_peak_dbtp, "dBTP")}; noise floor lowered by ${db(noise_reduction_db, "dB")}`
    )
    expect(noise_reduction_db).toBeGreaterThan(3)
    await context.close()
  }, 120_000)

  it("over 100 MiB: a multipart upload in parallel parts with a progress bar, one part retried after the store fails it, to a GPU job", async () => {
    const big = join(scratchDir("big"), "long recording.wav")
    // 48 kHz mono 16-bit: 96,000 bytes a second; 1,150 s (19:10) is 105.3 MiB, two parts of 64 MiB
    execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=220:sample_rate=48000:duration=1150", "-ac", "1", "-c:a", "pcm_s16le", big])
    const size = statSync(big).size
    expect(size).toBeGreaterThan(100 * MIB)

    const context = await newContext(server)
    const customer = await signedUpCustomer(server, context, 1_000_000)
    const page = customer.page
    // the store fails part 2's first attempt; every part PUT is timed
    const parts: Array<{ readonly part: number; readonly request: Request; started: number; finished?: number }> = []
    let failedOnce = false
    await page.route(/x-hush-part-number=2(&|$)/, (route) => {
      if (route.request().method() !== "PUT" || failedOnce) return route.continue()
      failedOnce = true
      return route.fulfill({ status: 503, body: "try again" })
    })
    page.on("request", (request) => {
      const part = /x-hush-part-number=(\d+)/.exec(request.url())
      if (part !== null && request.method() === "PUT") parts.push({ part: Number(part[1]), request, started: Date.now() })
    })
    page.on("requestfinished", (request) => {
      const entry = parts.find((p) => p.request === request)
      if (entry !== undefined) entry.finished = Date.now()
    })

    await upload(page, big, { model: DENOISE_PRO.id })
    await page.getByText(/^Uploading .* in 2 parts: \d+ %$/).waitFor()
    expect(await page.getByRole("progressbar").count()).toBe(1)
    await page.waitForURL(/\/dashboard\/jobs\/job_[a-z2-7]+$/, { timeout: 120_000 })
    // part 1 and part 2 were sent together; part 2 twice (its first attempt refused)
    expect(parts.map((p) => p.part).sort()).toEqual([1, 2, 2])
    const first = parts.find((p) => p.part === 1)!
    const second = parts.find((p) => p.part === 2)!
    expect(second.started).toBeLessThan(first.finished!)

    // the GPU job runs (3 s at the fake host): the page shows it running, then done, by itself
    await page.getByRole("heading", { level: 1, name: "long recording.wav" }).waitFor()
    await expect.poll(() => statusOf(page), { timeout: 30_000 }).toMatch(/^(queued|processing)/)
    await expect.poll(() => statusOf(page), { timeout: 60_000 }).toBe("succeeded")
    const jobId = page.url().split("/").pop()!
    const job = (await inPage(page, "GET", `/v1/dashboard/jobs/${jobId}`)).json
    expect(job).toMatchObject({ model: DENOISE_PRO.id, status: "succeeded", input: { duration_seconds: 1150 } })
    expect(job.cost.charged_micros).toBe(1150 * 300)
    // too long to draw here: played, not drawn
    await page.getByText(/^Longer than 10:00: played, not drawn/).nth(1).waitFor()

    // the stored input is the file, byte for byte, and the GPU host read it whole
    const link = (await inPage(page, "GET", `/v1/dashboard/jobs/${jobId}/input`)).json
    const stored = new Uint8Array(await (await fetch(link.url)).arrayBuffer())
    const digest = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
    expect(stored.length).toBe(size)
    expect(digest(stored)).toBe(digest(readFileSync(big)))
    await context.close()
  }, 300_000)

  it("cancel while queued: the page shows the job queued, cancels it, and the hold is released", async () => {
    const context = await newContext(queued)
    const customer = await signedUpCustomer(queued, context, 1_000_000)
    const page = customer.page
    await upload(page, noisySpeech())
    await page.waitForURL(/\/dashboard\/jobs\/job_[a-z2-7]+$/)
    await expect.poll(() => statusOf(page)).toBe("queued")
    const held = (await inPage(page, "GET", "/v1/dashboard/credits")).json
    expect(held.reserved_micros).toBeGreaterThan(0)
    await page.getByRole("button", { name: "Cancel job" }).click()
    await expect.poll(() => statusOf(page)).toBe("canceled")
    expect(await page.getByRole("button", { name: "Cancel job" }).count()).toBe(0)
    const ledger = page.getByRole("table", { name: "The job's ledger entries, oldest first" })
    await ledger.getByRole("cell", { name: "release", exact: true }).waitFor()
    const credits = (await inPage(page, "GET", "/v1/dashboard/credits")).json
    expect(credits).toMatchObject({ balance_micros: 1_000_000, reserved_micros: 0 })
    // the input still plays; there is no output
    await page.getByText("No output: the job was canceled.").waitFor()
    await page.locator('[data-player="input"] audio').waitFor()
    await context.close()
  }, 90_000)
})
