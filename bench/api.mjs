// `npm run bench:api`: the shared load harness (../shared/bench/api-floor, its README has the
// method) against a Hush it starts here on PostgreSQL, the same server the floor uses, and the
// harness's table printed. The production build (prebench:api) is what runs.
//
//   BENCH_POSTGRES   the server (default postgres://postgres@127.0.0.1:5432); a fresh database is made and dropped
//   HARNESS_DIR      the harness (default ../shared/bench/api-floor); copied to a temporary folder for its `npm ci`
//   PORT             Hush's port (default 8797)
//   HUSH_WORKER      on by default, as `npm start`; off measures the API alone
//   OBSERVABILITY    off (default: no METRICS_TOKEN, no OTLP endpoint), on (both set: a local OTLP
//                    receiver takes the spans and /metrics is scraped every 5 s, as Prometheus
//                    would), sampled (on, keeping 10 % of new traces: parentbased_traceidratio, or
//                    OTEL_TRACES_SAMPLER_ARG's ratio), both (off and on) or all (off, on, sampled):
//                    the harness against off, then every mode's server at once on one database,
//                    driven in alternating rounds (bench/api-side-by-side.mjs: SIDE_ROUNDS, default
//                    8, of SECONDS each) and a table of each mode's rate ÷ off's. On,
//                    OTEL_TRACES_SAMPLER(_ARG), when set, go to the server as they are.
//   SIDE_KEYS        test keys the side-by-side comparison spreads its requests over (default 48;
//                    a fast machine or two sides at create's rate need ~250, else its rounds read 429s)
//   HARNESS          off: skip the harness run (with both or all, the side-by-side comparison alone)
//   BASELINE         a checkout of another commit with its own build (e.g. `git worktree add
//                    ../before <commit>`, then `npm run build` there): its server runs beside this
//                    one on the same database, observability off, and the side-by-side table gives
//                    this build's rate ÷ the baseline's per case (the first side is the baseline)
// Anything else (ROUNDS, SECONDS, CASES, JSON_OUT, …) goes to the harness as it is.
import { execFileSync, spawn } from "node:child_process"
import { createServer } from "node:http"
import { randomBytes } from "node:crypto"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { printSideBySide, sideBySide } from "./api-side-by-side.mjs"
import { startFlags } from "./start-flags.mjs"

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


const observed = { off: ["off"], on: ["on"], sampled: ["sampled"], both: ["off", "on"], all: ["off", "on", "sampled"] }[process.env.OBSERVABILITY ?? "off"]
if (observed === undefined) throw new Error(`OBSERVABILITY must be off, on, sampled, both or all, not ${process.env.OBSERVABILITY}`)
const baseline = process.env.BASELINE === undefined ? undefined : resolve(process.env.BASELINE)
// with a baseline it comes first: the table's ratios are each side's rate over the first side's
const modes = baseline === undefined ? observed : ["baseline", ...observed]

/** An OTLP/HTTP receiver that counts the spans it is sent and answers 200, as a collector would. */
const startOtlpSink = async () => {
  let spans = 0
  const server = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      spans += (body.match(/"spanId"/g) ?? []).length
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise((r) => server.listen(0, "127.0.0.1", r))
  return { url: `http://127.0.0.1:${server.address().port}`, spans: () => spans, close: () => new Promise((r) => server.close(r)) }
}

/** Hush servers this run started: { child, otlp, scraper } */
const servers = []
const stopServer = async ({ child, otlp, scraper }) => {
  clearInterval(scraper)
  if (child.exitCode === null) {
    child.kill("SIGTERM")
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)))
  }
  await otlp?.close()
}
const stopServers = async () => {
  await Promise.all(servers.splice(0).map(stopServer))
}
const cleanup = async () => {
  await stopServers()
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  await admin.end()
  rmSync(work, { recursive: true, force: true })
}
process.once("SIGINT", () => void cleanup().then(() => process.exit(130)))

/** A fresh database: the previous run's accounts and keys are gone. */
const freshDatabase = async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  await admin.query(`CREATE DATABASE ${database}`)
}

