/**
 * The edge's defences (issue 9), over real HTTP: a path spelled otherwise than the spec lists
 * is 404 and reaches nothing; rate buckets follow the key, however `Authorization` is spelled;
 * requests without a valid key or session are limited per IP; a replay goes only to a caller
 * holding the endpoint's scope; expired idempotency records are purged by the sweeper.
 */
import { request as httpRequest } from "node:http"
import { Effect, Option } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { IdempotencyRepo } from "../../core/ports/repositories.js"
import { createKey } from "../../core/services/accounts.js"
import { sweepLifecycle } from "../../core/services/lifecycle.js"
import { makeAdjustableClock } from "../support/clock.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, createFile, expectProblem } from "./helpers.js"

/** A request exactly as written: `fetch` would normalise some of these paths. */
const raw = (server: TestServer, method: string, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; text: string }>((resolve, reject) => {
    const url = new URL(server.baseUrl)
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    if (body !== undefined) req.write(body)
    req.end()
  })

const FILE_BODY = JSON.stringify({ filename: "a.wav", size_bytes: 10, content_type: "audio/wav" })

describe("the edge", () => {
  const clock = makeAdjustableClock()
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ clock })
  })
  afterEach(() => clock.reset())
  afterAll(async () => {
    await server.close()
  })

  it("answers 404 to every other spelling of a path, and creates nothing", async () => {
    const account = await server.createAccount()
    const json = { authorization: `Bearer ${account.testKey}`, "content-type": "application/json" }
    for (const path of [
      "/v1/files/", "/V1/FILES", "/v1/Files", "//v1/files", "/v1//files", "/v1/%66iles", "/v1/files%2F", "/v1/files;x",
      "/v1/./files", "/v1/files/../files", "/v1/audio/denoise/", "/V1/audio/denoise"
    ]) {
      const reply = await raw(server, "POST", path, json, FILE_BODY)
      expect({ path, status: reply.status, code: JSON.parse(reply.text).code }).toEqual({ path, status: 404, code: "not_found" })
      expect(reply.headers["ratelimit-limit"], path).toBeUndefined()
    }
    for (const path of ["/v1/me/", "/V1/ME", "//v1/me", "/v1/health/", "/v1/%6De", "/%761/me", "/v1/me;x", "/v1/jobs/", "/v1/files//complete"]) {
      expect((await raw(server, "GET", path, json)).status, path).toBe(404)
    }
    // none of them made a file: all 10 open uploads are still free
    for (let i = 0; i < 10; i++) expect((await createFile(server, account.testKey, { size_bytes: 10 })).status).toBe(201)
    await expectProblem(server, await createFile(server, account.testKey, { size_bytes: 10 }), 429, "quota_exceeded")
  })

  it("counts every spelling of one key's Authorization header in one bucket", async () => {
    const account = await server.createAccount()
    clock.freeze()
    const spellings = [`Bearer ${account.liveKey}`, `bearer ${account.liveKey}`, `BEARER  ${account.liveKey}`, `Bearer\t${account.liveKey}`, `bEaReR ${account.liveKey} `]
    for (let i = 0; i < 120; i++) {
      const reply = await raw(server, "POST", "/v1/jobs/job_nosuchjob/cancel", { authorization: spellings[i % spellings.length]! })
      expect(reply.status).toBe(404)
      expect(reply.headers["ratelimit-remaining"]).toBe(String(119 - i))
    }
    for (const spelling of spellings) {
      const limited = await raw(server, "POST", "/v1/jobs/job_nosuchjob/cancel", { authorization: spelling })
      expect(limited.status, JSON.stringify(spelling)).toBe(429)
    }
  })

  it("limits requests without a valid key per IP: a flood of 401s ends in 429", async () => {
    const fresh = await startTestServer({ clock })
    try {
      clock.freeze()
      const attempts = [
        () => call(fresh, "GET", "/v1/me"),
        () => call(fresh, "GET", "/v1/me", { key: "hush_test_notakey" }),
        () => call(fresh, "POST", "/v1/files", { key: "sk_live_x", body: {} }),
        () => call(fresh, "GET", "/v1/dashboard/account")
      ]
      for (let i = 0; i < 120; i++) {
        const reply = await attempts[i % attempts.length]!()
        expect(reply.status).toBe(401)
        expect(reply.headers.get("ratelimit-limit")).toBe("120")
      }
      await expectProblem(fresh, await call(fresh, "GET", "/v1/me"), 429, "rate_limited")
      // the public endpoints share that bucket; health is never limited
      await expectProblem(fresh, await call(fresh, "GET", "/v1/models"), 429, "rate_limited")
      await expectProblem(fresh, await call(fresh, "POST", "/v1/auth/login", { body: { email: "a@example.com", password: "xxxxxxxx" } }), 429, "rate_limited")
      expect((await call(fresh, "GET", "/v1/health")).status).toBe(200)
      // a valid key has its own buckets
      const account = await fresh.createAccount()
      expect((await call(fresh, "GET", "/v1/me", { key: account.liveKey })).status).toBe(200)
    } finally {
      await fresh.close()
    }
  })

  it("replays an idempotent answer only to a key holding the endpoint's scope (403 otherwise)", async () => {
    const account = await server.createAccount()
    const created = await createFile(server, account.testKey, { size_bytes: 10 }, { "idempotency-key": "scoped-replay" })
    expect(created.status).toBe(201)
    const readOnly = (await server.run(createKey(account.account.id, { mode: "test", scopes: ["jobs:read"] }))).key
    const replay = await createFile(server, readOnly, { size_bytes: 10 }, { "idempotency-key": "scoped-replay" })
    const problem = await expectProblem(server, replay, 403, "insufficient_scope")
    expect(replay.headers.get("idempotent-replayed")).toBeNull()
    expect(replay.text).not.toContain(created.json.id)
    expect(problem.detail).toContain("files:write")
    // the key holding the scope still gets the replay
    const again = await createFile(server, account.testKey, { size_bytes: 10 }, { "idempotency-key": "scoped-replay" })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.json.id).toBe(created.json.id)
  })

  it("purges expired idempotency records on the lifecycle sweep", async () => {
    const account = await server.createAccount()
    const first = await createFile(server, account.testKey, { size_bytes: 10 }, { "idempotency-key": "to-expire" })
    expect(first.status).toBe(201)
    const find = () => server.run(Effect.flatMap(IdempotencyRepo, (repo) => repo.get(account.account.id, "test", "to-expire")))
    expect(Option.isSome(await find())).toBe(true)
    clock.advance(24 * 3_600_000 + 1_000)
    await server.run(sweepLifecycle)
    expect(Option.isNone(await find())).toBe(true)
    // the key is free again: a new request runs afresh
    const second = await createFile(server, account.testKey, { size_bytes: 10 }, { "idempotency-key": "to-expire" })
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotent-replayed")).toBeNull()
    expect(second.json.id).not.toBe(first.json.id)
  })
})
