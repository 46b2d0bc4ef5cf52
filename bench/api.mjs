// `npm run bench:api`: the shared load harness (../shared/bench/api-floor, its README has the
// method) against a Hush it starts here on PostgreSQL, the same server the floor uses, and the
// harness's table printed. The production build (prebench:api) is what runs.
//
//   BENCH_POSTGRES   the server (default postgres://postgres@127.0.0.1:5432); a fresh database is made and dropped
//   HARNESS_DIR      the harness (default ../shared/bench/api-floor); copied to a temporary folder for its `npm ci`
//   PORT             Hush's port (default 8797)
//   HUSH_WORKER      on by default, as `npm start`; off measures the API alone
// Anything else (ROUNDS, SECONDS, CASES, JSON_OUT, …) goes to the harness as it is.
import { execFileSync, spawn } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const server = (process.env.BENCH_POSTGRES ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "")
const harnessSource = resolve(root, process.env.HARNESS_DIR ?? "../shared/bench/api-floor")
const port = Number(process.env.PORT ?? 8797)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const database = `hush_bench_${Date.now().toString(36)}`
const admin = new pg.Client({ connectionString: `${server}/postgres` })
await admin.connect()
await admin.query(`CREATE DATABASE ${database}`)
const databaseUrl = `${server}/${database}`

const work = mkdtempSync(join(tmpdir(), "hush-bench-api-"))
const harness = join(work, "harness")
cpSync(harnessSource, harness, { recursive: true, filter: (path) => !path.includes("node_modules") })
// the shared floor-server.mjs has an apostrophe inside a single-quoted string (a SyntaxError);
// the copy is mended until the shared one is
const floorScript = join(harness, "floor-server.mjs")
writeFileSync(floorScript, readFileSync(floorScript, "utf8").replace("in the harness's folder'", "in the harness folder'"))
execFileSync("npm", ["ci", "--silent", "--no-audit", "--no-fund"], { cwd: harness, stdio: "inherit" })

const dataDir = join(work, "data")
const env = { ...process.env, PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }
const hush = spawn(process.execPath, ["--enable-source-maps", join(root, "dist/app/api.mjs")], { env, stdio: ["ignore", "ignore", "inherit"] })
const cleanup = async () => {
  hush.kill("SIGTERM")
  await new Promise((r) => (hush.exitCode !== null ? r() : hush.once("exit", r)))
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  await admin.end()
  rmSync(work, { recursive: true, force: true })
}
process.once("SIGINT", () => void cleanup().then(() => process.exit(130)))

let code = 1
try {
  for (let waited = 0; ; waited += 200) {
    if (hush.exitCode !== null) throw new Error(`Hush exited (${hush.exitCode}) before answering`)
    if (await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)) break
    if (waited > 60_000) throw new Error("Hush did not answer /v1/health within 60 s")
    await sleep(200)
  }
  console.log(`Hush on PostgreSQL (${database}), worker ${env.HUSH_WORKER === "off" ? "off" : "on"}; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  const cli = `DATA_DIR='${dataDir}' DATABASE_URL='${databaseUrl}' ${process.execPath} ${join(root, "dist/app/cli.mjs")}`
  const run = spawn(process.execPath, [join(harness, "load.mjs")], {
    env: { ...env, BASE_URL: `http://127.0.0.1:${port}`, ADMIN_CMD: cli, PROJECT_DIR: root, FLOOR_DATABASE_URL: databaseUrl },
    stdio: "inherit"
  })
  code = await new Promise((r) => run.once("exit", (c) => r(c ?? 1)))
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
} catch (error) {
  console.error(String(error))
} finally {
  await cleanup()
}
process.exit(code)