/** Starts Hush with observability `mode` on `port` and waits for its health answer. */
const startHush = async (mode, port) => {
  const dataDir = join(work, `data-${mode}`)
  const env = { ...process.env, PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }
  delete env.METRICS_TOKEN
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT
  const metricsToken = randomBytes(18).toString("base64url")
  const server = { mode, port, env, otlp: undefined, scraper: undefined, scrapes: 0 }
  const observes = mode !== "off" && mode !== "baseline"
  if (observes) {
    server.otlp = await startOtlpSink()
    Object.assign(env, { METRICS_TOKEN: metricsToken, OTEL_EXPORTER_OTLP_ENDPOINT: server.otlp.url })
  }
  if (mode === "sampled") Object.assign(env, { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: env.OTEL_TRACES_SAMPLER_ARG ?? "0.1" })
  const from = mode === "baseline" ? baseline : root
  server.child = spawn(process.execPath, [...startFlags(from), join(from, "dist/app/api.mjs")], { env, stdio: ["ignore", "ignore", "inherit"] })
  servers.push(server)
  for (let waited = 0; ; waited += 200) {
    if (server.child.exitCode !== null) throw new Error(`Hush (${mode}) exited (${server.child.exitCode}) before answering`)
    if (await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)) break
    if (waited > 60_000) throw new Error(`Hush (${mode}) did not answer /v1/health within 60 s`)
    await sleep(200)
  }
  if (observes) {
    // as Prometheus would
    server.scraper = setInterval(() => {
      fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
        .then((r) => r.text().then(() => r.ok && server.scrapes++), () => undefined)
    }, 5_000)
  }
  console.log(`Hush on PostgreSQL (${database}) at port ${port}, worker ${env.HUSH_WORKER === "off" ? "off" : "on"}, observability ${mode}` +
    `${observes ? ` (sampler ${env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on"}${env.OTEL_TRACES_SAMPLER_ARG ? ` ${env.OTEL_TRACES_SAMPLER_ARG}` : ""})` : ""}` +
    `; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  return server
}

const cliOf = (server) => `DATA_DIR='${server.env.DATA_DIR}' DATABASE_URL='${databaseUrl}' ${process.execPath} ${join(root, "dist/app/cli.mjs")}`

/** One harness run against a fresh Hush with observability `mode`; the harness's JSON results. */
const measure = async (mode) => {
  await freshDatabase()
  const server = await startHush(mode, port)
  try {
    const jsonOut = join(work, `results-${mode}.json`)
    const run = spawn(process.execPath, [join(harness, "load.mjs")], {
      env: { ...server.env, BASE_URL: `http://127.0.0.1:${port}`, ADMIN_CMD: cliOf(server), PROJECT_DIR: root, FLOOR_DATABASE_URL: databaseUrl, JSON_OUT: process.env.JSON_OUT ?? jsonOut },
      stdio: "inherit"
    })
    const code = await new Promise((r) => run.once("exit", (c) => r(c ?? 1)))
    if (code !== 0) throw new Error(`the harness exited ${code}`)
    if (mode !== "off") console.log(`observability ${mode}: ${server.otlp.spans()} spans received by OTLP, /metrics scraped ${server.scrapes} times`)
    console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
    return JSON.parse(readFileSync(process.env.JSON_OUT ?? jsonOut, "utf8")).results
  } finally {
    await stopServers()
  }
}

/** Every mode's server at once on one database, compared in alternating rounds (api-side-by-side.mjs). */
const compareSideBySide = async () => {
  await freshDatabase()
  // one after another: the first one's migrations make the schema the others find
  const started = []
  for (const [i, mode] of modes.entries()) started.push(await startHush(mode, port + i))
  try {
    const results = await sideBySide({
      sides: started.map((s) => ({ name: s.mode, origin: `http://127.0.0.1:${s.port}`, pid: s.child.pid })),
      // this build's operator CLI, on a side of this build
      cli: cliOf(started.find((s) => s.mode !== "baseline")),
      work,
      perfLua: join(harness, "perf.lua"),
      cases: (process.env.CASES ?? "health,poll,create").split(","),
      rounds: Number(process.env.SIDE_ROUNDS ?? 8),
      seconds: Number(process.env.SECONDS ?? 3),
      connections: Number(process.env.CONNECTIONS ?? 2 * availableParallelism()),
      // enough keys that no side's rate limits answer (the harness's formula: ../shared/bench/api-floor)
      keys: Number(process.env.SIDE_KEYS ?? 48)
    })
    for (const s of started.filter((s) => s.otlp !== undefined)) console.log(`observability ${s.mode}: ${s.otlp.spans()} spans received by OTLP, /metrics scraped ${s.scrapes} times`)
    console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
    printSideBySide(results)
  } finally {
    await stopServers()
  }
}

let code = 1
try {
  if (process.env.HARNESS !== "off") await measure(observed[0])
  if (modes.length > 1) await compareSideBySide()
  code = 0
} catch (error) {
  console.error(String(error))
} finally {
  await cleanup()
}
process.exit(code)
