/**
 * Denoising and webhooks from the dashboard over real HTTP (decisions.md, Web dashboard: doing
 * the work): files, jobs, cancel, the input and output links and webhook endpoints through the
 * session cookie, in the account's live mode, with the keyed API's rules: the same prices,
 * limits, quotas and idempotency, the CSRF token on every unsafe request, and the objects the
 * account's live key sees.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { changeAccountStatus, grantCredit } from "../../core/services/accounts.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { type Receiver, startReceiver } from "../support/webhook-receiver.js"
import { type Browser, verifiedUser } from "./browser.js"
import { call, credits, expectProblem, pollUntil, putUpload, tone } from "./helpers.js"

const MIB = 1024 * 1024

/** A verified user with `credit` granted and a live key of the account (to compare with the keyed API). */
const fundedUser = async (server: TestServer, credit = 1_000_000) => {
  const user = await verifiedUser(server)
  const accountId = user.reply.json.account.id as string
  if (credit > 0) await server.run(grantCredit(accountId, credit))
  const key = await user.browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live", name: "compare" } })
  expect(key.status, key.text).toBe(201)
  return { ...user, accountId, liveKey: key.json.secret as string }
}

/** create → PUT → complete `{}` → ready, through the session; the file id. */
const readyDashboardFile = async (browser: Browser, bytes: Uint8Array, filename = "interview.wav") => {
  const created = await browser.request("POST", "/v1/dashboard/files", { body: { filename, size_bytes: bytes.length, content_type: "audio/wav" } })
  expect(created.status, created.text).toBe(201)
  expect(created.json.upload.method).toBe("PUT")
  const put = await putUpload(created.json.upload, bytes)
  expect(put.status).toBe(200)
  const completed = await browser.request("POST", `/v1/dashboard/files/${created.json.id}/complete`, { body: {} })
  expect(completed.status, completed.text).toBe(202)
  await pollUntil(() => browser.request("GET", `/v1/dashboard/files/${created.json.id}`), (r) => r.json?.status === "ready", 20_000)
  return created.json.id as string
}

