/**
 * Keys, scopes and account states over HTTP (spec, Authentication; decisions.md, Accounts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { changeAccountStatus, createKey, revokeKey } from "../../core/services/accounts.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, createFile, credits, denoise, expectProblem, readyFile } from "./helpers.js"

describe("authentication", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("answers 401 unauthorized for a missing, malformed or unknown key", async () => {
    const { liveKey } = await server.createAccount()
    const unknown = `hush_live_${"a".repeat(52)}`
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: "" },
      { authorization: liveKey }, // no Bearer
      { authorization: `Basic ${Buffer.from(`${liveKey}:`).toString("base64")}` },
      { authorization: "Bearer " },
      { authorization: "Bearer not-a-key" },
      { authorization: `Bearer hush_prod_${"a".repeat(52)}` },
      { authorization: `Bearer ${liveKey.slice(0, -1)}` },
      { authorization: `Bearer ${unknown}` }
    ]
    for (const headers of cases) {
      for (const [method, path] of [["GET", "/v1/me"], ["GET", "/v1/jobs"], ["POST", "/v1/files"], ["GET", "/v1/credits"]] as const) {
        const reply = await call(server, method, path, { headers, ...(method === "POST" ? { body: { filename: "a.wav", size_bytes: 1, content_type: "audio/wav" } } : {}) })
        await expectProblem(server, reply, 401, "unauthorized")
      }
    }
    // the same key with Bearer works, in any case of the scheme
    expect((await call(server, "GET", "/v1/me", { headers: { authorization: `bearer ${liveKey}` } })).status).toBe(200)
  })

  it("answers GET /v1/me with the calling key", async () => {
    const account = await server.createAccount(1_500_000)
    const me = await call(server, "GET", "/v1/me", { key: account.liveKey })
    expect(me.status).toBe(200)
    expect(me.json).toEqual({
      account_id: account.account.id,
      key_id: account.liveKeyId,
      mode: "live",
      scopes: expect.arrayContaining(["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"]),
      balance: { balance_micros: 1_500_000, reserved_micros: 0, available_micros: 1_500_000, currency: "usd", display: "$1.50" }
    })
    expect(me.json.scopes).toHaveLength(5)
    const test = await call(server, "GET", "/v1/me", { key: account.testKey })
    expect(test.json).toMatchObject({ account_id: account.account.id, key_id: account.testKeyId, mode: "test" })
  })

  it("stops a revoked key on the next request", async () => {
    const account = await server.createAccount()
    const extra = await server.run(createKey(account.account.id, { mode: "live", name: "to revoke" }))
    expect((await call(server, "GET", "/v1/me", { key: extra.key })).status).toBe(200)
    await server.run(revokeKey(account.account.id, extra.record.id))
    await expectProblem(server, await call(server, "GET", "/v1/me", { key: extra.key }), 401, "unauthorized")
    await expectProblem(server, await createFile(server, extra.key, { size_bytes: 10 }), 401, "unauthorized")
    // the account's other keys keep working
    expect((await call(server, "GET", "/v1/me", { key: account.liveKey })).status).toBe(200)
  })

  it("answers 403 insufficient_scope naming the missing scope", async () => {
    const account = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, account.liveKey)
    const job = await denoise(server, account.liveKey, { file: fileId })
    const key = async (scopes: Array<"files:write" | "jobs:write" | "jobs:read" | "credits:read">) =>
      (await server.run(createKey(account.account.id, { mode: "live", scopes }))).key

    const readOnly = await key(["jobs:read"])
    let problem = await expectProblem(server, await createFile(server, readOnly, { size_bytes: 10 }), 403, "insufficient_scope")
    expect(problem.detail).toContain("files:write")
    problem = await expectProblem(server, await call(server, "DELETE", `/v1/files/${fileId}`, { key: readOnly }), 403, "insufficient_scope")
    expect(problem.detail).toContain("files:write")
    problem = await expectProblem(server, await call(server, "POST", `/v1/files/${fileId}/complete`, { key: readOnly }), 403, "insufficient_scope")
    expect(problem.detail).toContain("files:write")
    problem = await expectProblem(server, await denoise(server, readOnly, { file: fileId }), 403, "insufficient_scope")
    expect(problem.detail).toContain("jobs:write")
    problem = await expectProblem(server, await call(server, "POST", `/v1/jobs/${job.json.id}/cancel`, { key: readOnly }), 403, "insufficient_scope")
    expect(problem.detail).toContain("jobs:write")
    problem = await expectProblem(server, await call(server, "GET", "/v1/credits", { key: readOnly }), 403, "insufficient_scope")
    expect(problem.detail).toContain("credits:read")
    // what it may do
    expect((await call(server, "GET", "/v1/jobs", { key: readOnly })).status).toBe(200)
    expect((await call(server, "GET", `/v1/jobs/${job.json.id}`, { key: readOnly })).status).toBe(200)
    // /v1/me works for any key; the balance is shown only with credits:read
    const me = await call(server, "GET", "/v1/me", { key: readOnly })
    expect(me.status).toBe(200)
    expect(me.json.scopes).toEqual(["jobs:read"])
    expect(me.json.balance ?? null).toBeNull()

    const writer = await key(["files:write", "jobs:write"])
    for (const path of ["/v1/jobs", `/v1/jobs/${job.json.id}`, `/v1/jobs/${job.json.id}/output`]) {
      problem = await expectProblem(server, await call(server, "GET", path, { key: writer }), 403, "insufficient_scope")
      expect(problem.detail).toContain("jobs:read")
    }
    // nothing was created or changed by the refused calls
    expect((await call(server, "GET", `/v1/jobs/${job.json.id}`, { key: account.liveKey })).json.status).toBe("queued")
    expect((await call(server, "GET", `/v1/files/${fileId}`, { key: account.liveKey })).json.status).toBe("ready")
  })

  it("blocks only new jobs of a suspended account (403 account_suspended)", async () => {
    const account = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, account.liveKey)
    const queued = await denoise(server, account.liveKey, { file: fileId })
    await server.run(changeAccountStatus(account.account.id, "suspend"))
    await expectProblem(server, await denoise(server, account.liveKey, { file: fileId }), 403, "account_suspended")
    await expectProblem(server, await denoise(server, account.testKey, { file: fileId }), 403, "account_suspended")
    expect((await credits(server, account.liveKey)).reserved_micros).toBe(1_000)
    // everything else still works
    expect((await call(server, "GET", "/v1/me", { key: account.liveKey })).status).toBe(200)
    expect((await createFile(server, account.liveKey, { size_bytes: 10 })).status).toBe(201)
    expect((await call(server, "GET", "/v1/jobs", { key: account.liveKey })).json.data).toHaveLength(1)
    expect((await call(server, "POST", `/v1/jobs/${queued.json.id}/cancel`, { key: account.liveKey })).status).toBe(200)
    await server.run(changeAccountStatus(account.account.id, "unsuspend"))
    expect((await denoise(server, account.liveKey, { file: fileId })).status).toBe(202)
  })

  it("blocks every keyed request of a frozen account (403 account_frozen), public ones still answer", async () => {
    const account = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, account.liveKey)
    await server.run(changeAccountStatus(account.account.id, "dispute_opened"))
    const requests: Array<[string, string, unknown?]> = [
      ["GET", "/v1/me"], ["GET", "/v1/credits"], ["GET", "/v1/jobs"], ["GET", `/v1/files/${fileId}`],
      ["DELETE", `/v1/files/${fileId}`], ["POST", `/v1/files/${fileId}/complete`],
      ["POST", "/v1/files", { filename: "a.wav", size_bytes: 10, content_type: "audio/wav" }],
      ["POST", "/v1/audio/denoise", { file: fileId }]
    ]
    for (const key of [account.liveKey, account.testKey]) {
      for (const [method, path, body] of requests) {
        await expectProblem(server, await call(server, method, path, { key, ...(body === undefined ? {} : { body }) }), 403, "account_frozen")
      }
    }
    expect((await call(server, "GET", "/v1/models")).status).toBe(200)
    expect((await call(server, "GET", "/v1/health")).status).toBe(200)
    await server.run(changeAccountStatus(account.account.id, "dispute_won"))
    expect((await call(server, "GET", `/v1/files/${fileId}`, { key: account.liveKey })).json.status).toBe("ready")
  })
})
