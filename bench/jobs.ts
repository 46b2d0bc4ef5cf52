/**
 * `npm start` end to end, as a client sees it: the production build on embedded defaults (a
 * fresh DATA_DIR), N live jobs of S seconds of noisy speech uploaded, validated, then
 * submitted together; it prints the aggregate speed (N × S ÷ the wall time from the first
 * submission to the last success) and the memory of the server process, of its embedded
 * PostgreSQL (PSS of all its processes) and of the ffmpeg children, sampled every 250 ms.
 *
 *   npm run bench:jobs -- --jobs 40 --seconds 13
 *   npm run bench:jobs -- --jobs 1 --seconds 21600        (a 6-hour file: 2.07 GB of WAV)
 *   npm run bench:jobs -- --idle 30                        (a fresh server doing nothing for 30 s)
 *   npm run bench:jobs -- --worker-start 5                 (`npm run worker` on PostgreSQL: time to its first claim, 5 times)
 *
 * Environment: WORKER_CONCURRENCY and the like pass through to the server;
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) for --worker-start.
 * BENCH_SERVER_NODE_ARGS: extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p".
 * BENCH_SERVER_WRAP: a command the server's node command line is handed to (e.g. a script that
 * runs it under another name, out of reach of a `pkill -f dist/app/api.mjs` on a shared machine).
 * BENCH_SERVER_STDOUT=1: the server's log lines on this process's stdout.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { createReadStream } from "node:fs"
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { makeNoisySpeech } from "../test/support/audio-fixtures.js"
import { startFlags } from "./start-flags.mjs"

const run = promisify(execFile)
const here = fileURLToPath(new URL(".", import.meta.url))

const arg = (name: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at < 0 ? undefined : Number(process.argv[at + 1])
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// --- memory (Linux /proc) --------------------------------------------------------------------

const statusKb = async (pid: number, field: string) => {
  const text = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "")
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0)
}
const pssKb = async (pid: number) =>
  Number(/^Pss:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => ""))?.[1] ?? 0)

/**
 * Each process's parent, read once: reading every process's stat every 250 ms cost this bench
 * ~12 % of a core on a busy shared machine, taken from the server it measures. A process
 * keeps its parent (or is orphaned to init, which is no parent asked about here).
 */
const parents = new Map<number, number>()
const children = async (pid: number) => {
  const found: Array<number> = []
  const alive = new Set<number>()
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const id = Number(name)
    alive.add(id)
    let parent = parents.get(id)
    if (parent === undefined) {
      const text = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "")
      parent = Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1])
      parents.set(id, parent)
    }
    if (parent === pid) found.push(id)
  }
  for (const id of parents.keys()) if (!alive.has(id)) parents.delete(id)
  return found
}

const comm = (pid: number) => readFile(`/proc/${pid}/comm`, "utf8").then((s) => s.trim(), () => "")

/** utime + stime (+ cutime + cstime: children waited for) of a process or thread, in seconds (USER_HZ is 100 on Linux). */
const cpuSeconds = async (statPath: string, withChildren = false) => {
  const text = await readFile(statPath, "utf8").catch(() => "")
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ").map(Number)
  // after the comm: state is field 3, utime 14, stime 15, cutime 16, cstime 17 (1-based)
  const own = (fields[11] ?? 0) + (fields[12] ?? 0)
  return (withChildren ? own + (fields[13] ?? 0) + (fields[14] ?? 0) : own) / 100
}

/**
 * CPU seconds spent so far by the server's main thread, its other threads (the RNNoise pool,
 * V8 and libuv helpers), its finished children (ffmpeg), its PostgreSQL and this bench: unlike
 * the wall time, their sum barely moves with other people's load on a shared machine.
 */
const cpuSnapshot = async (server: ChildProcess, dataDir: string) => {
  const pid = server.pid!
  const main = await cpuSeconds(`/proc/${pid}/task/${pid}/stat`)
  const all = await cpuSeconds(`/proc/${pid}/stat`)
  const withChildren = await cpuSeconds(`/proc/${pid}/stat`, true)
  let postgres = 0
  const postmaster = Number((await readFile(join(dataDir, "postgres", "data", "postmaster.pid"), "utf8").catch(() => "")).split("\n")[0])
  if (postmaster > 0) {
    postgres += await cpuSeconds(`/proc/${postmaster}/stat`, true)
    for (const backend of await children(postmaster)) postgres += await cpuSeconds(`/proc/${backend}/stat`)
  }
  const bench = process.cpuUsage()
  return { main, threads: all - main, children: withChildren - all, postgres, bench: (bench.user + bench.system) / 1e6 }
}

const cpuSpent = (before: Awaited<ReturnType<typeof cpuSnapshot>>, after: typeof before) => {
  const spent = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k as keyof typeof before]]))
  return spent as typeof before
}

