/**
 * Jobs over HTTP: live holds and cancel, 402 with nothing created, the listing (limits,
 * filters, stable cursor paging), and the job-state errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import {
  call, createFile, credits, denoise, expectJobShape, expectProblem, readyFile, sleep, tone, waitForJob
} from "./helpers.js"

describe("jobs, live mode", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("holds the exact cost, stays queued without a worker, and cancel releases the hold", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey, tone(12))
    const before = await credits(server, liveKey)
    expect(before).toEqual({ balance_micros: 1_000_000, reserved_micros: 0, available_micros: 1_000_000, currency: "usd", display: "$1.00" })

    const created = await denoise(server, liveKey, { file: fileId, model: "xiph/rnnoise" })
    expect(created.status).toBe(202)
    expectJobShape(created.json)
    const job = created.json
    expect(job).toMatchObject({
      status: "queued", progress: 0, mode: "live", model: "xiph/rnnoise", output: null, error: null,
      started_at: null, finished_at: null
    })
    // 12 s of audio, over the 10 s minimum: 12 × 100 micros
    expect(job.input.duration_seconds).toBeCloseTo(12, 1)
    expect(job.receipt).toEqual({
      billable_seconds: 12, minimum_applied: false, unit_price_micros: 100, pricing_version: 1,
      charged_micros: null, ledger_txn_id: null
    })
    expect(job.cost).toEqual({ estimated_micros: 1_200, charged_micros: null, display: "$0.0012" })

    const held = await credits(server, liveKey)
    expect(held).toEqual({ balance_micros: 1_000_000, reserved_micros: 1_200, available_micros: 998_800, currency: "usd", display: "$0.9988" })
    const me = await call(server, "GET", "/v1/me", { key: liveKey })
    expect(me.json.balance).toEqual(held)

    // no worker runs in this harness: the job stays queued
    await sleep(200)
    const still = await call(server, "GET", `/v1/jobs/${job.id}`, { key: liveKey })
    expect(still.status).toBe(200)
    expectJobShape(still.json)
    expect(still.json.status).toBe("queued")

    const canceled = await call(server, "POST", `/v1/jobs/${job.id}/cancel`, { key: liveKey })
    expect(canceled.status).toBe(200)
    expectJobShape(canceled.json)
    expect(canceled.json.status).toBe("canceled")
    expect(canceled.json.cost.charged_micros).toBeNull()
    expect(canceled.json.finished_at).not.toBeNull()
    expect(await credits(server, liveKey)).toEqual(before)

    // canceling again: the job is no longer queued
    await expectProblem(server, await call(server, "POST", `/v1/jobs/${job.id}/cancel`, { key: liveKey }), 409, "job_not_cancelable")
  })

  it("applies the 10-second minimum", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey, tone(1))
    const job = await denoise(server, liveKey, { file: fileId })
    expect(job.json.receipt).toMatchObject({ billable_seconds: 10, minimum_applied: true })
    expect(job.json.cost.estimated_micros).toBe(1_000)
    expect((await credits(server, liveKey)).reserved_micros).toBe(1_000)
  })

  it("answers 402 insufficient_credit when short, creating and holding nothing", async () => {
    const { liveKey } = await server.createAccount(999)
    const fileId = await readyFile(server, liveKey, tone(1))
    const before = await credits(server, liveKey)
    const refused = await denoise(server, liveKey, { file: fileId })
    await expectProblem(server, refused, 402, "insufficient_credit")
    expect(await credits(server, liveKey)).toEqual(before)
    const list = await call(server, "GET", "/v1/jobs", { key: liveKey })
    expect(list.json).toEqual({ data: [], next_cursor: null })
    // the file is not in use: it can be deleted
    expect((await call(server, "DELETE", `/v1/files/${fileId}`, { key: liveKey })).status).toBe(204)
  })

  it("holds concurrent jobs only up to the available credit", async () => {
    const { liveKey } = await server.createAccount(3_500)
    const fileId = await readyFile(server, liveKey, tone(1))
    const replies = await Promise.all(Array.from({ length: 6 }, () => denoise(server, liveKey, { file: fileId })))
    expect(replies.filter((r) => r.status === 202)).toHaveLength(3)
    expect(replies.filter((r) => r.status === 402)).toHaveLength(3)
    expect(await credits(server, liveKey)).toMatchObject({ balance_micros: 3_500, reserved_micros: 3_000, available_micros: 500 })
  })

  it("refuses to delete a file a queued job uses (409 file_in_use), and deletes it after cancel (204)", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const job = await denoise(server, liveKey, { file: fileId })
    await expectProblem(server, await call(server, "DELETE", `/v1/files/${fileId}`, { key: liveKey }), 409, "file_in_use")
    expect((await call(server, "GET", `/v1/files/${fileId}`, { key: liveKey })).json.status).toBe("ready")
    expect((await call(server, "POST", `/v1/jobs/${job.json.id}/cancel`, { key: liveKey })).status).toBe(200)
    expect((await call(server, "DELETE", `/v1/files/${fileId}`, { key: liveKey })).status).toBe(204)
  })

  it("has no output before success (409 job_not_succeeded)", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const job = await denoise(server, liveKey, { file: fileId })
    await expectProblem(server, await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: liveKey }), 409, "job_not_succeeded")
    await call(server, "POST", `/v1/jobs/${job.json.id}/cancel`, { key: liveKey })
    await expectProblem(server, await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: liveKey }), 409, "job_not_succeeded")
  })

  it("refuses a job on a file that is not ready: uploading, validating or rejected (409 file_not_ready)", async () => {
    const { liveKey, testKey } = await server.createAccount(1_000_000)
    const uploading = await createFile(server, liveKey, { size_bytes: 1000 })
    await expectProblem(server, await denoise(server, liveKey, { file: uploading.json.id }), 409, "file_not_ready")
    const { uploadFile, waitForFile, junk } = await import("./helpers.js")
    const rejected = await uploadFile(server, testKey, junk(2048), { content_type: "audio/mpeg" })
    expect((await waitForFile(server, testKey, rejected)).json.status).toBe("rejected")
    await expectProblem(server, await denoise(server, testKey, { file: rejected }), 409, "file_not_ready")
  })

  it("refuses unknown models (422 model_not_available)", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const refused = await expectProblem(server, await denoise(server, liveKey, { file: fileId, model: "acme/nope" }), 422, "model_not_available")
    expect(refused.detail).toContain("acme/nope")
    expect((await credits(server, liveKey)).reserved_micros).toBe(0)
  })

  it("cannot cancel a succeeded job (409 job_not_cancelable)", async () => {
    const { testKey } = await server.createAccount()
    const fileId = await readyFile(server, testKey)
    const job = await denoise(server, testKey, { file: fileId })
    expect((await waitForJob(server, testKey, job.json.id)).json.status).toBe("succeeded")
    await expectProblem(server, await call(server, "POST", `/v1/jobs/${job.json.id}/cancel`, { key: testKey }), 409, "job_not_cancelable")
  })
})

describe("jobs: listing", () => {
  let server: TestServer
  let liveKey: string
  let fileId: string
  const created: Array<string> = []

  beforeAll(async () => {
    server = await startTestServer()
    const account = await server.createAccount(10_000_000)
    liveKey = account.liveKey
    fileId = await readyFile(server, liveKey)
    for (let i = 0; i < 45; i++) {
      const job = await denoise(server, liveKey, { file: fileId })
      expect(job.status).toBe(202)
      created.push(job.json.id)
      await sleep(2) // distinct creation times, so "newest first" is the order of creation
    }
  })
  afterAll(async () => {
    await server.close()
  })

  const list = (query = "") => call(server, "GET", `/v1/jobs${query}`, { key: liveKey })

  it("pages 20 by default, newest first, with the spec's page shape", async () => {
    const page = await list()
    expect(page.status).toBe(200)
    expect(Object.keys(page.json).sort()).toEqual(["data", "next_cursor"])
    expect(page.json.data).toHaveLength(20)
    page.json.data.forEach(expectJobShape)
    expect(typeof page.json.next_cursor).toBe("string")
    const times = page.json.data.map((j: any) => Date.parse(j.created_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    // the newest job is the last one created
    expect(page.json.data[0].id).toBe(created[created.length - 1])
  })

  it("takes limit 1 to 100", async () => {
    expect((await list("?limit=1")).json.data).toHaveLength(1)
    const all = await list("?limit=100")
    expect(all.json.data).toHaveLength(45)
    expect(all.json.next_cursor).toBeNull()
    for (const bad of ["0", "101", "-1", "1.5", "ten", ""]) {
      const refused = await expectProblem(server, await list(`?limit=${bad}`), 400, "invalid_request")
      expect(refused.detail).toContain("limit")
    }
  })

  it("pages through every job once, while new jobs arrive only at the top", async () => {
    const seen: Array<string> = []
    const added: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: any = await list(`?limit=10${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
      expect(page.status, page.text).toBe(200)
      seen.push(...page.json.data.map((j: any) => j.id))
      cursor = page.json.next_cursor
      pages++
      // new jobs between pages
      await sleep(3)
      const extra = await denoise(server, liveKey, { file: fileId })
      added.push(extra.json.id)
    } while (cursor !== null)
    expect(pages).toBe(5)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).toEqual([...created].reverse())
    for (const id of added) expect(seen).not.toContain(id)
    // a fresh listing shows the new ones first
    const top = await list(`?limit=${added.length}`)
    expect(top.json.data.map((j: any) => j.id).sort()).toEqual([...added].sort())
    // cancel them to leave the account as it was for the other tests
    for (const id of added) await call(server, "POST", `/v1/jobs/${id}/cancel`, { key: liveKey })
  })

  it("filters by status and model", async () => {
    const canceledIds = created.slice(0, 3)
    for (const id of canceledIds) expect((await call(server, "POST", `/v1/jobs/${id}/cancel`, { key: liveKey })).status).toBe(200)
    const canceled = await list("?status=canceled&limit=100")
    expect(canceled.json.data.every((j: any) => j.status === "canceled")).toBe(true)
    for (const id of canceledIds) expect(canceled.json.data.map((j: any) => j.id)).toContain(id)
    const queued = await list("?status=queued&limit=100")
    expect(queued.json.data).toHaveLength(42)
    expect(queued.json.data.every((j: any) => j.status === "queued")).toBe(true)
    expect((await list("?status=succeeded")).json).toEqual({ data: [], next_cursor: null })
    expect((await list("?model=xiph/rnnoise&limit=100")).json.data.length).toBeGreaterThanOrEqual(45)
    expect((await list("?model=acme/other")).json).toEqual({ data: [], next_cursor: null })
    // a filtered listing pages within its filter
    const first = await list("?status=queued&limit=30")
    const second = await list(`?status=queued&limit=30&cursor=${encodeURIComponent(first.json.next_cursor)}`)
    expect(second.json.data).toHaveLength(12)
    expect(second.json.next_cursor).toBeNull()
    await expectProblem(server, await list("?status=bogus"), 400, "invalid_request")
    await expectProblem(server, await list(`?model=${"m".repeat(201)}`), 400, "invalid_request")
  })

  it("refuses a tampered cursor, one from another filter and one from another account (400)", async () => {
    const page = await list("?limit=5")
    const cursor: string = page.json.next_cursor
    const [payload, signature] = cursor.split(".")
    const flipped = signature![0] === "A" ? `B${signature!.slice(1)}` : `A${signature!.slice(1)}`
    for (const bad of [`${payload}.${flipped}`, `${payload}x.${signature}`, "garbage", cursor.slice(0, -2)]) {
      const refused = await expectProblem(server, await list(`?cursor=${encodeURIComponent(bad)}`), 400, "invalid_request")
      expect(refused.detail).toContain("cursor")
    }
    await expectProblem(server, await list(`?status=queued&cursor=${encodeURIComponent(cursor)}`), 400, "invalid_request")
    const other = await server.createAccount()
    const borrowed = await call(server, "GET", `/v1/jobs?cursor=${encodeURIComponent(cursor)}`, { key: other.liveKey })
    await expectProblem(server, borrowed, 400, "invalid_request")
    const otherMode = await call(server, "GET", `/v1/jobs?cursor=${encodeURIComponent(cursor)}`, { key: other.testKey })
    await expectProblem(server, otherMode, 400, "invalid_request")
  })
})
