/**
 * Rules that depend on time, with an adjustable clock installed in the server (Layer.setClock):
 * the 6-hour upload window, signed storage URL expiry, output retention (7 days) and the
 * 1-hour download link.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { makeAdjustableClock } from "../support/clock.js"
import { startTestServer, type TestServer } from "../support/server.js"
import {
  call, complete, createFile, denoise, expectProblem, getFile, putUpload, readyFile, tone, waitForFile, waitForJob
} from "./helpers.js"

const HOUR = 3600_000
const DAY = 24 * HOUR

describe("time-dependent rules", () => {
  const clock = makeAdjustableClock()
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ clock })
  })
  afterEach(() => clock.reset())
  afterAll(async () => {
    await server.close()
  })

  it("runs the server's request fibers on the installed clock", async () => {
    clock.advance(3 * DAY)
    const status = await call(server, "GET", "/v1/status")
    expect(Math.abs(Date.parse(status.json.updated_at) - (Date.now() + 3 * DAY))).toBeLessThan(60_000)
    const { testKey } = await server.createAccount()
    const file = await createFile(server, testKey, { size_bytes: 10 })
    const got = await getFile(server, testKey, file.json.id)
    expect(Math.abs(Date.parse(got.json.created_at) - (Date.now() + 3 * DAY))).toBeLessThan(60_000)
    // background work (validation) reads it too
    const id = await readyFile(server, testKey)
    const ready = await getFile(server, testKey, id)
    expect(Math.abs(Date.parse(ready.json.ready_at) - (Date.now() + 3 * DAY))).toBeLessThan(60_000)
  })

  it("refuses complete after the 6-hour window (409 upload_expired), leaving the file unchanged", async () => {
    const { liveKey } = await server.createAccount()
    const audio = tone(1)
    const late = await createFile(server, liveKey, { size_bytes: audio.length })
    const onTime = await createFile(server, liveKey, { size_bytes: audio.length })
    expect((await putUpload(late.json.upload, audio)).status).toBe(200)
    expect((await putUpload(onTime.json.upload, audio)).status).toBe(200)

    clock.advance(6 * HOUR - 60_000)
    expect((await complete(server, liveKey, onTime.json.id)).status).toBe(202)

    clock.advance(60_000)
    const refused = await expectProblem(server, await complete(server, liveKey, late.json.id), 409, "upload_expired")
    expect(refused.detail).toContain(late.json.id)
    const file = await getFile(server, liveKey, late.json.id)
    expect(file.json.status).toBe("uploading")
    expect(file.json.expires_at).toBe(late.json.upload.expires_at)
    // still expired later, and no job can use it
    clock.advance(DAY)
    await expectProblem(server, await complete(server, liveKey, late.json.id), 409, "upload_expired")
    await expectProblem(server, await denoise(server, liveKey, { file: late.json.id }), 409, "file_not_ready")
    // an expired upload no longer counts as open: the account may open ten new ones
    for (let i = 0; i < 10; i++) expect((await createFile(server, liveKey, { size_bytes: 10 })).status).toBe(201)
  })

  it("refuses an expired signed PUT URL (403) and stores nothing", async () => {
    const { testKey } = await server.createAccount()
    const audio = tone(1)
    const created = await createFile(server, testKey, { size_bytes: audio.length })
    clock.advance(6 * HOUR + 1_000)
    const put = await putUpload(created.json.upload, audio)
    expect(put.status).toBe(403)
    expect(await put.text()).toMatch(/expired/)
    clock.reset()
    const refused = await expectProblem(server, await complete(server, testKey, created.json.id), 422, "invalid_request")
    expect(refused.detail).toMatch(/no bytes/)
    // the same URL still works inside its window
    expect((await putUpload(created.json.upload, audio)).status).toBe(200)
    expect((await complete(server, testKey, created.json.id)).status).toBe(202)
  })

  it("refuses a tampered signed URL (403) and stores nothing", async () => {
    const { testKey } = await server.createAccount()
    const audio = tone(1)
    const created = await createFile(server, testKey, { size_bytes: audio.length })
    const url = new URL(created.json.upload.url)
    const signature = url.searchParams.get("x-hush-signature")!
    const forged = new URL(url)
    forged.searchParams.set("x-hush-signature", `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`)
    const longer = new URL(url)
    longer.searchParams.set("x-hush-expires", String(Number(url.searchParams.get("x-hush-expires")) + DAY))
    const otherKey = new URL(url)
    otherKey.pathname = otherKey.pathname.replace(created.json.id, "file_someoneelse0000000000")
    const unsigned = new URL(url)
    unsigned.searchParams.delete("x-hush-signature")
    for (const target of [forged, longer, otherKey, unsigned]) {
      const response = await fetch(target, { method: "PUT", headers: created.json.upload.headers, body: audio })
      expect(response.status, target.toString()).toBe(403)
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    }
    await expectProblem(server, await complete(server, testKey, created.json.id), 422, "invalid_request")
    expect((await getFile(server, testKey, created.json.id)).json.status).toBe("uploading")
    // a download URL cannot be used to upload, nor an upload URL to download
    expect((await fetch(created.json.upload.url)).status).toBe(403)
  })

  it("keeps a test job's output 7 days after success, then answers 410 output_expired", async () => {
    const { testKey } = await server.createAccount()
    const fileId = await readyFile(server, testKey)
    const job = await denoise(server, testKey, { file: fileId })
    const done = await waitForJob(server, testKey, job.json.id)
    expect(done.json.status).toBe("succeeded")
    const keptUntil = Date.parse(done.json.output.expires_at)
    expect(keptUntil - Date.parse(done.json.finished_at)).toBe(7 * DAY)

    clock.advance(7 * DAY - 60_000)
    const link = await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: testKey })
    expect(link.status).toBe(200)
    expect((await fetch(link.json.url)).status).toBe(200)

    clock.advance(120_000)
    await expectProblem(server, await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: testKey }), 410, "output_expired")
    // the job itself is still readable
    expect((await call(server, "GET", `/v1/jobs/${job.json.id}`, { key: testKey })).json.status).toBe("succeeded")
  })

  it("signs download links for one hour", async () => {
    const { testKey } = await server.createAccount()
    const fileId = await readyFile(server, testKey)
    const job = await denoise(server, testKey, { file: fileId })
    await waitForJob(server, testKey, job.json.id)
    const link = await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: testKey })
    clock.advance(HOUR - 60_000)
    expect((await fetch(link.json.url)).status).toBe(200)
    clock.advance(120_000)
    expect((await fetch(link.json.url)).status).toBe(403)
    // a fresh link works again
    const fresh = await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: testKey })
    expect(fresh.json.url).not.toBe(link.json.url)
    expect((await fetch(fresh.json.url)).status).toBe(200)
  })

  it("counts the upload window from creation even when bytes arrive late", async () => {
    const { testKey } = await server.createAccount()
    const audio = tone(1)
    const created = await createFile(server, testKey, { size_bytes: audio.length })
    clock.advance(5 * HOUR)
    expect((await putUpload(created.json.upload, audio)).status).toBe(200)
    clock.advance(HOUR)
    await expectProblem(server, await complete(server, testKey, created.json.id), 409, "upload_expired")
    clock.reset()
    // back inside the window (the clock went back): it completes and validates
    expect((await complete(server, testKey, created.json.id)).status).toBe(202)
    expect((await waitForFile(server, testKey, created.json.id)).json.status).toBe("ready")
  })
})
