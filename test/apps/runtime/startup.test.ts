/**
 * What `npm start` does with its settings and its data directory, as real processes
 * (docs/security.md, "Files and secrets"): a bad secret or a variable set but empty stops it
 * with a message naming the setting, and DATA_DIR with all it holds is its owner's alone.
 * And what a newcomer meets (decisions.md, Deployment settings): the start log names the
 * dashboard, /docs and the API on the address links use, `GET /` leads to the dashboard, and
 * in development each e-mail is logged with its link (never in production).
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Either, Logger } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { serviceAddresses } from "../../../apps/api/server/addresses.js"
import type { HushConfig } from "../../../apps/runtime/config.js"
import { layerMailer } from "../../../apps/runtime/layers.js"
import { loadOrCreateKeys, secureDataDir } from "../../../apps/runtime/secrets.js"
import { Mailer } from "../../../core/ports/mailer.js"
import { listOutbox } from "../../../adapters/mail/outbox.js"
import { complete, createFile, putUpload, readyFile, tone } from "../../e2e/helpers.js"
import { runCli, startProcess, waitForHealth } from "../../support/process.js"
import { freePort, type TestServer } from "../../support/server.js"

const workDir = mkdtempSync(join(tmpdir(), "hush-startup-"))
afterAll(() => rmSync(workDir, { recursive: true, force: true }))

let dirs = 0
const freshDir = () => join(workDir, `case-${++dirs}`)

/** A DATA_DIR holding `secrets.json` with this text. */
const withSecretsFile = (text: string) => {
  const dir = freshDir()
  mkdirSync(dir, { mode: 0o700 })
  writeFileSync(join(dir, "secrets.json"), text, { mode: 0o600 })
  return dir
}

const refusals: ReadonlyArray<readonly [string, () => Record<string, string>, RegExp]> = [
  ["HUSH_SIGNING_SECRET shorter than 32 characters", () => ({ HUSH_SIGNING_SECRET: "x".repeat(31) }), /HUSH_SIGNING_SECRET must be at least 32 characters \(it has 31\)/],
  ["a secrets.json that is not JSON", () => ({ DATA_DIR: withSecretsFile("{\"signingSecret\": ") }), /secrets\.json is not valid JSON/],
  ["a secrets.json with a short secret", () => ({ DATA_DIR: withSecretsFile(JSON.stringify({ signingSecret: "short", cursorKey: "k".repeat(64) })) }), /"signingSecret" must be a string of at least 32 characters/],
  ["DATABASE_URL set but empty", () => ({ DATABASE_URL: "" }), /DATABASE_URL is set but empty/],
  ["S3_BUCKET set but empty", () => ({ S3_BUCKET: " " }), /S3_BUCKET is set but empty/],
  ["REDIS_URL set but empty", () => ({ REDIS_URL: "" }), /REDIS_URL is set but empty/]
]

describe("start-up refuses bad secrets and empty URLs with a message naming them", () => {
  it.each(refusals)("%s", async (_, settings, message) => {
    const port = await freePort()
    const started = startProcess("apps/api/server/main.ts", {
      PORT: String(port), DATA_DIR: freshDir(), HUSH_STORE: "memory", HUSH_WORKER: "off", ...settings()
    })
    const code = await Promise.race([started.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 45_000))])
    if (code === "still running") await started.stop("SIGKILL")
    expect(code, started.output()).not.toBe(0)
    expect(code, started.output()).not.toBe("still running")
    expect(started.output()).toMatch(message)
    // it never served anything
    await expect(fetch(`http://127.0.0.1:${port}/v1/health`)).rejects.toThrow()
  }, 60_000)
})

