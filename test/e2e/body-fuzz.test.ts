/**
 * Hostile bodies, fuzzed (issue 29; decisions.md, Requests and errors): 1,000 requests spread
 * over every endpoint of the HttpApi definition that takes a body, and every query, each a
 * valid request with one part made hostile (a value nested thousands deep, tens of thousands
 * wide, a string with control characters, a string up to past 1 MiB, a number JSON cannot
 * hold, an unknown field, a root that is not an object), sent with the caller the endpoint
 * wants or none. Whatever comes in: never a 5xx, and no `detail` quotes more than 100
 * characters of anything sent. Then the CPU an in-process server spends on a 1 MiB body nested
 * deep or wide, or holding 9,900 wrong values, stays within 3× a flat one's (medians of
 * process.cpuUsage over rounds taken in turn: a ratio of CPU time, which a loaded machine slows
 * alike; bench/hostile-bodies.ts gives the numbers). Time is frozen during each request and moved on between them, so buckets refill.
 */
import { HttpApi, type HttpApiEndpoint } from "@effect/platform"
import fc from "fast-check"
import { request as httpRequest } from "node:http"
import { Option, SchemaAST } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HushApi } from "../../apps/api/contract/definition.js"
import { factsOfEndpoint } from "../../apps/api/server/edge/facts.js"
import { makeAdjustableClock } from "../support/clock.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { Browser, PASSWORD, verifiedUser } from "./browser.js"
import { call, denoise, readyFile } from "./helpers.js"

interface Target {
  readonly name: string
  readonly method: string
  /** As declared: `/v1/files/:file_id`. */
  readonly path: string
  readonly caller: "key" | "session" | "none"
  /** The query's field names (GET endpoints), else the body's. */
  readonly queryFields: ReadonlyArray<string>
}

const fieldsOf = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  const type = SchemaAST.isTransformation(ast) ? ast.to : ast
  return SchemaAST.isTypeLiteral(type) ? type.propertySignatures.map((p) => String(p.name)) : []
}

/** Every endpoint with a body (POST, PATCH, PUT) or a query, from the HttpApi definition. */
const targets = (): ReadonlyArray<Target> => {
  const found: Array<Target> = []
  HttpApi.reflect(HushApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const props = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      const caller = factsOfEndpoint(endpoint.name)!.caller
      const query = Option.isSome(props.urlParamsSchema) ? fieldsOf(props.urlParamsSchema.value.ast) : []
      const hasBody = endpoint.method === "POST" || endpoint.method === "PATCH" || endpoint.method === "PUT"
      if (hasBody || query.length > 0) found.push({ name: endpoint.name, method: endpoint.method, path: endpoint.path, caller, queryFields: query })
    }
  })
  return found
}

/** A valid body per endpoint (`{}` where none is listed), which each run makes hostile in one place. */
const baseBodies = (ids: { ready: string }): Record<string, Record<string, string>> => {
  const file = { filename: "\"a.wav\"", size_bytes: "1000", content_type: "\"audio/wav\"" }
  const job = { file: JSON.stringify(ids.ready), strength: "0.5", output: "{\"format\":\"mp3\",\"loudness\":null}" }
  const webhook = { url: "\"http://127.0.0.1:9999/hook\"", events: "[\"job.succeeded\"]", description: "\"d\"" }
  return {
    createFile: file, createDashboardFile: file,
    completeFile: { parts: "null" }, completeDashboardFile: { parts: "null" },
    createDenoiseJob: job, createDashboardDenoiseJob: job,
    createWebhookEndpoint: webhook, createDashboardWebhookEndpoint: webhook,
    signup: { email: "\"fuzz-signup@example.com\"", password: "\"long enough password\"", accept_terms: "true" },
    login: { email: "\"fuzz-login@example.com\"", password: "\"wrong password\"" },
    verifyEmail: { token: "\"x\"" },
    forgotPassword: { email: "\"nobody@example.com\"" },
    resetPassword: { token: "\"x\"", password: "\"long enough password\"" },
    oauthStart: { accept_terms: "true" },
    // a wrong current password: the session's own stays as it is
    changePassword: { password: "\"not the password\"", new_password: "\"long enough password\"" },
    updateAccount: { name: "\"Fuzz\"" },
    createKey: { mode: "\"test\"", name: "\"k\"", scopes: "null" },
    createCheckout: { amount_micros: "10000000" }
  }
}

