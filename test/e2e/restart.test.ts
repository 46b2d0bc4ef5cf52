/**
 * The embedded default is persistent: a server restarted on the same DATA_DIR keeps accounts,
 * keys, files, jobs, lots and the ledger (issue: Postgres persistence). Real processes, real
 * `npm start` entry point, the embedded PostgreSQL in DATA_DIR/postgres; the operator CLI acts
 * on the same data with the server running (a guest of its database) and without it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { call, credits, denoise, readyFile, tone, waitForJob } from "./helpers.js"
import { startProcess, runCli, waitForHealth, type HushProcess } from "../support/process.js"
import { freePort, type TestServer } from "../support/server.js"

describe("restart on the embedded default", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hush-restart-"))
  let server: HushProcess | undefined
  afterAll(async () => {
    await server?.stop("SIGKILL")
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("keeps accounts, keys, files, jobs, lots and the ledger", async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const env = { PORT: String(port), DATA_DIR: dataDir, PUBLIC_BASE_URL: baseUrl, HUSH_STORE: "embedded", HUSH_WORKER: "off" }
    const api = { baseUrl } as TestServer

    server = startProcess("apps/api/server/main.ts", env)
    await waitForHealth(baseUrl, server)
    const account = await runCli(["admin", "account", "create", "--email", "restart@example.com", "--credit-micros", "3000000"], env)
    const extra = await runCli(["admin", "key", "create", "--account", account.account_id, "--mode", "live", "--scopes", "jobs:read"], env)

    // test mode: a file and a succeeded job
    const testFile = await readyFile(api, account.test_key, tone(2))
    const testJob = await denoise(api, account.test_key, { file: testFile })
    expect((await waitForJob(api, account.test_key, testJob.json.id)).json.status).toBe("succeeded")
    // live mode: one job canceled (hold then release in the ledger), one left holding its cost
    const liveFile = await readyFile(api, account.live_key, tone(3))
    const canceled = await denoise(api, account.live_key, { file: liveFile })
    expect((await call(api, "POST", `/v1/jobs/${canceled.json.id}/cancel`, { key: account.live_key })).status).toBe(200)
    const held = await denoise(api, account.live_key, { file: liveFile })
    expect(held.status).toBe(202)

    const snapshot = async () => ({
      me: (await call(api, "GET", "/v1/me", { key: account.live_key })).json,
      extraKey: (await call(api, "GET", "/v1/jobs", { key: extra.key })).status,
      credits: await credits(api, account.live_key),
      liveJobs: (await call(api, "GET", "/v1/jobs", { key: account.live_key })).json,
      testJobs: (await call(api, "GET", "/v1/jobs", { key: account.test_key })).json,
      liveFile: (await call(api, "GET", `/v1/files/${liveFile}`, { key: account.live_key })).json,
      testFile: (await call(api, "GET", `/v1/files/${testFile}`, { key: account.test_key })).json,
      output: (await call(api, "GET", `/v1/jobs/${testJob.json.id}/output`, { key: account.test_key })).json.filename
    })
    const before = await snapshot()
    expect(before.credits).toMatchObject({ balance_micros: 3_000_000, reserved_micros: 1_000 })
    expect(before.liveJobs.data.map((j: { status: string }) => j.status)).toEqual(["queued", "canceled"])

    expect(await server.stop("SIGTERM")).toBe(0)
    server = startProcess("apps/api/server/main.ts", env)
    await waitForHealth(baseUrl, server)

    const after = await snapshot()
    expect(after).toEqual(before)
    // the ledger still adds up: the held job can be canceled and its credit comes back
    expect((await call(api, "POST", `/v1/jobs/${held.json.id}/cancel`, { key: account.live_key })).status).toBe(200)
    expect(await credits(api, account.live_key)).toMatchObject({ balance_micros: 3_000_000, reserved_micros: 0, available_micros: 3_000_000 })
    // and an operator grant while it runs lands on the same data
    await runCli(["admin", "credit", "grant", "--account", account.account_id, "--micros", "1000000"], env)
    expect((await credits(api, account.live_key)).balance_micros).toBe(4_000_000)
    // and one with no server running starts the database itself, for the command
    expect(await server.stop("SIGTERM")).toBe(0)
    await runCli(["admin", "credit", "grant", "--account", account.account_id, "--micros", "500000"], env)
    server = startProcess("apps/api/server/main.ts", env)
    await waitForHealth(baseUrl, server)
    expect((await credits(api, account.live_key)).balance_micros).toBe(4_500_000)
  }, 180_000)
})
