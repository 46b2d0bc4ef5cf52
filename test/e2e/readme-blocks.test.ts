/**
 * README's shell blocks marked `<!-- readme-test: NAME -->` (the line before a ```sh fence),
 * run as written, in order, with bash against a fresh `npm start` process (issue 31): the CLI
 * quick start and the curl flow. Each runs in its own `bash -euo pipefail`, as a reader's
 * terminal would, with what the earlier ones exported; each must exit 0, and the MP3 each
 * leaves must decode. So README cannot drift from the product.
 *
 * What a reader's terminal has, the blocks get: HUSH_BASE_URL (the server here; README's
 * default is http://localhost:8787) and DATA_DIR (the server's, for the operator CLI). They run
 * in a scratch folder that stands in for the checkout: its package.json's `hush` script and
 * node_modules/.bin/hush lead to this checkout's bin/hush.mjs, so `npm run -s hush` and `npx
 * hush` work as there (offline: npx never asks the registry), and the checkout stays clean.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../support/ports.js"
import { type HushProcess, startProcess, waitForHealth } from "../support/process.js"
import { ffprobeDuration } from "./helpers.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The marked blocks of README, in order. */
export const readmeBlocks = (markdown: string): ReadonlyArray<{ readonly name: string; readonly script: string }> =>
  [...markdown.matchAll(/^<!-- readme-test: ([\w-]+) -->\n```sh\n([\s\S]*?)^```$/gm)].map((m) => ({ name: m[1]!, script: m[2]! }))

const blocks = readmeBlocks(readFileSync(join(ROOT, "README.md"), "utf8"))

let work = ""
let server: HushProcess
let env: Record<string, string> = {}
/** What the blocks exported so far (`export -p` after each), for the next one. */
let exported = ""

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "hush-readme-"))
  const dataDir = join(work, "data")
  const checkout = join(work, "checkout")
  mkdirSync(join(checkout, "node_modules", ".bin"), { recursive: true })
  writeFileSync(join(checkout, "package.json"), JSON.stringify({
    name: "readme-reader", private: true, scripts: { hush: `node ${JSON.stringify(join(ROOT, "bin", "hush.mjs"))}` }
  }))
  symlinkSync(join(ROOT, "bin", "hush.mjs"), join(checkout, "node_modules", ".bin", "hush"))
  const port = await freePort()
  // as README says: `npm start` on its embedded defaults, in development
  server = startProcess("apps/api/server/main.ts", { PORT: String(port), DATA_DIR: dataDir })
  await waitForHealth(`http://127.0.0.1:${port}`, server)
  env = {
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
    HOME: work,
    HUSH_BASE_URL: `http://localhost:${port}`,
    DATA_DIR: dataDir,
    HUSH_CACHE_DIR: join(work, "cache"),
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    npm_config_cache: join(work, "npm-cache")
  }
  // the operator CLI (and npm) find what the tests found: the same PostgreSQL, Redis
  for (const name of ["TEST_DATABASE_URL", "TEST_REDIS_URL", "LANG"]) if (process.env[name] !== undefined) env[name] = process.env[name]!
}, 120_000)

afterAll(async () => {
  await server?.stop("SIGTERM")
  if (work !== "") rmSync(work, { recursive: true, force: true })
})

const runBlock = (script: string) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const exports = join(work, "exports.sh")
    const child = spawn("bash", ["-euo", "pipefail", "-c", `${exported}\n${script}\nexport -p > ${JSON.stringify(exports)}`], {
      cwd: join(work, "checkout"), env, stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += String(chunk)))
    child.stderr.on("data", (chunk) => (output += String(chunk)))
    child.on("close", (code) => {
      if (code === 0) exported = readFileSync(exports, "utf8")
      resolve({ code, output })
    })
  })

describe("README's shell blocks, run as written", () => {
  it("README marks the CLI quick start and the curl flow", () => {
    expect(blocks.map((b) => b.name)).toEqual(expect.arrayContaining(["cli-quick-start", "curl-flow"]))
  })

  it.each(blocks.map((b) => [b.name, b.script] as const))("%s exits 0 and leaves a decodable MP3", async (_, script) => {
    const output = join(work, "checkout", "interview.denoised.mp3")
    rmSync(output, { force: true })
    const run = await runBlock(script)
    expect(run.code, run.output).toBe(0)
    expect(existsSync(output), run.output).toBe(true)
    const probe = ffprobeDuration(new Uint8Array(readFileSync(output)), "readme.mp3")
    expect(probe.formatName).toBe("mp3")
    expect(probe.duration).toBeGreaterThan(1)
  }, 180_000)
})