interface Sample {
  readonly nodeRss: number
  readonly postgresPss: number
  readonly ffmpegRss: number
}

/** Samples the server (node), its PostgreSQL's processes and its ffmpeg children until stopped. */
const sampler = (server: ChildProcess, dataDir: string) => {
  const samples: Array<Sample> = []
  let running = true
  const loop = (async () => {
    while (running) {
      const pid = server.pid!
      const kids = await children(pid)
      let ffmpegRss = 0
      for (const kid of kids) if ((await comm(kid)) === "ffmpeg") ffmpegRss += await statusKb(kid, "VmRSS")
      let postgresPss = 0
      const postmaster = Number((await readFile(join(dataDir, "postgres", "data", "postmaster.pid"), "utf8").catch(() => "")).split("\n")[0])
      if (postmaster > 0) {
        postgresPss += await pssKb(postmaster)
        for (const backend of await children(postmaster)) postgresPss += await pssKb(backend)
      }
      samples.push({ nodeRss: await statusKb(pid, "VmRSS"), postgresPss, ffmpegRss })
      await sleep(250)
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      const hwm = await statusKb(server.pid!, "VmHWM")
      const max = (f: (s: Sample) => number) => Math.max(0, ...samples.map(f)) / 1024
      return {
        nodePeakMb: Math.max(max((s) => s.nodeRss), hwm / 1024),
        nodeLastMb: (samples.at(-1)?.nodeRss ?? 0) / 1024,
        postgresPeakMb: max((s) => s.postgresPss),
        ffmpegPeakMb: max((s) => s.ffmpegRss),
        // node and its database together, sample by sample
        togetherPeakMb: max((s) => s.nodeRss + s.postgresPss)
      }
    }
  }
}

/** Servers being stopped on purpose: any other exit is reported. */
const stopping = new WeakSet<ChildProcess>()

// --- the server ------------------------------------------------------------------------------

const startServer = async (dataDir: string, env: Record<string, string> = {}) => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  // BENCH_SERVER_NODE_ARGS: extra node flags for the server (e.g. --cpu-prof --cpu-prof-dir=DIR)
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")
  const command = process.env.BENCH_SERVER_WRAP === undefined ? [process.execPath] : [...process.env.BENCH_SERVER_WRAP.split(" "), process.execPath]
  // as `npm start` runs it (dist/app is two levels below the root)
  const server = spawn(command[0]!, [...command.slice(1), ...startFlags(join(here, "..", "..")), ...nodeArgs, join(here, "api.mjs")], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, PUBLIC_BASE_URL: baseUrl, ...env },
    stdio: ["ignore", process.env.BENCH_SERVER_STDOUT ? "inherit" : "ignore", "inherit"]
  })
  // a server that dies (or is killed) under the bench ends it rather than leaving it polling
  server.once("exit", (code, signal) => {
    if (stopping.has(server)) return
    console.error(`the server exited early: code ${code}, signal ${signal}`)
    process.exit(1)
  })
  const started = performance.now()
  for (;;) {
    if (server.exitCode !== null) throw new Error("the server exited")
    const ok = await fetch(`${baseUrl}/v1/health`).then((r) => r.ok, () => false)
    if (ok) break
    await sleep(50)
  }
  return { server, baseUrl, readyMs: performance.now() - started }
}

const stopServer = async (server: ChildProcess) => {
  stopping.add(server)
  const exited = new Promise((resolve) => server.once("exit", resolve))
  server.kill("SIGTERM")
  await exited
}

const cli = async (dataDir: string, env: Record<string, string>, ...args: Array<string>) =>
  JSON.parse((await run(process.execPath, [join(here, "cli.mjs"), ...args, "--json"], { env: { ...process.env, DATA_DIR: dataDir, ...env } })).stdout)

