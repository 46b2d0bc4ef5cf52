/**
 * Logs (issue 15): the whole flow at debug level, with metrics and traces on, and no secret
 * in any log line: not the API keys, a signed URL's signature, the session cookie or CSRF
 * token, the password, the e-mail verification token, nor the metrics token. And one line a
 * request with its request id, route template, status, duration, account and key ids.
 */
import { LogLevel, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { PASSWORD, verifiedUser } from "./browser.js"
import { call, createFile, denoise, putUpload, complete, tone, waitForFile, waitForJob } from "./helpers.js"

const METRICS_TOKEN = "metrics-secret-token-9876543210"

describe("no secret in any log line", () => {
  const logs: Array<string> = []
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({
      worker: true,
      workerOptions: { pollInterval: "50 millis" },
      logLevel: LogLevel.Debug,
      logs,
      accountSettings: { signupsPerHourPerIp: 1_000 },
      observability: { metricsToken: Option.some(Redacted.make(METRICS_TOKEN)) }
    })
  }, 60_000)
  afterAll(() => server?.close())

  it("signup, keys, upload through a signed URL, a live job, its download link, metrics: none of their secrets is logged", async () => {
    const secrets: Array<string> = [PASSWORD, METRICS_TOKEN]
    const user = await verifiedUser(server)
    secrets.push(user.verifyToken, user.browser.session!, user.browser.csrf!)
    const { liveKey, testKey } = await server.createAccount(5_000_000)
    secrets.push(liveKey, testKey)

    const bytes = tone(1)
    const created = await createFile(server, liveKey, { size_bytes: bytes.length })
    expect(created.status, created.text).toBe(201)
    const uploadUrl = new URL(created.json.upload.url)
    for (const value of uploadUrl.searchParams.values()) if (value.length >= 16) secrets.push(value)
    for (const [name, value] of Object.entries<string>(created.json.upload.headers ?? {})) {
      if (/signature|authorization|token/i.test(name)) secrets.push(value)
    }
    await (await putUpload(created.json.upload, bytes)).arrayBuffer()
    expect((await complete(server, liveKey, created.json.id)).status).toBe(202)
    expect((await waitForFile(server, liveKey, created.json.id)).json.status).toBe("ready")
    const job = await denoise(server, liveKey, { file: created.json.id })
    expect(job.status, job.text).toBe(202)
    expect((await waitForJob(server, liveKey, job.json.id)).json.status).toBe("succeeded")
    const output = await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: liveKey })
    expect(output.status, output.text).toBe(200)
    const downloadUrl = new URL(output.json.url)
    for (const value of downloadUrl.searchParams.values()) if (value.length >= 16) secrets.push(value)
    expect((await fetch(downloadUrl)).status).toBe(200)
    expect((await call(server, "GET", "/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200)
    // a wrong key is not logged either
    expect((await call(server, "GET", "/v1/me", { key: `${liveKey}x` })).status).toBe(401)

    // signed URLs carry at least one secret each
    expect(secrets.length).toBeGreaterThanOrEqual(9)
    expect(logs.length).toBeGreaterThan(20)
    expect(logs.some((line) => line.startsWith("DEBUG"))).toBe(true)
    for (const line of logs) {
      for (const secret of secrets) expect(line.includes(secret), `a secret in: ${line}`).toBe(false)
    }

    // one line per request, with what an operator needs and by template
    const jobLine = logs.find((line) => line.startsWith("INFO request") && line.includes("route=/v1/jobs/:job_id/output"))
    expect(jobLine).toBeDefined()
    expect(jobLine).toMatch(/requestId=req_\w+/)
    expect(jobLine).toMatch(/status=200/)
    expect(jobLine).toMatch(/durationMs=\d/)
    expect(jobLine).toMatch(/accountId=acct_\w+/)
    expect(jobLine).toMatch(/keyId=key_\w+/)
    expect(jobLine).not.toContain(job.json.id)
  }, 120_000)
})