const CONTROL = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code))
const TEXT_UNIT = fc.oneof({ weight: 3, arbitrary: fc.constantFrom("a", "é", "[", "{", ",", "\"", "\\", "✓", "😀") }, { weight: 1, arbitrary: CONTROL })

/** A hostile JSON value, as text (never built as a value: JSON.stringify would recurse as deep). */
const hostileValue: fc.Arbitrary<{ readonly text: string; readonly long: ReadonlyArray<string> }> = fc.oneof(
  fc.record({ depth: fc.integer({ min: 2, max: 3_000 }), open: fc.constantFrom("[", "{\"a\":", "[{\"b\":") }).map(({ depth, open }) => {
    const close = open === "[" ? "]" : open === "{\"a\":" ? "}" : "}]"
    return { text: `${open.repeat(depth)}0${close.repeat(depth)}`, long: [] }
  }),
  fc.record({ count: fc.integer({ min: 100, max: 25_000 }), object: fc.boolean() }).map(({ count, object }) => ({
    text: object ? `{${Array.from({ length: count }, (_, i) => `"k${i}":0`).join(",")}}` : `[${Array(count).fill("0").join(",")}]`,
    long: []
  })),
  fc.string({ unit: TEXT_UNIT, maxLength: 200 }).map((s) => ({ text: JSON.stringify(s), long: s.length > 100 ? [s] : [] })),
  fc.record({ length: fc.oneof(fc.integer({ min: 101, max: 5_000 }), fc.integer({ min: 900_000, max: 1_100_000 })), unit: fc.constantFrom("x", "ab", "\u0000", "é") })
    .map(({ length, unit }) => {
      const s = unit.repeat(Math.ceil(length / unit.length)).slice(0, length)
      return { text: JSON.stringify(s), long: [s] }
    }),
  fc.constantFrom("1e400", "-1e400", "1e-400", "-0", "123456789012345678901234567890", "true", "null", "\"\"", "[]", "{}").map((text) => ({ text, long: [] })),
  fc.jsonValue({ maxDepth: 4 }).map((value) => ({ text: JSON.stringify(value), long: [] }))
)

const objectText = (fields: ReadonlyArray<readonly [string, string]>) => `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`

interface Sent {
  readonly status: number
  readonly text: string
}

const send = (server: TestServer, method: string, path: string, headers: Record<string, string>, body: string | undefined) =>
  new Promise<Sent>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const bytes = body === undefined ? undefined : Buffer.from(body)
    const allHeaders = bytes === undefined ? headers : { ...headers, "content-length": String(bytes.length) }
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: allHeaders }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    // a body over the cap may be answered (413) before it is all sent
    req.on("error", (error: NodeJS.ErrnoException) => (error.code === "EPIPE" || error.code === "ECONNRESET" ? resolve({ status: 0, text: "" }) : reject(error)))
    req.end(bytes)
  })

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

