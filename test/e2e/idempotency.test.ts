/**
 * `Idempotency-Key` on the POSTs that create or change something (decisions.md, Requests).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { grantCredit } from "../../core/services/accounts.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, createFile, credits, denoise, expectProblem, putUpload, readyFile, tone } from "./helpers.js"

describe("Idempotency-Key", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  const jobsOf = async (key: string) => (await call(server, "GET", "/v1/jobs?limit=100", { key })).json.data as Array<{ id: string }>

  it("replays a job creation: same status and body, Idempotent-Replayed, nothing new", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const first = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "create-job-1" })
    expect(first.status).toBe(202)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    for (let i = 0; i < 3; i++) {
      const replay = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "create-job-1" })
      expect(replay.status).toBe(202)
      expect(replay.text).toBe(first.text)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.headers.get("content-type")).toMatch(/^application\/json/)
      // a new request id all the same; Original-Request-Id names the first
      expect(replay.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"))
      expect(replay.headers.get("original-request-id")).toBe(first.headers.get("x-request-id"))
    }
    expect((await jobsOf(liveKey)).map((j) => j.id)).toEqual([first.json.id])
    expect((await credits(server, liveKey)).reserved_micros).toBe(1_000)
  })

  it("replays file creation, complete and cancel", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const audio = tone(1)
    const created = await createFile(server, liveKey, { size_bytes: audio.length }, { "idempotency-key": "file-a" })
    const again = await createFile(server, liveKey, { size_bytes: audio.length }, { "idempotency-key": "file-a" })
    expect(again.status).toBe(201)
    expect(again.text).toBe(created.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")

    expect((await putUpload(created.json.upload, audio)).status).toBe(200)
    const path = `/v1/files/${created.json.id}/complete`
    const completed = await call(server, "POST", path, { key: liveKey, headers: { "idempotency-key": "complete-a" } })
    expect(completed.status).toBe(202)
    const completedAgain = await call(server, "POST", path, { key: liveKey, headers: { "idempotency-key": "complete-a" } })
    expect(completedAgain.status).toBe(202)
    expect(completedAgain.text).toBe(completed.text)
    expect(completedAgain.headers.get("idempotent-replayed")).toBe("true")

    const { waitForFile } = await import("./helpers.js")
    await waitForFile(server, liveKey, created.json.id)
    const job = await denoise(server, liveKey, { file: created.json.id })
    const cancelPath = `/v1/jobs/${job.json.id}/cancel`
    const canceled = await call(server, "POST", cancelPath, { key: liveKey, headers: { "idempotency-key": "cancel-a" } })
    expect(canceled.status).toBe(200)
    const canceledAgain = await call(server, "POST", cancelPath, { key: liveKey, headers: { "idempotency-key": "cancel-a" } })
    // without the key a second cancel is a 409; with it, the first answer
    expect(canceledAgain.status).toBe(200)
    expect(canceledAgain.text).toBe(canceled.text)
    expect(canceledAgain.headers.get("idempotent-replayed")).toBe("true")
    await expectProblem(server, await call(server, "POST", cancelPath, { key: liveKey }), 409, "job_not_cancelable")
  })

  it("refuses the same key with another body or another path (409 idempotency_key_reused)", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const first = await createFile(server, liveKey, { size_bytes: 100 }, { "idempotency-key": "shared" })
    expect(first.status).toBe(201)
    const otherBody = await createFile(server, liveKey, { size_bytes: 101 }, { "idempotency-key": "shared" })
    const problem = await expectProblem(server, otherBody, 409, "idempotency_key_reused")
    expect(problem.detail).toContain("shared")
    const otherPath = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "shared" })
    await expectProblem(server, otherPath, 409, "idempotency_key_reused")
    expect(await jobsOf(liveKey)).toEqual([])
    expect((await credits(server, liveKey)).reserved_micros).toBe(0)
    const otherFile = await call(server, "POST", `/v1/files/${fileId}/complete`, { key: liveKey, headers: { "idempotency-key": "shared" } })
    await expectProblem(server, otherFile, 409, "idempotency_key_reused")
    // the original is still replayed
    const replay = await createFile(server, liveKey, { size_bytes: 100 }, { "idempotency-key": "shared" })
    expect(replay.text).toBe(first.text)
  })

  it("scopes keys to account and mode", async () => {
    const account = await server.createAccount(1_000_000)
    const other = await server.createAccount(1_000_000)
    const live = await createFile(server, account.liveKey, { size_bytes: 100 }, { "idempotency-key": "scoped" })
    const test = await createFile(server, account.testKey, { size_bytes: 100 }, { "idempotency-key": "scoped" })
    const foreign = await createFile(server, other.liveKey, { size_bytes: 100 }, { "idempotency-key": "scoped" })
    for (const reply of [test, foreign]) {
      expect(reply.status).toBe(201)
      expect(reply.headers.get("idempotent-replayed")).toBeNull()
      expect(reply.json.id).not.toBe(live.json.id)
    }
    expect((await call(server, "GET", `/v1/files/${test.json.id}`, { key: account.testKey })).json.mode).toBe("test")
    // and another body under the same key in another scope is no conflict
    expect((await createFile(server, other.testKey, { size_bytes: 555 }, { "idempotency-key": "scoped" })).status).toBe(201)
  })

  it("records a 4xx answer and replays it", async () => {
    const account = await server.createAccount(500)
    const fileId = await readyFile(server, account.liveKey)
    const first = await denoise(server, account.liveKey, { file: fileId }, { "idempotency-key": "poor" })
    await expectProblem(server, first, 402, "insufficient_credit")
    await server.run(grantCredit(account.account.id, 1_000_000))
    const replay = await denoise(server, account.liveKey, { file: fileId }, { "idempotency-key": "poor" })
    expect(replay.status).toBe(402)
    expect(replay.text).toBe(first.text)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    // the replayed body is the first one, request_id included: Original-Request-Id says whose
    expect(replay.json.request_id).toBe(first.headers.get("x-request-id"))
    expect(replay.headers.get("original-request-id")).toBe(replay.json.request_id)
    expect(replay.headers.get("x-request-id")).not.toBe(replay.json.request_id)
    // a new key runs afresh
    expect((await denoise(server, account.liveKey, { file: fileId }, { "idempotency-key": "rich" })).status).toBe(202)
  })

  it("does not record a 429: the retry runs afresh", async () => {
    const { testKey } = await server.createAccount()
    const open: Array<string> = []
    for (let i = 0; i < 10; i++) open.push((await createFile(server, testKey, { size_bytes: 10 })).json.id)
    const refused = await createFile(server, testKey, { size_bytes: 10 }, { "idempotency-key": "eleventh" })
    await expectProblem(server, refused, 429, "quota_exceeded")
    expect((await call(server, "DELETE", `/v1/files/${open[0]}`, { key: testKey })).status).toBe(204)
    const retried = await createFile(server, testKey, { size_bytes: 10 }, { "idempotency-key": "eleventh" })
    expect(retried.status).toBe(201)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
  })

  it("lets concurrent requests with one key create one job", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => denoise(server, liveKey, { file: fileId }, { "idempotency-key": "race" }))
    )
    for (const reply of replies) expect([202, 409]).toContain(reply.status)
    const created = replies.filter((r) => r.status === 202)
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(new Set(created.map((r) => r.json.id)).size).toBe(1)
    expect(created.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    for (const conflict of replies.filter((r) => r.status === 409)) await expectProblem(server, conflict, 409, "idempotency_key_reused")
    expect(await jobsOf(liveKey)).toHaveLength(1)
    expect((await credits(server, liveKey)).reserved_micros).toBe(1_000)
  })

  it("refuses a key over 255 characters (400) and runs nothing", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const refused = await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "x".repeat(256) })
    await expectProblem(server, refused, 400, "invalid_request")
    expect(await jobsOf(liveKey)).toEqual([])
    await expectProblem(server, await denoise(server, liveKey, { file: fileId }, { "idempotency-key": "" }), 400, "invalid_request")
    expect(await jobsOf(liveKey)).toEqual([])
  })
})
