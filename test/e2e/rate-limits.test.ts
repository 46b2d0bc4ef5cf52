/**
 * Token buckets (spec, Limits; decisions.md): creates 120/min and reads 1,200/min per key,
 * public 120/min per IP, health unlimited; and the upload quotas (429 quota_exceeded).
 * Time is frozen while a bucket is drained, so refill cannot blur the counts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { makeAdjustableClock } from "../support/clock.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, complete, createFile, expectProblem, putUpload, tone, uploadFile, waitForFile } from "./helpers.js"

const rateHeaders = (reply: { headers: Headers }) => ({
  limit: reply.headers.get("ratelimit-limit"),
  remaining: reply.headers.get("ratelimit-remaining"),
  reset: reply.headers.get("ratelimit-reset")
})

describe("rate limits", () => {
  const clock = makeAdjustableClock()
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ clock })
  })
  afterEach(() => clock.reset())
  afterAll(async () => {
    await server.close()
  })

  it("allows 120 creates a minute per key, then 429 rate_limited with Retry-After", async () => {
    const account = await server.createAccount()
    clock.freeze()
    const cancel = (key: string) => call(server, "POST", "/v1/jobs/job_nosuchjob/cancel", { key })
    for (let i = 1; i <= 120; i++) {
      const reply = await cancel(account.liveKey)
      expect(reply.status).toBe(404)
      expect(rateHeaders(reply)).toMatchObject({ limit: "120", remaining: String(120 - i) })
    }
    const limited = await cancel(account.liveKey)
    const problem = await expectProblem(server, limited, 429, "rate_limited")
    expect(limited.headers.get("retry-after")).toBe("1")
    expect(problem.retry_after).toBe(1)
    expect(rateHeaders(limited)).toEqual({ limit: "120", remaining: "0", reset: "60" })
    // every create endpoint draws on the same bucket
    await expectProblem(server, await createFile(server, account.liveKey, { size_bytes: 10 }), 429, "rate_limited")
    await expectProblem(server, await call(server, "DELETE", "/v1/files/file_x", { key: account.liveKey }), 429, "rate_limited")
    await expectProblem(server, await call(server, "POST", "/v1/audio/denoise", { key: account.liveKey, body: { file: "file_x" } }), 429, "rate_limited")
    await expectProblem(server, await call(server, "POST", "/v1/files/file_x/complete", { key: account.liveKey }), 429, "rate_limited")
    // reads have their own bucket; the test key has its own buckets
    const me = await call(server, "GET", "/v1/me", { key: account.liveKey })
    expect(me.status).toBe(200)
    expect(rateHeaders(me)).toMatchObject({ limit: "1200", remaining: "1199" })
    expect((await cancel(account.testKey)).status).toBe(404)
    // another account is not affected
    const other = await server.createAccount()
    expect((await cancel(other.liveKey)).status).toBe(404)
    // the bucket refills continuously: 2 tokens a second
    clock.advance(1_000)
    expect((await cancel(account.liveKey)).status).toBe(404)
    expect((await cancel(account.liveKey)).status).toBe(404)
    await expectProblem(server, await cancel(account.liveKey), 429, "rate_limited")
  })

  it("allows 1,200 reads a minute per key", async () => {
    const account = await server.createAccount()
    clock.freeze()
    const reads = ["/v1/me", "/v1/credits", "/v1/jobs", "/v1/files/file_x", "/v1/jobs/job_x", "/v1/jobs/job_x/output"]
    // time stands still, so the order of these does not matter: send them 50 at a time
    for (let batch = 0; batch < 24; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) => call(server, "GET", reads[(batch * 50 + i) % reads.length]!, { key: account.liveKey }))
      )
      for (const reply of replies) expect(reply.status).not.toBe(429)
    }
    const limited = await call(server, "GET", "/v1/me", { key: account.liveKey })
    await expectProblem(server, limited, 429, "rate_limited")
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(rateHeaders(limited)).toMatchObject({ limit: "1200", remaining: "0" })
  })

  it("limits the public endpoints per address, never health", async () => {
    clock.freeze()
    for (let i = 0; i < 40; i++) {
      for (const path of ["/v1/models", "/v1/status", "/v1/models/xiph/rnnoise"]) {
        const reply = await call(server, "GET", path)
        expect(reply.status).toBe(200)
        expect(rateHeaders(reply).limit).toBe("120")
      }
    }
    const limited = await call(server, "GET", "/v1/models")
    await expectProblem(server, limited, 429, "rate_limited")
    expect(limited.headers.get("retry-after")).toBe("1")
    await expectProblem(server, await call(server, "GET", "/v1/status"), 429, "rate_limited")
    for (let i = 0; i < 5; i++) {
      const health = await call(server, "GET", "/v1/health")
      expect(health.status).toBe(200)
      expect(rateHeaders(health)).toEqual({ limit: null, remaining: null, reset: null })
    }
    // keyed calls do not use the public bucket
    const account = await server.createAccount()
    expect((await call(server, "GET", "/v1/me", { key: account.liveKey })).status).toBe(200)
    clock.advance(60_000)
    expect((await call(server, "GET", "/v1/models")).status).toBe(200)
  })
})

describe("upload quotas", () => {
  const clock = makeAdjustableClock()
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ clock, limits: { validationsPerHour: 3 } })
  })
  afterEach(() => clock.reset())
  afterAll(async () => {
    await server.close()
  })

  it("allows 10 open uploads per account and mode (429 quota_exceeded for the 11th)", async () => {
    const account = await server.createAccount()
    const ids: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const created = await createFile(server, account.liveKey, { size_bytes: 100 })
      expect(created.status).toBe(201)
      ids.push(created.json.id)
    }
    const refused = await expectProblem(server, await createFile(server, account.liveKey, { size_bytes: 100 }), 429, "quota_exceeded")
    expect(refused.detail).toContain("10")
    // the test mode has its own count
    expect((await createFile(server, account.testKey, { size_bytes: 100 })).status).toBe(201)
    // deleting one frees a place
    expect((await call(server, "DELETE", `/v1/files/${ids[0]}`, { key: account.liveKey })).status).toBe(204)
    expect((await createFile(server, account.liveKey, { size_bytes: 100 })).status).toBe(201)
    await expectProblem(server, await createFile(server, account.liveKey, { size_bytes: 100 }), 429, "quota_exceeded")
  })

  it("allows a number of validations per hour, then 429 quota_exceeded with Retry-After", async () => {
    const account = await server.createAccount()
    const audio = tone(1)
    for (let i = 0; i < 3; i++) await uploadFile(server, account.testKey, audio)
    const fourth = await createFile(server, account.testKey, { size_bytes: audio.length })
    expect((await putUpload(fourth.json.upload, audio)).status).toBe(200)
    const refused = await complete(server, account.testKey, fourth.json.id)
    await expectProblem(server, refused, 429, "quota_exceeded")
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(3_500)
    expect(retryAfter).toBeLessThanOrEqual(3_600)
    expect((await call(server, "GET", `/v1/files/${fourth.json.id}`, { key: account.testKey })).json.status).toBe("uploading")
    // the live mode counts apart
    await uploadFile(server, account.liveKey, audio)
    // an hour later it completes
    clock.advance(3_600_000)
    expect((await complete(server, account.testKey, fourth.json.id)).status).toBe(202)
  })

  it("keeps counting validations of files deleted since: deleting does not buy more", async () => {
    const account = await server.createAccount()
    const audio = tone(1)
    for (let i = 0; i < 3; i++) {
      const id = await uploadFile(server, account.testKey, audio)
      await waitForFile(server, account.testKey, id)
      expect((await call(server, "DELETE", `/v1/files/${id}`, { key: account.testKey })).status).toBe(204)
    }
    const fourth = await createFile(server, account.testKey, { size_bytes: audio.length })
    expect((await putUpload(fourth.json.upload, audio)).status).toBe(200)
    await expectProblem(server, await complete(server, account.testKey, fourth.json.id), 429, "quota_exceeded")
    clock.advance(3_600_000)
    expect((await complete(server, account.testKey, fourth.json.id)).status).toBe(202)
  })
})
