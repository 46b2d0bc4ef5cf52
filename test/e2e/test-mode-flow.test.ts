/**
 * The whole test-mode flow over HTTP (spec, "What the service does"; decisions.md, Test mode):
 * create → PUT → complete → ready → job → succeeded → output link → download, at no cost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import {
  call, complete, createFile, credits, denoise, expectCreditsShape, expectFileShape, expectIso, expectJobShape,
  ffprobeDuration, getFile, pollUntil, putUpload, tone, waitForFile
} from "./helpers.js"

describe("test-mode flow", () => {
  let server: TestServer
  let account: Awaited<ReturnType<TestServer["createAccount"]>>

  beforeAll(async () => {
    server = await startTestServer()
    account = await server.createAccount(2_000_000)
  })
  afterAll(async () => {
    await server.close()
  })

  it("runs from upload to a downloaded MP3 without touching the live wallet", async () => {
    const liveBefore = await credits(server, account.liveKey)
    expect(liveBefore).toMatchObject({ balance_micros: 2_000_000, reserved_micros: 0, available_micros: 2_000_000 })

    const audio = tone(2)
    // 1. create: a PUT upload target for a small file
    const created = await createFile(server, account.testKey, { filename: "interview.wav", size_bytes: audio.length, content_type: "audio/wav" })
    expect(created.status).toBe(201)
    expect(created.headers.get("content-type")).toMatch(/^application\/json/)
    expect(Object.keys(created.json).sort()).toEqual(["id", "status", "upload"])
    expect(created.json.id).toMatch(/^file_/)
    expect(created.json.status).toBe("uploading")
    const upload = created.json.upload
    expect(Object.keys(upload).sort()).toEqual(["expires_at", "headers", "method", "url"])
    expect(upload.method).toBe("PUT")
    expect(upload.url).toMatch(new RegExp(`^${server.baseUrl}/`))
    expect(upload.headers).toMatchObject({ "Content-Type": "audio/wav" })
    expectIso(upload.expires_at)
    const window = Date.parse(upload.expires_at) - Date.now()
    expect(window).toBeGreaterThan(6 * 3600_000 - 60_000)
    expect(window).toBeLessThanOrEqual(6 * 3600_000)

    const uploading = await getFile(server, account.testKey, created.json.id)
    expect(uploading.status).toBe(200)
    expectFileShape(uploading.json)
    expect(uploading.json).toMatchObject({
      id: created.json.id, filename: "interview.wav", content_type: "audio/wav", size_bytes: audio.length,
      status: "uploading", duration_seconds: null, error: null, mode: "test", ready_at: null
    })
    expect(uploading.json.expires_at).toBe(upload.expires_at)

    // 2. the bytes go to the upload target, never to the API
    const put = await putUpload(upload, audio)
    expect(put.status).toBe(200)

    // 3. complete: 202 with the file, validating
    const completed = await complete(server, account.testKey, created.json.id)
    expect(completed.status).toBe(202)
    expectFileShape(completed.json)
    expect(completed.json.status).toBe("validating")

    // validation decodes the audio: ready, with the decoded duration
    const ready = await waitForFile(server, account.testKey, created.json.id)
    expectFileShape(ready.json)
    expect(ready.json.status).toBe("ready")
    expect(ready.json.duration_seconds).toBeCloseTo(2, 1)
    expectIso(ready.json.ready_at)
    expect(Date.parse(ready.json.expires_at) - Date.parse(ready.json.ready_at)).toBe(7 * 24 * 3600_000)

    // 4. a job: 202, queued or already done (test mode completes almost at once)
    const job = await denoise(server, account.testKey, { file: created.json.id })
    expect(job.status).toBe(202)
    expectJobShape(job.json)
    expect(job.json).toMatchObject({ mode: "test", model: "xiph/rnnoise", input: { file: created.json.id } })
    expect(job.json.input.duration_seconds).toBeCloseTo(2, 1)
    // minimum 10 billable seconds at 100 micros
    expect(job.json.receipt).toMatchObject({ billable_seconds: 10, minimum_applied: true, unit_price_micros: 100, pricing_version: 1 })
    expect(job.json.cost.estimated_micros).toBe(1_000)

    // 5. poll until succeeded
    const done = await pollUntil(
      () => call(server, "GET", `/v1/jobs/${job.json.id}`, { key: account.testKey }),
      (r) => r.json?.status === "succeeded"
    )
    expectJobShape(done.json)
    expect(done.json.progress).toBe(1)
    expect(done.json.error).toBeNull()
    expect(done.json.output).toMatchObject({ format: "mp3" })
    expect(done.json.output.size_bytes).toBeGreaterThan(0)
    expect(done.json.cost.charged_micros).toBe(0)
    expect(done.json.receipt.charged_micros).toBe(0)
    expect(done.json.receipt.ledger_txn_id).toBeNull()
    expectIso(done.json.started_at)
    expectIso(done.json.finished_at)
    expect(Date.parse(done.json.output.expires_at) - Date.parse(done.json.finished_at)).toBe(7 * 24 * 3600_000)

    // 6. a fresh signed link, named after the input
    const link = await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: account.testKey })
    expect(link.status).toBe(200)
    expect(Object.keys(link.json).sort()).toEqual(["expires_at", "filename", "url"])
    expect(link.json.filename).toBe("interview.denoised.mp3")
    expectIso(link.json.expires_at)
    const ttl = Date.parse(link.json.expires_at) - Date.now()
    expect(ttl).toBeGreaterThan(3600_000 - 60_000)
    expect(ttl).toBeLessThanOrEqual(3600_000)

    const download = await fetch(link.json.url)
    expect(download.status).toBe(200)
    expect(download.headers.get("content-type")).toBe("audio/mpeg")
    expect(download.headers.get("content-disposition")).toContain("interview.denoised.mp3")
    const mp3 = new Uint8Array(await download.arrayBuffer())
    expect(mp3.length).toBe(done.json.output.size_bytes)
    // an MP3: an ID3 tag or an MPEG audio frame sync at the start
    const id3 = mp3[0] === 0x49 && mp3[1] === 0x44 && mp3[2] === 0x33
    const sync = mp3[0] === 0xff && (mp3[1]! & 0xe0) === 0xe0
    expect(id3 || sync).toBe(true)
    const probed = ffprobeDuration(mp3, "out.mp3")
    expect(probed.formatName).toBe("mp3")
    expect(probed.duration).toBeGreaterThan(0)

    // every test job returns the same sample
    const again = await denoise(server, account.testKey, { file: created.json.id })
    const againDone = await pollUntil(
      () => call(server, "GET", `/v1/jobs/${again.json.id}`, { key: account.testKey }),
      (r) => r.json?.status === "succeeded"
    )
    const againLink = await call(server, "GET", `/v1/jobs/${againDone.json.id}/output`, { key: account.testKey })
    const againBytes = new Uint8Array(await (await fetch(againLink.json.url)).arrayBuffer())
    expect(Buffer.from(againBytes).equals(Buffer.from(mp3))).toBe(true)

    // 7. no money moved: the live wallet is untouched, the test wallet is all zeros
    expect(await credits(server, account.liveKey)).toEqual(liveBefore)
    const sandbox = await credits(server, account.testKey)
    expectCreditsShape(sandbox)
    expect(sandbox).toEqual({ balance_micros: 0, reserved_micros: 0, available_micros: 0, currency: "usd", display: "$0.00" })
    const me = await call(server, "GET", "/v1/me", { key: account.testKey })
    expect(me.json.balance).toEqual(sandbox)
  })

  it("keeps test objects out of the live key's sight and the reverse", async () => {
    const testFile = await createFile(server, account.testKey, { size_bytes: 1000 })
    const liveFile = await createFile(server, account.liveKey, { size_bytes: 1000 })
    expect((await getFile(server, account.liveKey, testFile.json.id)).status).toBe(404)
    expect((await getFile(server, account.testKey, liveFile.json.id)).status).toBe(404)
    const liveJobs = await call(server, "GET", "/v1/jobs", { key: account.liveKey })
    expect(liveJobs.json.data.every((j: any) => j.mode === "live")).toBe(true)
    const testJobs = await call(server, "GET", "/v1/jobs", { key: account.testKey })
    expect(testJobs.json.data.length).toBeGreaterThan(0)
    expect(testJobs.json.data.every((j: any) => j.mode === "test")).toBe(true)
  })
})
