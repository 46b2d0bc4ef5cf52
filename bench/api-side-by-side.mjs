// Observability off against on, side by side: Hush servers with each configuration run at once on
// one database, and wrk drives them in alternating rounds (the harness's method: ../shared/bench/
// api-floor/README.md), so a neighbour's load or the machine's drift falls on every side alike.
// The harness's own table compares each side with its floor in a separate run, and those ratios
// move ~10 % between runs: too coarse for a 10 % budget. Used by bench/api.mjs (OBSERVABILITY=both|all).
import { execFile } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
const cpuSeconds = (pid) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN
  }
}

/** Read- and write-type system calls a process has made so far, from /proc (Linux); NaN elsewhere. */
const syscalls = (pid) => {
  try {
    const io = Object.fromEntries(readFileSync(`/proc/${pid}/io`, "utf8").trim().split("\n").map((l) => l.split(": ")))
    return { reads: Number(io.syscr), writes: Number(io.syscw) }
  } catch {
    return { reads: NaN, writes: NaN }
  }
}

/** A JS value as a Lua literal (perf.lua's spec file); strings are printable ASCII. */
const lua = (v) =>
  typeof v === "string" ? JSON.stringify(v)
  : typeof v === "number" || typeof v === "boolean" ? String(v)
  : Array.isArray(v) ? `{${v.map(lua).join(",")}}`
  : `{${Object.entries(v).map(([k, x]) => `[${lua(k)}]=${lua(x)}`).join(",")}}`

/** 2 s of a 440 Hz tone, 16-bit mono WAV at 16 kHz. */
const wav = () => {
  const n = 32_000
  const b = Buffer.alloc(44 + 2 * n)
  b.write("RIFF", 0, "ascii"); b.writeUInt32LE(36 + 2 * n, 4); b.write("WAVEfmt ", 8, "ascii")
  b.writeUInt32LE(16, 16); b.writeUInt16LE(1, 20); b.writeUInt16LE(1, 22); b.writeUInt32LE(16_000, 24)
  b.writeUInt32LE(32_000, 28); b.writeUInt16LE(2, 32); b.writeUInt16LE(16, 34); b.write("data", 36, "ascii"); b.writeUInt32LE(2 * n, 40)
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)), 44 + 2 * i)
  return b
}