describe("dashboard work (no worker: jobs stay queued)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ accountSettings: { signupsPerHourPerIp: 1_000 } })
  })
  afterAll(async () => {
    await server.close()
  })

  it("upload, denoise with options, the job as the live key sees it, its hold, its input link; cancel while queued releases it", async () => {
    const user = await fundedUser(server)
    const audio = tone(3)
    const fileId = await readyDashboardFile(user.browser, audio, "Interview 1.wav")
    // the account's live key sees the file: the session acts in live mode
    expect((await call(server, "GET", `/v1/files/${fileId}`, { key: user.liveKey })).json.status).toBe("ready")

    const body = { file: fileId, strength: 0.8, output: { format: "wav", loudness: -16 } }
    const started = await user.browser.request("POST", "/v1/dashboard/audio/denoise", { body })
    expect(started.status, started.text).toBe(202)
    const job = started.json
    expect(job).toMatchObject({
      object: "job", status: "queued", mode: "live", model: "xiph/rnnoise", key: null,
      input: { file: fileId, duration_seconds: 3, filename: "Interview 1.wav" },
      options: { strength: 0.8, output: { format: "wav", loudness: -16 } },
      // the keyed API's price: 100 micros a second, at least 10 seconds
      cost: { estimated_micros: 1_000, charged_micros: null, display: "$0.001" },
      receipt: { billable_seconds: 10, minimum_applied: true, unit_price_micros: 100 }
    })
    const keyed = await call(server, "GET", `/v1/jobs/${job.id}`, { key: user.liveKey })
    expect(keyed.status).toBe(200)
    expect({ ...keyed.json }).toEqual(Object.fromEntries(Object.entries(job).filter(([k]) => k !== "key").map(([k, v]) =>
      k === "input" ? [k, { file: fileId, duration_seconds: 3 }] : [k, v])))
    expect(await credits(server, user.liveKey)).toMatchObject({ balance_micros: 1_000_000, reserved_micros: 1_000 })

    // the input plays while it is kept: a signed link to the uploaded bytes, named as uploaded
    const input = await user.browser.request("GET", `/v1/dashboard/jobs/${job.id}/input`)
    expect(input.status, input.text).toBe(200)
    expect(input.json.filename).toBe("Interview 1.wav")
    const bytes = new Uint8Array(await (await fetch(input.json.url)).arrayBuffer())
    expect(Buffer.from(bytes).equals(Buffer.from(audio))).toBe(true)
    await expectProblem(server, await user.browser.request("GET", `/v1/dashboard/jobs/${job.id}/output`), 409, "job_not_succeeded")

    const canceled = await user.browser.request("POST", `/v1/dashboard/jobs/${job.id}/cancel`)
    expect(canceled.status, canceled.text).toBe(200)
    expect(canceled.json).toMatchObject({ id: job.id, status: "canceled", input: { filename: "Interview 1.wav" } })
    expect(await credits(server, user.liveKey)).toMatchObject({ balance_micros: 1_000_000, reserved_micros: 0 })
    await expectProblem(server, await user.browser.request("POST", `/v1/dashboard/jobs/${job.id}/cancel`), 409, "job_not_cancelable")
    const detail = await user.browser.request("GET", `/v1/dashboard/jobs/${job.id}`)
    expect(detail.json.ledger.map((e: any) => e.kind)).toEqual(["hold", "release"])

    // once the file is deleted the input is no longer kept
    expect((await call(server, "DELETE", `/v1/files/${fileId}`, { key: user.liveKey })).status).toBe(204)
    const gone = await expectProblem(server, await user.browser.request("GET", `/v1/dashboard/jobs/${job.id}/input`), 404, "not_found")
    expect(gone.detail).toMatch(/no longer kept/)
  })

  it("the keyed API's rules: upload plans, media types, sizes, credit and the open-uploads quota", async () => {
    const user = await fundedUser(server, 0)
    const create = (size: number, contentType = "audio/wav") =>
      user.browser.request("POST", "/v1/dashboard/files", { body: { filename: "big.wav", size_bytes: size, content_type: contentType } })
    const multipart = await create(200 * MIB)
    expect(multipart.status, multipart.text).toBe(201)
    expect(multipart.json.upload).toMatchObject({ method: "multipart", part_size: 64 * MIB })
    expect(multipart.json.upload.parts.map((p: any) => p.part_number)).toEqual([1, 2, 3, 4])
    await expectProblem(server, await create(1_000, "text/plain"), 415, "unsupported_media_type")
    await expectProblem(server, await create(5 * 1024 * MIB + 1), 413, "file_too_large")
    await expectProblem(server, await user.browser.request("POST", "/v1/dashboard/files", { body: { filename: "x.wav" } }), 422, "invalid_request")
    // a multipart complete without its parts' ETags is refused as the keyed one is
    const noParts = await user.browser.request("POST", `/v1/dashboard/files/${multipart.json.id}/complete`, { body: {} })
    expect((await expectProblem(server, noParts, 422, "invalid_request")).detail).toMatch(/parts/)

    // no credit: 402, nothing held
    const fileId = await readyDashboardFile(user.browser, tone(3))
    await expectProblem(server, await user.browser.request("POST", "/v1/dashboard/audio/denoise", { body: { file: fileId } }), 402, "insufficient_credit")
    await expectProblem(server, await user.browser.request("POST", "/v1/dashboard/audio/denoise", { body: { file: fileId, model: "acme/none" } }), 422, "model_not_available")

    // ten open uploads at most, counted with the live key's
    for (let open = 1; open < 10; open++) expect((await create(1_000)).status).toBe(201)
    await expectProblem(server, await create(1_000), 429, "quota_exceeded")
    await expectProblem(server, await call(server, "POST", "/v1/files", {
      key: user.liveKey, body: { filename: "a.wav", size_bytes: 1_000, content_type: "audio/wav" }
    }), 429, "quota_exceeded")
  })

  it("Idempotency-Key: a retry answers the first file; another body is 409", async () => {
    const user = await fundedUser(server, 0)
    const body = { filename: "once.wav", size_bytes: 4_000, content_type: "audio/wav" }
    const headers = { "idempotency-key": "dashboard-upload-1" }
    const first = await user.browser.request("POST", "/v1/dashboard/files", { body, headers })
    expect(first.status, first.text).toBe(201)
    const replay = await user.browser.request("POST", "/v1/dashboard/files", { body, headers })
    expect(replay.status).toBe(201)
    expect(replay.json.id).toBe(first.json.id)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    await expectProblem(server, await user.browser.request("POST", "/v1/dashboard/files", { body: { ...body, size_bytes: 5_000 }, headers }), 409, "idempotency_key_reused")
  })

  it("needs the session, and its CSRF token on every unsafe request; a frozen account is refused as its keys are", async () => {
    const user = await fundedUser(server)
    const body = { filename: "a.wav", size_bytes: 1_000, content_type: "audio/wav" }
    await expectProblem(server, await user.browser.request("POST", "/v1/dashboard/files", { body, csrf: false }), 403, "forbidden")
    for (const [method, path] of [
      ["POST", "/v1/dashboard/audio/denoise"], ["POST", "/v1/dashboard/jobs/job_x/cancel"], ["POST", "/v1/dashboard/files/file_x/complete"],
      ["POST", "/v1/dashboard/webhook_endpoints"], ["DELETE", "/v1/dashboard/webhook_endpoints/whe_x"], ["POST", "/v1/dashboard/webhook_endpoints/whe_x/test"]
    ] as const) {
      await expectProblem(server, await user.browser.request(method, path, { body: {}, csrf: false }), 403, "forbidden")
    }
    for (const path of ["/v1/dashboard/files/file_x", "/v1/dashboard/jobs/job_x/input", "/v1/dashboard/webhook_endpoints"]) {
      await expectProblem(server, await call(server, "GET", path), 401, "unauthorized")
    }
    // nothing was created by the refused requests: all ten uploads are still open to the account
    const files = await Promise.all(Array.from({ length: 10 }, () => user.browser.request("POST", "/v1/dashboard/files", { body })))
    expect(files.map((f) => f.status)).toEqual(Array(10).fill(201))

    await server.run(changeAccountStatus(user.accountId, "dispute_opened"))
    await expectProblem(server, await user.browser.request("GET", "/v1/dashboard/files/file_x"), 403, "account_frozen")
    await expectProblem(server, await user.browser.request("GET", "/v1/dashboard/webhook_endpoints"), 403, "account_frozen")
  })

  it("another account's job and file are 404", async () => {
    const owner = await fundedUser(server)
    const stranger = await fundedUser(server)
    const fileId = await readyDashboardFile(owner.browser, tone(3))
    const job = await owner.browser.request("POST", "/v1/dashboard/audio/denoise", { body: { file: fileId } })
    expect(job.status, job.text).toBe(202)
    await expectProblem(server, await stranger.browser.request("GET", `/v1/dashboard/files/${fileId}`), 404, "not_found")
    await expectProblem(server, await stranger.browser.request("POST", "/v1/dashboard/audio/denoise", { body: { file: fileId } }), 404, "not_found")
    await expectProblem(server, await stranger.browser.request("POST", `/v1/dashboard/jobs/${job.json.id}/cancel`), 404, "not_found")
    await expectProblem(server, await stranger.browser.request("GET", `/v1/dashboard/jobs/${job.json.id}/input`), 404, "not_found")
  })
})

