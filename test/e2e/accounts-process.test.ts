/**
 * Self-serve accounts in the real `npm start` process (its own composition of layers): signup
 * over HTTP, the verification mail read with `admin mail list` (the CLI, another process,
 * reading the dev outbox in DATA_DIR), verification, a live key; and the operator's
 * `admin account create` (the CLI on the server's embedded database) on the same users.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { Browser, PASSWORD } from "./browser.js"
import { call } from "./helpers.js"
import { runCli, startProcess, waitForHealth, type HushProcess } from "../support/process.js"
import { freePort, type TestServer } from "../support/server.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

describe("accounts in the npm start process", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hush-accounts-"))
  let server: HushProcess | undefined
  afterAll(async () => {
    await server?.stop("SIGKILL")
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("signup → `admin mail list` → verify → live key → /v1/me; operator accounts share the addresses", async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const env = { PORT: String(port), DATA_DIR: dataDir, PUBLIC_BASE_URL: baseUrl, HUSH_WORKER: "off" }
    const api = { baseUrl, dataDir } as TestServer

    server = startProcess("apps/api/server/main.ts", env)
    await waitForHealth(baseUrl, server)
    const browser = new Browser(api)
    const email = "Person@Example.com"
    expect((await browser.request("POST", "/v1/auth/signup", { body: { email, password: PASSWORD, accept_terms: true } })).status).toBe(201)

    const listed = await runCli(["admin", "mail", "list", "--to", "person@example.com"], env)
    expect(listed).toEqual([{
      id: expect.stringMatching(/^mail_[a-z2-7]+$/),
      to: email,
      subject: expect.stringMatching(/verify/i),
      text: expect.stringContaining(`${baseUrl}/verify-email?token=`),
      links: [expect.stringMatching(new RegExp(`^${baseUrl}/verify-email\\?token=[a-z2-7]{52}$`))],
      sent_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/)
    }])
    // without --json: one block per message with its links
    const { stdout } = await promisify(execFile)(join(ROOT, "node_modules/.bin/tsx"), ["apps/cli/main.ts", "admin", "mail", "list"], {
      cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000
    })
    expect(stdout).toContain(`to ${email}`)
    expect(stdout).toContain(listed[0].links[0])

    const token = new URL(listed[0].links[0]).searchParams.get("token")
    expect((await browser.request("POST", "/v1/auth/email/verify", { body: { token } })).status).toBe(200)
    const key = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live", name: "survivor" } })
    expect(key.status, key.text).toBe(201)

    const session = await browser.request("GET", "/v1/auth/session")
    expect(session.status, session.text).toBe(200)
    expect(session.json.user).toMatchObject({ email, verified: true })
    expect((await call(api, "GET", "/v1/me", { key: key.json.secret })).status).toBe(200)
    expect((await new Browser(api).request("POST", "/v1/auth/login", { body: { email: "person@example.com", password: PASSWORD } })).status).toBe(200)
    // the operator's accounts take their address from the same users
    await expect(runCli(["admin", "account", "create", "--email", "PERSON@example.com"], env)).rejects.toThrow(/already exists/)
  }, 300_000) // each CLI call is a process of its own: minutes on a loaded machine
})