const json = async (origin, method, path, { key, body } = {}) => {
  const response = await fetch(origin + path, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status} ${text.slice(0, 200)}`)
  return JSON.parse(text)
}

/** A test account with a ready file, a finished test job and `keys` test keys on it. */
const prepare = async (origin, cli, keys) => {
  const cliJson = async (args) => JSON.parse((await run("/bin/sh", ["-c", `${cli} ${args}`])).stdout.trim().split("\n").pop())
  const account = await cliJson(`admin account create --email side-by-side-${Date.now().toString(36)}@example.com --json`)
  const key = account.test_key
  const bytes = wav()
  const file = await json(origin, "POST", "/v1/files", { key, body: { filename: "tone.wav", size_bytes: bytes.length, content_type: "audio/wav" } })
  const skip = ["host", "content-length", "connection", "transfer-encoding"]
  const headers = Object.fromEntries(Object.entries(file.upload.headers ?? {}).filter(([h]) => !skip.includes(h.toLowerCase())))
  const put = await fetch(new URL(file.upload.url, `${origin}/`), { method: "PUT", headers, body: bytes })
  if (!put.ok) throw new Error(`upload → ${put.status}`)
  await json(origin, "POST", `/v1/files/${file.id}/complete`, { key })
  for (let f; f?.status !== "ready"; await sleep(200)) {
    f = await json(origin, "GET", `/v1/files/${file.id}`, { key })
    if (f.status === "rejected") throw new Error(`the tone was rejected: ${JSON.stringify(f.error)}`)
  }
  const job = await json(origin, "POST", "/v1/audio/denoise", { key, body: { file: file.id, model: "xiph/rnnoise" } })
  const pool = [key]
  for (let i = 1; i < keys; i += 4) {
    const made = await Promise.all(Array.from({ length: Math.min(4, keys - i) }, () => cliJson(`admin key create --account ${account.account_id} --mode test --json`)))
    pool.push(...made.map((k) => k.key))
  }
  return { keys: pool, file: file.id, job: job.id }
}

const specOf = (caseName, data) => {
  if (caseName === "health") return { method: "GET", requests: [{ path: "/v1/health" }] }
  if (caseName === "poll") return { method: "GET", requests: data.keys.map((key) => ({ path: `/v1/jobs/${data.job}`, headers: { Authorization: `Bearer ${key}` } })) }
  return {
    method: "POST",
    idempotency: true,
    requests: data.keys.map((key) => ({
      path: "/v1/audio/denoise",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ file: data.file, model: "xiph/rnnoise" })
    }))
  }
}

/**
 * `sides`: [{ name, origin, pid }], the first the baseline (observability off). Every round runs each
 * side once for `seconds`, in an order that rotates from round to round; each side's rate is
 * divided by the baseline's of the same round, and the table shows the median of those ratios.
 */
export const sideBySide = async ({ sides, cli, work, perfLua, cases, rounds, seconds, connections, keys = 48 }) => {
  // each server counts rate limits alone (in memory), so one pool of keys serves every side;
  // 48 keys outlast the create bucket (120, then 2 a second) at a few hundred creates a second
  // (a faster machine, more sides or longer rounds need more: `keys`)
  const data = await prepare(sides[0].origin, cli, keys)
  let specs = 0
  const wrk = async (origin, spec, secs) => {
    const file = join(work, `side-spec-${++specs}.lua`)
    writeFileSync(file, `return ${lua(spec)}\n`)
    const { stdout } = await run("wrk", ["-t", "1", "-c", String(connections), "-d", `${secs}s`, "--timeout", "10s", "-s", perfLua, origin], {
      env: { ...process.env, PERF_SPEC: file, PERF_RUN: `side${Date.now().toString(36)}${specs}` }
    })
    const r = JSON.parse(stdout.split("\n").find((l) => l.startsWith("PERF ")).slice(5))
    return { okRate: r.ok / (r.duration_us / 1e6), requests: r.requests, r429: r.r429 / Math.max(1, r.requests), other: (r.other + r.socket_errors) / Math.max(1, r.requests) }
  }
  const results = {}
  for (const caseName of cases) {
    const spec = specOf(caseName, data)
    for (const side of sides) await wrk(side.origin, spec, 3) // warm-up
    const perSide = sides.map(() => [])
    for (let round = 0; round < rounds; round++) {
      const order = sides.map((_, i) => (i + round) % sides.length)
      for (const i of order) {
        const before = cpuSeconds(sides[i].pid)
        const callsBefore = syscalls(sides[i].pid)
        const r = await wrk(sides[i].origin, spec, seconds)
        const calls = syscalls(sides[i].pid)
        const perRequest = (n) => n / Math.max(1, r.requests)
        perSide[i][round] = {
          ...r,
          cpuMicros: (1e6 * (cpuSeconds(sides[i].pid) - before)) / Math.max(1, r.requests),
          readsPerRequest: perRequest(calls.reads - callsBefore.reads),
          writesPerRequest: perRequest(calls.writes - callsBefore.writes)
        }
      }
      // system calls a request (read- and write-type): more round trips to the database show here
      console.log(`${caseName} round ${round + 1}: ${sides.map((s, i) => {
        const r = perSide[i][round]
        return `${s.name} ${r.okRate.toFixed(0)}/s ${r.cpuMicros.toFixed(0)} µs ${r.readsPerRequest.toFixed(1)}r/${r.writesPerRequest.toFixed(1)}w`
      }).join(", ")}`)
    }
    results[caseName] = sides.map((side, i) => ({
      name: side.name,
      okRate: median(perSide[i].map((r) => r.okRate)),
      ratio: median(perSide[i].map((r, n) => r.okRate / perSide[0][n].okRate)),
      cpuMicros: median(perSide[i].map((r) => r.cpuMicros)),
      // paired as the rates are: CPU a request over the baseline's in the same round
      cpuRatio: median(perSide[i].map((r, n) => r.cpuMicros / perSide[0][n].cpuMicros)),
      r429: Math.max(...perSide[i].map((r) => r.r429)),
      other: Math.max(...perSide[i].map((r) => r.other))
    }))
  }
  return results
}

export const printSideBySide = (results) => {
  const names = Object.values(results)[0].map((s) => s.name)
  console.log(`\nside by side (servers at once, alternating rounds; median of each round's ratio to ${names[0]}):`)
  console.log("(CPU µs/request: the server process's CPU time over the requests wrk sent it, median of the rounds; CPU ÷: the median of")
  console.log("each round's CPU a request over the first side's, which a neighbour's load moves less than the rates)")
  console.log(`| case | ${names.map((n, i) => (i === 0 ? `${n} ok/s | ${n} CPU µs/req` : `${n} ok/s | ${n} CPU µs/req | ${n} ÷ ${names[0]} | CPU ÷`)).join(" | ")} |`)
  console.log(`|---|${names.map((_, i) => (i === 0 ? "---|---|" : "---|---|---|---|")).join("")}`)
  for (const [caseName, sides] of Object.entries(results)) {
    const cells = sides.map((s, i) => `${s.okRate.toFixed(0)} | ${s.cpuMicros.toFixed(0)}${i === 0 ? "" : ` | ${s.ratio.toFixed(2)} | ${s.cpuRatio.toFixed(2)}`}`)
    console.log(`| ${caseName} | ${cells.join(" | ")} |`)
    for (const s of sides) {
      if (s.r429 > 0.01 || s.other > 0) console.log(`# ${caseName}, ${s.name}: up to ${(100 * s.r429).toFixed(1)}% 429 and ${(100 * s.other).toFixed(1)}% other errors in a round`)
    }
  }
}