describe("dashboard webhooks (the delivery loop runs; local receivers allowed)", () => {
  let server: TestServer
  let receiver: Receiver
  beforeAll(async () => {
    server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" }, webhooksAllowPrivate: true })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await server.close()
    await receiver.close()
  })

  it("create (secret once), list, send a test event, read its delivery, delete: live-mode endpoints, the live key's own", async () => {
    const user = await fundedUser(server, 0)
    const created = await user.browser.request("POST", "/v1/dashboard/webhook_endpoints", {
      body: { url: receiver.url, events: ["job.succeeded", "job.failed"], description: "staging" }
    })
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({ mode: "live", url: receiver.url, status: "enabled" })
    expect(created.json.secret).toMatch(/^whsec_/)
    const listed = await user.browser.request("GET", "/v1/dashboard/webhook_endpoints")
    expect(listed.json.data.map((e: any) => e.id)).toEqual([created.json.id])
    expect(listed.json.data[0].secret).toBeUndefined()
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key: user.liveKey })).json.data.map((e: any) => e.id)).toEqual([created.json.id])

    const before = receiver.received.length
    const sent = await user.browser.request("POST", `/v1/dashboard/webhook_endpoints/${created.json.id}/test`)
    expect(sent.status, sent.text).toBe(202)
    expect(sent.json.event_type).toBe("webhook.test")
    const [request] = (await receiver.waitFor(before + 1)).slice(before)
    expect(JSON.parse(request!.body)).toMatchObject({ type: "webhook.test", data: { endpoint: created.json.id } })
    const log = await pollUntil(
      () => user.browser.request("GET", `/v1/dashboard/webhook_endpoints/${created.json.id}/deliveries`),
      (r) => r.json?.data?.[0]?.status === "succeeded",
      10_000
    )
    expect(log.json.data[0].attempts[0]).toMatchObject({ status_code: 200, error: null })

    const bad = await user.browser.request("POST", "/v1/dashboard/webhook_endpoints", { body: { url: "ftp://example.com", events: ["job.failed"] } })
    await expectProblem(server, bad, 422, "invalid_request")
    expect((await user.browser.request("DELETE", `/v1/dashboard/webhook_endpoints/${created.json.id}`)).status).toBe(204)
    expect((await user.browser.request("GET", "/v1/dashboard/webhook_endpoints")).json.data).toEqual([])
    await expectProblem(server, await user.browser.request("POST", `/v1/dashboard/webhook_endpoints/${created.json.id}/test`), 404, "not_found")
  })
})