const api = async (baseUrl: string, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const json = await response.json().catch(() => undefined) as any
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

/** create → upload (one PUT, or its parts) → complete → ready; the file id. */
const uploadReady = async (baseUrl: string, key: string, path: string) => {
  const size = (await stat(path)).size
  const file = await api(baseUrl, key, "POST", "/v1/files", { filename: "talk.wav", size_bytes: size, content_type: "audio/wav" })
  let parts: Array<{ part_number: number; etag: string }> | undefined
  if (file.upload.method === "multipart") {
    parts = []
    for (const part of file.upload.parts as Array<{ part_number: number; url: string }>) {
      const start = (part.part_number - 1) * file.upload.part_size
      const end = Math.min(size, start + file.upload.part_size) - 1
      const response = await fetch(part.url, {
        method: "PUT",
        body: createReadStream(path, { start, end }) as any,
        duplex: "half",
        headers: { "content-length": String(end - start + 1) }
      } as RequestInit)
      if (!response.ok) throw new Error(`part ${part.part_number}: ${response.status}`)
      parts.push({ part_number: part.part_number, etag: response.headers.get("etag")! })
    }
  } else {
    const response = await fetch(file.upload.url, { method: "PUT", headers: file.upload.headers, body: await readFile(path) })
    if (!response.ok) throw new Error(`upload: ${response.status}`)
  }
  await api(baseUrl, key, "POST", `/v1/files/${file.id}/complete`, parts === undefined ? undefined : { parts })
  for (;;) {
    const got = await api(baseUrl, key, "GET", `/v1/files/${file.id}`)
    if (got.status === "ready") return file.id as string
    if (got.status === "rejected") throw new Error(`rejected: ${JSON.stringify(got)}`)
    await sleep(100)
  }
}

/** A WAV of noisy speech `seconds` long (a one-minute unit looped, or cut). */
const makeInput = async (dir: string, seconds: number) => {
  const unit = join(dir, "unit.wav")
  await makeNoisySpeech(unit, { seconds: Math.min(60, seconds) })
  if (seconds <= 60) return unit
  const path = join(dir, "input.wav")
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-stream_loop", String(Math.ceil(seconds / 60) - 1),
    "-i", unit, "-t", String(seconds), "-c", "copy", path])
  return path
}

// --- the cases -------------------------------------------------------------------------------

/**
 * How the bench learns that its jobs ended: by default one `GET /v1/jobs` page (100 jobs) per
 * 250 ms, per second for one job; with --poll-each a `GET /v1/jobs/{id}` per pending job, then
 * 100 ms of rest, as the bench did first: with 40 jobs, hundreds of requests a second that the
 * server answers on the cores the jobs need.
 */
const pollEach = process.argv.includes("--poll-each")