describe("hostile bodies, fuzzed over every endpoint", () => {
  const clock = makeAdjustableClock()
  let server: TestServer
  let testKey: string
  let browser: Browser
  let email: string
  let params: Record<string, string>
  let bodies: ReturnType<typeof baseBodies>
  beforeAll(async () => {
    server = await startTestServer({ clock, webhooksAllowPrivate: true, accountSettings: { signupsPerHourPerIp: 1_000 } })
    const account = await server.createAccount(10_000_000)
    testKey = account.testKey
    const ready = await readyFile(server, testKey)
    const job = (await denoise(server, testKey, { file: ready })).json.id as string
    const endpoint = (await call(server, "POST", "/v1/webhook_endpoints", {
      key: testKey, body: { url: "http://127.0.0.1:9999/hook", events: ["job.succeeded"] }
    })).json.id as string
    const user = await verifiedUser(server)
    browser = user.browser
    email = user.email
    // a key of the session's account for revokeKey to act on (the API key above is another account's)
    const spare = (await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test", name: "spare" } })).json.key.id as string
    params = { file_id: ready, job_id: job, endpoint_id: endpoint, key_id: spare, provider: "github" }
    bodies = baseBodies({ ready })
    clock.freeze()
  }, 60_000)
  afterAll(async () => {
    await server.close()
  })

  const headersFor = (caller: Target["caller"]): Record<string, string> => {
    if (caller === "key") return { authorization: `Bearer ${testKey}` }
    if (caller === "session") {
      return { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; "), "x-csrf-token": browser.csrf ?? "" }
    }
    return {}
  }

  it("never answers 5xx, and no detail quotes more than 100 characters of what was sent (1,000 requests)", async () => {
    const all = targets()
    // the definition's endpoints with a body or a query, all of them (a new one joins by itself)
    expect(all.length).toBeGreaterThanOrEqual(30)
    const reached = new Map<string, number>()
    const statuses = new Map<number, number>()
    const run = fc.record({
      target: fc.nat(),
      // one in five without the caller the endpoint wants
      unauthenticated: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      where: fc.oneof(
        { weight: 5, arbitrary: fc.nat().map((field) => ({ field })) },
        { weight: 2, arbitrary: fc.string({ unit: TEXT_UNIT, maxLength: 300 }).map((unknown) => ({ unknown })) },
        { weight: 1, arbitrary: fc.constant<"root">("root") }
      ),
      value: hostileValue,
      contentType: fc.constantFrom("application/json", "application/json", "application/json; charset=utf-8", undefined)
    })
    await fc.assert(
      fc.asyncProperty(run, async (r) => {
        clock.advance(30_000)
        const target = all[r.target % all.length]!
        const caller = r.unauthenticated ? "none" : target.caller
        const headers = headersFor(caller)
        const long = [...r.value.long]
        let path = target.path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? "x")
        let body: string | undefined
        if (target.method === "GET") {
          // a query: the value as text, percent-encoded (a control character as %00 …), short
          // enough for Node's 16 KiB request head (past it Node answers 431 itself)
          const fields = target.queryFields
          const field = r.where !== "root" && "field" in r.where ? fields[r.where.field % fields.length]! : "unknown"
          const value = r.value.text.slice(0, 2_000)
          path = `${path}?${encodeURIComponent(field)}=${encodeURIComponent(value)}`
          if (value.length > 100) long.push(value)
        } else {
          const base = Object.entries(bodies[target.name] ?? {})
          if (r.where === "root") body = r.value.text
          else if ("unknown" in r.where) {
            body = objectText([...base, [r.where.unknown, r.value.text]])
            if (r.where.unknown.length > 100) long.push(r.where.unknown)
          } else if (base.length === 0) body = objectText([["x", r.value.text]])
          else {
            const replaced = r.where.field % base.length
            body = objectText(base.map(([k, v], i) => [k, i === replaced ? r.value.text : v] as const))
          }
          if (r.contentType !== undefined) headers["content-type"] = r.contentType
        }
        const reply = await send(server, target.method, path, headers, body)
        reached.set(target.name, (reached.get(target.name) ?? 0) + 1)
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
        const context = `${target.method} ${path.slice(0, 200)} (${caller}, ${body?.length ?? 0} characters) → ${reply.status}: ${reply.text.slice(0, 300)}`
        if (reply.status === 0) return // the connection closed while a refused body (over 1 MiB) was still being sent
        expect(reply.status, context).toBeLessThan(500)
        if (reply.status >= 400) {
          expect(reply.text, context).not.toBe("")
          const detail = String(JSON.parse(reply.text).detail)
          for (const sent of long) expect(detail.includes(sent.slice(0, 101)), context).toBe(false)
        }
        // a session ended by the run (logout) is started again, so the session's endpoints go on being reached
        if (caller === "session" && reply.status === 401) {
          const again = await browser.request("POST", "/v1/auth/login", { body: { email, password: PASSWORD } })
          expect(again.status, again.text).toBe(200)
        }
      }),
      { numRuns: 1_000 }
    )
    // every endpoint was reached, and the answers were not all one refusal
    for (const target of all) expect(reached.get(target.name) ?? 0, target.name).toBeGreaterThanOrEqual(5)
    expect([...statuses.keys()].filter((s) => s >= 200 && s < 300).length, JSON.stringify([...statuses])).toBeGreaterThan(0)
    expect(statuses.get(400) ?? 0).toBeGreaterThan(100)
    expect(statuses.get(422) ?? 0).toBeGreaterThan(100)
  }, 180_000)

  it("spends on a 1 MiB body nested deep or wide, or one of 9,900 wrong values, at most 3× the CPU of a flat one (medians of rounds in turn)", async () => {
    const size = 1024 * 1024 - 64
    type Shape = "flat" | "deep" | "wide" | "wrongValues"
    const shaped = (field: string): Partial<Record<Shape, string>> => {
      const head = `{"${field}":`
      const room = size - head.length - 1
      return {
        flat: `${head}${JSON.stringify("a".repeat(room - 2))}}`,
        deep: `${head}${"[".repeat(room / 2)}${"]".repeat(room / 2)}}`,
        wide: `${head}[${"0,".repeat(room / 2 - 2)}0]}`
      }
    }
    // within the edge's limits: 9,900 values of 100 characters, each one wrong (the schema's work)
    const wrongEvents = `{"url":"http://127.0.0.1:9999/hook","events":[${Array(9_900).fill(JSON.stringify("e".repeat(100))).join(",")}]}`
    const endpoints = [
      { path: "/v1/files", caller: "key" as const, bodies: shaped("filename") },
      { path: "/v1/auth/login", caller: "none" as const, bodies: shaped("email") },
      { path: "/v1/dashboard/keys", caller: "session" as const, bodies: shaped("name") },
      { path: "/v1/webhook_endpoints", caller: "key" as const, bodies: { flat: shaped("url").flat, wrongValues: wrongEvents } }
    ]
    const cpu: Record<Shape, Array<number>> = { flat: [], deep: [], wide: [], wrongValues: [] }
    for (let round = 0; round < 10; round++) {
      for (const endpoint of endpoints) {
        for (const [shape, body] of Object.entries(endpoint.bodies) as Array<[Shape, string]>) {
          clock.advance(30_000)
          const headers = { ...headersFor(endpoint.caller), "content-type": "application/json" }
          const before = process.cpuUsage()
          const reply = await send(server, "POST", endpoint.path, headers, body)
          const used = process.cpuUsage(before)
          expect(reply.status, `${shape} ${endpoint.path}: ${reply.text.slice(0, 200)}`).toBe(shape === "flat" || shape === "wrongValues" ? 422 : 400)
          // the first round warms the code paths up
          if (round > 0) cpu[shape].push(used.user + used.system)
        }
      }
    }
    const flat = median(cpu.flat)
    const report = (["flat", "deep", "wide", "wrongValues"] as const).map((shape) => `${shape} ${(median(cpu[shape]) / 1000).toFixed(1)} ms`).join(", ")
    console.log(`CPU per 1 MiB body (medians): ${report}`)
    expect(median(cpu.deep), report).toBeLessThanOrEqual(3 * flat)
    expect(median(cpu.wide), report).toBeLessThanOrEqual(3 * flat)
    expect(median(cpu.wrongValues), report).toBeLessThanOrEqual(3 * flat)
  }, 120_000)
})
