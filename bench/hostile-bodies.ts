/**
 * What a hostile JSON body costs the server (issue 29; docs/security.md, "Hostile bodies"): the
 * CPU time of an in-process Hush (the test server, on memory adapters) answering a 1 MiB body
 * that is flat (one long string in a field of the endpoint's), nested (arrays or objects, as
 * deep as 1 MiB allows), wide (as many values as 1 MiB holds), and the worst the edge lets
 * through (32 levels, 10,000 values of 100 characters: the parse's and the schema's work). Each
 * body goes to `POST /v1/files` and `POST /v1/webhook_endpoints` with a key and to
 * `POST /v1/auth/login` without, taking turns (a shared machine's load comes and goes);
 * prints the median CPU ms of each (process.cpuUsage: the server's work and this client's
 * writes, the same for every body of one size), its status, and its ratio to the flat body's.
 *
 *   npx tsx bench/hostile-bodies.ts [runs]
 */
import { request as httpRequest } from "node:http"
import { loadavg } from "node:os"
import { LogLevel } from "effect"
import { startTestServer, type TestServer } from "../test/support/server.js"

const RUNS = Number(process.argv[2] ?? 15)
const MIB = 1024 * 1024
/** Just under the 1 MiB cap, so every body is read whole. */
const SIZE = MIB - 64

/** `{"<field>": <inner>}`, `inner` sized to fill `SIZE`. */
const around = (field: string, inner: (room: number) => string) => {
  const head = `{"${field}":`
  return `${head}${inner(SIZE - head.length - 1)}}`
}

const repeatedTo = (unit: string, room: number, open: string, close: string) =>
  `${open}${unit.repeat(Math.floor((room - open.length - close.length) / unit.length))}${close}`

/** Each body, for an endpoint whose body has `field` (a string of it is what the flat body fills). */
export const BODIES: ReadonlyArray<readonly [string, (field: string) => string]> = [
  ["flat: one long string", (field) => around(field, (room) => JSON.stringify("a".repeat(room - 2)))],
  ["deep arrays", (field) => around(field, (room) => "[".repeat(room / 2) + "]".repeat(room / 2))],
  ["deep objects", (field) =>
    around(field, (room) => {
      const depth = Math.floor(room / 7)
      return "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)
    })],
  ["wide array of numbers", (field) => around(field, (room) => repeatedTo("1,", room, "[", "1]"))],
  ["wide object of unknown fields", () => {
    const members: Array<string> = []
    let size = 2
    for (let i = 0; size < SIZE - 20; i++) {
      const member = `"k${i}":1`
      members.push(member)
      size += member.length + 1
    }
    return `{${members.join(",")}}`
  }],
  ["at the limits: 32 deep, 10,000 strings of 100", (field) =>
    around(field, () => {
      const inner = Array.from({ length: 9_960 }, () => JSON.stringify("x".repeat(100))).join(",")
      return "[".repeat(31) + inner + "]".repeat(31)
    })],
  ["at the limits: 9,900 unknown fields of 100", () => {
    const members = Array.from({ length: 9_900 }, (_, i) => `${JSON.stringify(`${String(i).padStart(5, "0")}${"k".repeat(95)}`)}:1`)
    return `{${members.join(",")}}`
  }],
  ["at the limits: 9,900 wrong events of 100", () => {
    const events = Array.from({ length: 9_900 }, () => JSON.stringify("e".repeat(100)))
    return `{"url":"https://example.com/hook","events":[${events.join(",")}]}`
  }]
]

interface Answer {
  readonly status: number
  readonly cpuMs: number
}

/** Sends `body` and measures the process's CPU time (user + system) until the answer has been read. */
export const post = (server: TestServer, path: string, headers: Record<string, string>, body: string) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const bytes = Buffer.from(body)
    const before = process.cpuUsage()
    const req = httpRequest({
      host: url.hostname, port: url.port, method: "POST", path,
      headers: { ...headers, "content-type": "application/json", "content-length": String(bytes.length) }
    }, (res) => {
      res.resume()
      res.on("end", () => {
        const used = process.cpuUsage(before)
        resolve({ status: res.statusCode ?? 0, cpuMs: (used.user + used.system) / 1000 })
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(bytes)
  })

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const main = async () => {
  const server = await startTestServer({ logLevel: LogLevel.None, accountSettings: { failedLoginsPerIp: 1_000_000, failedLoginsPerAddress: 1_000_000 } })
  // an account per keyed endpoint: each has its own bucket of 120 creates a minute
  const keyOf = async () => ({ authorization: `Bearer ${(await server.createAccount()).liveKey}` })
  const targets: ReadonlyArray<{ readonly name: string; readonly path: string; readonly field: string; readonly headers: Record<string, string> }> = [
    { name: "POST /v1/files (key)", path: "/v1/files", field: "filename", headers: await keyOf() },
    { name: "POST /v1/auth/login (none)", path: "/v1/auth/login", field: "email", headers: {} },
    { name: "POST /v1/webhook_endpoints (key)", path: "/v1/webhook_endpoints", field: "url", headers: await keyOf() }
  ]
  const results = new Map<string, { statuses: Set<number>; cpu: Array<number> }>()
  // warm up: the first of each compiles its code paths
  for (const target of targets) for (const [, body] of BODIES) await post(server, target.path, target.headers, body(target.field))
  for (let run = 0; run < RUNS; run++) {
    for (const target of targets) {
      for (const [name, body] of BODIES) {
        const answer = await post(server, target.path, target.headers, body(target.field))
        const key = `${target.name}  ${name}`
        const entry = results.get(key) ?? { statuses: new Set(), cpu: [] }
        entry.statuses.add(answer.status)
        entry.cpu.push(answer.cpuMs)
        results.set(key, entry)
      }
    }
  }
  await server.close()
  console.log(`${RUNS} runs of each, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}; median CPU ms (× the flat body's)`)
  let worst = { ratio: 0, what: "" }
  for (const target of targets) {
    const flat = median(results.get(`${target.name}  ${BODIES[0]![0]}`)!.cpu)
    console.log(`\n${target.name}, the flat string in ${target.field}`)
    for (const [name] of BODIES) {
      const entry = results.get(`${target.name}  ${name}`)!
      const ms = median(entry.cpu)
      console.log(`  ${name.padEnd(48)} ${[...entry.statuses].join("/")}  ${ms.toFixed(1).padStart(7)} ms  ×${(ms / flat).toFixed(2)}`)
      if (ms / flat > worst.ratio) worst = { ratio: ms / flat, what: `${name} to ${target.name}` }
    }
  }
  console.log(`\nworst: ×${worst.ratio.toFixed(2)} the flat body's (${worst.what}); the bound is ×3`)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