const jobsCase = async (jobs: number, seconds: number) => {
  const dir = await mkdtemp(join(tmpdir(), "hush-bench-jobs-"))
  const dataDir = join(dir, "data")
  try {
    const input = await makeInput(dir, seconds)
    const { server, baseUrl, readyMs } = await startServer(dataDir)
    try {
      const account = await cli(dataDir, {}, "admin", "account", "create", "--email", "bench@example.com", "--credit-micros", "100000000000")
      const key = account.live_key as string
      const files: Array<string> = []
      for (let i = 0; i < jobs; i++) files.push(await uploadReady(baseUrl, key, input))
      const memory = sampler(server, dataDir)
      const cpuBefore = await cpuSnapshot(server, dataDir)
      const submitted = performance.now()
      const ids = await Promise.all(files.map((file) => api(baseUrl, key, "POST", "/v1/audio/denoise", { file }).then((job) => job.id as string)))
      const pending = new Set(ids)
      const seen = (job: any) => {
        if (job.status === "succeeded") pending.delete(job.id)
        else if (job.status === "failed" || job.status === "canceled") throw new Error(`job ${job.id} ${job.status}: ${JSON.stringify(job.error)}`)
      }
      while (pending.size > 0) {
        if (pollEach) {
          for (const id of [...pending]) seen(await api(baseUrl, key, "GET", `/v1/jobs/${id}`))
        } else {
          // the account is the bench's own: its job list, a page of 100 at a time, is these jobs
          let cursor: string | undefined
          do {
            const page = await api(baseUrl, key, "GET", `/v1/jobs?limit=100${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
            for (const job of page.data) if (pending.has(job.id)) seen(job)
            cursor = page.next_cursor ?? undefined
          } while (cursor !== undefined)
        }
        if (pending.size > 0) await sleep(jobs === 1 ? 1_000 : pollEach ? 100 : 250)
      }
      const wallSeconds = (performance.now() - submitted) / 1000
      const cpu = cpuSpent(cpuBefore, await cpuSnapshot(server, dataDir))
      const cpuTotal = cpu.main + cpu.threads + cpu.children + cpu.postgres + cpu.bench
      // and the output of one, downloaded
      const link = await api(baseUrl, key, "GET", `/v1/jobs/${ids[0]}/output`)
      const output = await fetch(link.url).then((r) => r.arrayBuffer())
      const downloadedSeconds = (performance.now() - submitted) / 1000
      const mem = await memory.stop()
      return {
        case: `${jobs} × ${seconds} s`, serverReadyMs: Math.round(readyMs), wallSeconds: Number(wallSeconds.toFixed(1)),
        aggregateXRealTime: Number((jobs * seconds / wallSeconds).toFixed(1)),
        // CPU seconds from the first submission to the last success: main thread, other threads, ffmpeg, PostgreSQL, the bench's polling
        cpuSeconds: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Number(v.toFixed(2))])),
        // audio seconds per CPU second of all of them: what a quiet machine's ×RT would be per core
        audioPerCpuSecond: Number((jobs * seconds / cpuTotal).toFixed(1)),
        outputMb: Number((output.byteLength / 1e6).toFixed(1)), downloadedAfterSeconds: Number(downloadedSeconds.toFixed(1)),
        ...Object.fromEntries(Object.entries(mem).map(([k, v]) => [k, Math.round(v)]))
      }
    } finally {
      await stopServer(server)
    }
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
  }
}

const idleCase = async (seconds: number) => {
  const dir = await mkdtemp(join(tmpdir(), "hush-bench-idle-"))
  const dataDir = join(dir, "data")
  try {
    // a first start makes the cluster (initdb); the measured one opens it, as every later start does
    await stopServer((await startServer(dataDir)).server)
    const spawned = performance.now()
    const { server, readyMs } = await startServer(dataDir)
    const memory = sampler(server, dataDir)
    await sleep(seconds * 1000 - (performance.now() - spawned))
    const mem = await memory.stop()
    await stopServer(server)
    return { case: `idle for ${seconds} s after start`, serverReadyMs: Math.round(readyMs), ...Object.fromEntries(Object.entries(mem).map(([k, v]) => [k, Math.round(v)])) }
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
  }
}

/** A long-lived `psql` reading queries from stdin; `query` answers the next line it prints. */
const psqlSession = (databaseUrl: string) => {
  const child = spawn("psql", [databaseUrl, "-qAt"], { stdio: ["pipe", "pipe", "inherit"] })
  const waiting: Array<(line: string) => void> = []
  let buffered = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      const line = buffered.slice(0, end)
      buffered = buffered.slice(end + 1)
      waiting.shift()?.(line)
    }
  })
  return {
    query: (sql: string) =>
      new Promise<string>((resolve) => {
        waiting.push(resolve)
        child.stdin.write(`${sql}\n`)
      }),
    close: () => child.stdin.end()
  }
}

/** `npm run worker` against PostgreSQL with a job queued: ms from its spawn to the job being claimed. */
const workerStartCase = async (times: number) => {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
  const dir = await mkdtemp(join(tmpdir(), "hush-bench-worker-"))
  const dataDir = join(dir, "data")
  const database = `hush_bench_${Date.now().toString(36)}`
  const url = new URL(serverUrl)
  const psql = (sql: string, db = url.pathname.slice(1)) => {
    const target = new URL(serverUrl)
    target.pathname = `/${db}`
    return run("psql", [target.toString(), "-qAt", "-c", sql])
  }
  await psql(`CREATE DATABASE ${database}`)
  url.pathname = `/${database}`
  const env = { DATABASE_URL: url.toString(), HUSH_WORKER: "off" }
  const { server, baseUrl } = await startServer(dataDir, env)
  const claims: Array<number> = []
  // one psql session for the polling: a psql spawned every 10 ms would take the CPU the worker needs
  const watcher = psqlSession(url.toString())
  try {
    const input = await makeInput(dir, 10)
    const account = await cli(dataDir, env, "admin", "account", "create", "--email", "bench@example.com", "--credit-micros", "100000000")
    const key = account.live_key as string
    for (let i = 0; i < times; i++) {
      const file = await uploadReady(baseUrl, key, input)
      const job = await api(baseUrl, key, "POST", "/v1/audio/denoise", { file })
      const spawned = performance.now()
      const worker = spawn(process.execPath, ["--enable-source-maps", join(here, "worker.mjs")], {
        env: { ...process.env, DATA_DIR: dataDir, ...env }, stdio: "ignore"
      })
      for (;;) {
        if ((await watcher.query(`SELECT status FROM jobs WHERE id = '${job.id}';`)) !== "queued") break
        await sleep(10)
      }
      claims.push(Math.round(performance.now() - spawned))
      await stopServer(worker) // hands the job back to the queue
      await api(baseUrl, key, "POST", `/v1/jobs/${job.id}/cancel`)
    }
  } finally {
    watcher.close()
    await stopServer(server)
    await psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined)
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
  }
  return { case: `npm run worker: spawn → first claim (ms), ${times} times`, claimsMs: claims }
}

const main = async () => {
  const before = loadavg().map((l) => l.toFixed(2)).join(" ")
  const result = arg("idle") !== undefined
    ? await idleCase(arg("idle")!)
    : arg("worker-start") !== undefined
    ? await workerStartCase(arg("worker-start")!)
    : await jobsCase(arg("jobs") ?? 40, arg("seconds") ?? 13)
  console.log(JSON.stringify({ ...result, loadBefore: before, loadAfter: loadavg().map((l) => l.toFixed(2)).join(" ") }))
}

await main()