/** Every entry under `root` whose mode lets its group or others in, as `path mode`. */
const openToOthers = (root: string): Array<string> => {
  const found: Array<string> = []
  const visit = (path: string) => {
    const stats = lstatSync(path)
    if ((stats.mode & 0o077) !== 0 && !stats.isSymbolicLink()) found.push(`${path} ${(stats.mode & 0o777).toString(8)}`)
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(root)
  return found
}

describe("DATA_DIR is owner-only", () => {
  it("npm start creates DATA_DIR and everything in it 0700 / 0600, whatever the umask it was started with", async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const dataDir = join(freshDir(), "nested", "data")
    // the embedded default: the database's own files (DATA_DIR/postgres) are checked too
    const env = { PORT: String(port), DATA_DIR: dataDir, PUBLIC_BASE_URL: baseUrl, HUSH_WORKER: "off" }
    // started with a umask that lets others read: the server must not rely on the operator's
    const previous = process.umask(0o022)
    const server = startProcess("apps/api/server/main.ts", env)
    process.umask(previous)
    try {
      await waitForHealth(baseUrl, server)
      const account = await runCli(["admin", "account", "create", "--email", "modes@example.com"], env)
      const api = { baseUrl } as TestServer
      // objects, open uploads, multipart-free staging: a ready file and an upload left open
      await readyFile(api, account.test_key, tone(1))
      const open = await createFile(api, account.test_key, { size_bytes: tone(2).length })
      await (await putUpload(open.json.upload, tone(2))).arrayBuffer()
      expect(statSync(join(dataDir, "secrets.json")).mode & 0o777).toBe(0o600)
      expect(statSync(dataDir).mode & 0o777).toBe(0o700)
      expect(openToOthers(dataDir)).toEqual([])
      expect((await complete(api, account.test_key, open.json.id)).status).toBe(202)
      expect(openToOthers(dataDir)).toEqual([])
    } finally {
      await server.stop("SIGTERM")
    }
  }, 120_000)

  it("an existing DATA_DIR open to others is tightened when it is Hush's, refused when it is not", () => {
    const previous = process.umask(0o022)
    afterAll(() => void process.umask(previous))
    const ours = withSecretsFile(JSON.stringify({ signingSecret: "s".repeat(64), cursorKey: "c".repeat(64) }))
    chmodSync(ours, 0o755)
    expect(Either.isRight(Effect.runSync(Effect.either(secureDataDir(ours))))).toBe(true)
    expect(statSync(ours).mode & 0o777).toBe(0o700)
    expect(Effect.runSync(loadOrCreateKeys(ours))).toEqual({ signingSecret: "s".repeat(64), cursorKey: "c".repeat(64) })

    const someoneElses = freshDir()
    mkdirSync(someoneElses, { mode: 0o755 })
    chmodSync(someoneElses, 0o755)
    const refused = Effect.runSync(Effect.either(secureDataDir(someoneElses)))
    expect(Either.isLeft(refused) && String(refused.left)).toMatch(/open to other users \(mode 0755\)/)
    expect(statSync(someoneElses).mode & 0o777).toBe(0o755)
  })
})

describe("what a newcomer meets at start", () => {
  it("the start log names the dashboard, /docs and the API at http://localhost:PORT; GET / redirects to the dashboard; a sign-up's e-mail is logged with its link", async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const dataDir = freshDir()
    // HUSH_ENV unset: development, the default
    const server = startProcess("apps/api/server/main.ts", { PORT: String(port), DATA_DIR: dataDir, HUSH_STORE: "memory", HUSH_WORKER: "off" })
    try {
      await waitForHealth(baseUrl, server)
      const local = `http://localhost:${port}`
      expect(server.output()).toContain(`Hush is ready (port ${port}): dashboard ${local}/dashboard  API reference ${local}/docs  API ${local}/v1`)
      expect(server.output()).not.toContain("0.0.0.0")

      const root = await fetch(`${baseUrl}/`, { redirect: "manual" })
      expect(root.status).toBe(302)
      expect(root.headers.get("location")).toBe("/dashboard")

      const email = `newcomer-${port}@example.com`
      const signup = await fetch(`${baseUrl}/v1/auth/signup`, {
        method: "POST", headers: { "content-type": "application/json", origin: local },
        body: JSON.stringify({ email, password: "correct horse battery staple 9", accept_terms: true })
      })
      expect(signup.status, await signup.text()).toBe(201)
      const [mail] = await listOutbox(dataDir, { to: email })
      expect(mail?.links[0]).toMatch(new RegExp(`^${local}/verify-email\\?token=\\w+$`))
      for (let i = 0; i < 50 && !server.output().includes(mail!.links[0]!); i++) await new Promise((r) => setTimeout(r, 100))
      expect(server.output()).toMatch(new RegExp(`e-mail to ${email} \\(.+\\): ${mail!.links[0]!.replace(/[?.]/g, "\\$&")}`))
    } finally {
      await server.stop("SIGTERM")
    }
  }, 120_000)

  it("PORT=0 prints the port the system gave; a PUBLIC_BASE_URL is printed as set", () => {
    expect(serviceAddresses("http://localhost:0", 43210)).toEqual({
      dashboard: "http://localhost:43210/dashboard", docs: "http://localhost:43210/docs", api: "http://localhost:43210/v1"
    })
    expect(serviceAddresses("https://hush.example/", 8787).api).toBe("https://hush.example/v1")
  })

  it("outside development the dev outbox logs no e-mail (its links are credentials); in development it does", async () => {
    const sendLogged = async (env: string) => {
      const dataDir = freshDir()
      const lines: Array<string> = []
      const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => lines.push(String(message))))
      await Effect.runPromise(Effect.flatMap(Mailer, (mailer) =>
        mailer.send({ to: "a@example.com", subject: "Reset your password", text: "Open http://localhost:8787/reset-password?token=secret123", html: "" })
      ).pipe(Effect.provide(layerMailer({ env, dataDir } as HushConfig)), Effect.provide(capture)))
      expect((await listOutbox(dataDir))[0]?.links).toEqual(["http://localhost:8787/reset-password?token=secret123"])
      return lines
    }
    expect((await sendLogged("production")).join("\n")).not.toContain("secret123")
    expect(await sendLogged("development")).toEqual(["e-mail to a@example.com (Reset your password): http://localhost:8787/reset-password?token=secret123"])
  })
})
