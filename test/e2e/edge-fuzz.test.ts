/**
 * The edge under fuzz (issue 9): 1,000 requests over methods, path spellings, Authorization
 * spellings, Idempotency-Keys, content types and body sizes, against one in-process server
 * on memory adapters. Whatever comes in: never a 5xx; never a 2xx without `RateLimit-*` on a
 * limited route; and a refused request (4xx) leaves the files and jobs as they were.
 * Time is frozen during each request and moved on between them, so buckets refill and no
 * background change can pass for the request's doing.
 */
import fc from "fast-check"
import { request as httpRequest } from "node:http"
import { Clock, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FileRepo, JobRepo } from "../../core/ports/repositories.js"
import { makeAdjustableClock } from "../support/clock.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createFile, denoise, readyFile } from "./helpers.js"

interface RawReply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
}

const send = (server: TestServer, method: string, path: string, headers: Record<string, string>, body: Uint8Array | undefined) =>
  new Promise<RawReply>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }))
      res.on("error", reject)
    })
    // the server may answer (413) before it has read a large body: the write may then fail
    req.on("error", (error) => (error as NodeJS.ErrnoException).code === "EPIPE" || (error as NodeJS.ErrnoException).code === "ECONNRESET"
      ? resolve({ status: 0, headers: {} })
      : reject(error))
    if (body !== undefined) req.write(body)
    req.end()
  })

/** Ways to spell a path that are not the path (decisions.md, Requests): all must be 404. */
const SPELLINGS: ReadonlyArray<(path: string) => string> = [
  (p) => p,
  (p) => p,
  (p) => p,
  (p) => `${p}/`,
  (p) => p.toUpperCase(),
  (p) => p.replace("/v1/", "/V1/"),
  (p) => `/${p}`,
  (p) => p.replace("/v1/", "/v1//"),
  (p) => p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
  (p) => `${p};x=1`,
  (p) => `${p}%2F`,
  (p) => `${p}?unknown=1`
]

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const
const CONTENT_TYPES = [
  undefined, "application/json", "application/json; charset=utf-8", "application/vnd.api+json", "text/plain",
  "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "APPLICATION/JSON", ""
]

describe("the edge, fuzzed", () => {
  const clock = makeAdjustableClock()
  let server: TestServer
  let key: string
  let accountId: string
  let paths: ReadonlyArray<string>
  let bodies: ReadonlyArray<string>
  beforeAll(async () => {
    server = await startTestServer({ clock })
    const account = await server.createAccount(10_000_000)
    key = account.liveKey
    accountId = account.account.id
    const ready = await readyFile(server, key)
    const uploading = (await createFile(server, key, { size_bytes: 1_000 })).json.id as string
    const job = (await denoise(server, key, { file: ready })).json.id as string
    paths = [
      "/v1/health", "/v1/models", "/v1/models/xiph/rnnoise", "/v1/status", "/v1/files", `/v1/files/${ready}`,
      `/v1/files/${uploading}`, `/v1/files/${uploading}/complete`, "/v1/files/file_nosuchfile", "/v1/audio/denoise", "/v1/jobs",
      `/v1/jobs/${job}`, `/v1/jobs/${job}/cancel`, `/v1/jobs/${job}/output`, "/v1/credits", "/v1/me", "/v1/nothing",
      "/v1/auth/csrf", "/v1/auth/login", "/v1/dashboard/keys"
    ]
    bodies = [
      JSON.stringify({ filename: "a.wav", size_bytes: 1_000, content_type: "audio/wav" }),
      JSON.stringify({ file: ready }),
      JSON.stringify({ file: ready, model: "xiph/rnnoise" }),
      JSON.stringify({ file: uploading }),
      "null", "[]", "{", "{}", "\"text\"", JSON.stringify({ filename: "a.wav", size_bytes: -1, content_type: "audio/wav", x: 1 })
    ]
    clock.freeze()
  }, 60_000)
  afterAll(async () => {
    await server.close()
  })

  /** What a refused request must not change: the account's files (open uploads) and jobs. */
  const snapshot = () =>
    server.run(Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const files = yield* FileRepo
      const jobs = yield* JobRepo
      const open = [yield* files.countOpenUploads(accountId, "live", now), yield* files.countOpenUploads(accountId, "test", now)]
      const listed = yield* jobs.list({ accountId, mode: "live", limit: 1_000 })
      return JSON.stringify({ open, jobs: listed.map((j) => j.id).sort() })
    }))

  it("never answers 5xx, never a limited 2xx without RateLimit-*, never changes anything on a refusal", async () => {
    const request = fc.record({
      method: fc.constantFrom(...METHODS),
      path: fc.nat(1_000),
      spelling: fc.integer({ min: 0, max: SPELLINGS.length - 1 }),
      authorization: fc.constantFrom("none", "Bearer K", "bearer K", "BEARER  K", "Bearer\tK", "Bearer K ", "Basic K", "Bearer", "Bearer hush_live_nope"),
      idempotencyKey: fc.option(fc.oneof(fc.string({ maxLength: 8 }), fc.constant("x".repeat(300))), { nil: undefined }),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      body: fc.oneof(
        { weight: 3, arbitrary: fc.constant<"none">("none") },
        { weight: 6, arbitrary: fc.nat(1_000).map((i) => ({ known: i })) },
        { weight: 2, arbitrary: fc.string({ maxLength: 64 }).map((text) => ({ text })) },
        { weight: 1, arbitrary: fc.constantFrom(1024 * 1024 - 2, 1024 * 1024 + 1, 2 * 1024 * 1024).map((size) => ({ size })) }
      )
    })
    let refusals = 0
    let successes = 0
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        clock.advance(30_000)
        const basePath = paths[r.path % paths.length]!
        const path = SPELLINGS[r.spelling]!(basePath)
        const headers: Record<string, string> = {}
        if (r.authorization !== "none") headers["authorization"] = r.authorization.replace("K", key)
        if (r.idempotencyKey !== undefined) headers["idempotency-key"] = r.idempotencyKey.replace(/[^\x20-\x7e]/g, "")
        if (r.contentType !== undefined) headers["content-type"] = r.contentType
        let body: Uint8Array | undefined
        if (r.body !== "none") {
          const text = "known" in r.body ? bodies[r.body.known % bodies.length]! : "text" in r.body ? r.body.text : " ".repeat(r.body.size)
          body = new TextEncoder().encode(text)
          headers["content-length"] = String(body.length)
        }
        const before = await snapshot()
        const reply = await send(server, r.method, path, headers, body)
        const context = `${r.method} ${path} ${JSON.stringify(headers)} → ${reply.status}`
        if (reply.status === 0) return // the connection was closed while a refused body was still being sent
        expect(reply.status, context).toBeLessThan(500)
        const limited = path.startsWith("/v1/") && !path.startsWith("/v1/health")
        if (reply.status >= 200 && reply.status < 300) {
          successes++
          if (limited) expect(reply.headers["ratelimit-limit"], context).toBeDefined()
        }
        // a spelling the spec does not list reaches nothing
        if (path.split("?")[0] !== basePath) expect(reply.status, context).toBe(404)
        if (reply.status >= 400) {
          refusals++
          expect(await snapshot(), context).toBe(before)
        }
      }),
      { numRuns: 1_000 }
    )
    // the generator reached both sides
    expect(successes).toBeGreaterThan(20)
    expect(refusals).toBeGreaterThan(200)
  }, 300_000)
})
