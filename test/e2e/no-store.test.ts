/**
 * `Cache-Control: no-store` (decisions.md, Requests and errors) on every answer of every
 * session and dashboard endpoint the OpenAPI description lists, whatever it answers
 * (success, refusal, 401 without a session), and on the answers that carry a secret; not on the
 * public API's ordinary answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { Browser, verifiedUser } from "./browser.js"
import { call } from "./helpers.js"

interface Operation {
  readonly method: string
  readonly path: string
}

describe("Cache-Control: no-store", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ accountSettings: { signupsPerHourPerIp: 1_000 } })
  })
  afterAll(async () => {
    await server.close()
  })

  /**
   * The session and dashboard operations of the OpenAPI descriptions (the public one lists them
   * today; decisions.md moves them to openapi.dashboard.json: both are read); logout last, as
   * it ends the session.
   */
  const sessionOperations = async (): Promise<ReadonlyArray<Operation>> => {
    const paths: Record<string, Record<string, unknown>> = {}
    for (const document of ["/v1/openapi.json", "/v1/openapi.dashboard.json"]) {
      const reply = await call(server, "GET", document)
      if (reply.status === 200) Object.assign(paths, reply.json.paths)
    }
    const operations: Array<Operation> = []
    for (const [path, item] of Object.entries(paths)) {
      if (!path.startsWith("/v1/auth/") && !path.startsWith("/v1/dashboard/")) continue
      for (const method of Object.keys(item)) {
        if (["get", "post", "put", "patch", "delete"].includes(method)) operations.push({ method: method.toUpperCase(), path })
      }
    }
    const isLogout = (o: Operation) => o.path === "/v1/auth/logout"
    return [...operations.filter((o) => !isLogout(o)), ...operations.filter(isLogout)]
  }

  /** The path with each `{parameter}` filled: `github` for a provider (not configured: 404), an unknown id otherwise. */
  const concrete = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => (name === "provider" ? "github" : `${name.split("_")[0]}_unknown`))

  it("on every answer of every /v1/auth and /v1/dashboard operation in the description, signed in and not", async () => {
    const operations = await sessionOperations()
    // the description lists them all: the account's, keys', credit's, jobs', work's and webhooks' among them
    expect(operations.length).toBeGreaterThanOrEqual(35)
    for (const path of ["/v1/auth/session", "/v1/dashboard/keys", "/v1/dashboard/files", "/v1/dashboard/webhook_endpoints"]) {
      expect(operations.map((o) => o.path)).toContain(path)
    }
    const { browser } = await verifiedUser(server)
    const statuses = new Set<number>()
    for (const { method, path } of operations) {
      const url = concrete(path)
      const body = method === "GET" || method === "DELETE" ? undefined : {}
      for (const who of [new Browser(server), browser]) {
        const reply = await who.request(method, url, body === undefined ? {} : { body })
        statuses.add(reply.status)
        expect(reply.headers.get("cache-control"), `${method} ${url} → ${reply.status} ${reply.text.slice(0, 200)}`).toBe("no-store")
      }
    }
    // successes and refusals alike were checked, not only one kind of answer
    for (const status of [200, 401, 404, 422]) expect(statuses).toContain(status)
  })

  it("on the answers that carry a secret, successes and a replay: session, key creation, webhook endpoint creation", async () => {
    const { browser } = await verifiedUser(server)
    const session = await browser.request("GET", "/v1/auth/session")
    expect(session.status).toBe(200)
    expect(session.headers.get("cache-control")).toBe("no-store")
    const created = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test", name: "k" }, headers: { "idempotency-key": "no-store-1" } })
    expect(created.status, created.text).toBe(201)
    const replayed = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test", name: "k" }, headers: { "idempotency-key": "no-store-1" } })
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    for (const reply of [created, replayed]) expect(reply.headers.get("cache-control")).toBe("no-store")

    const account = await server.createAccount()
    const endpoint = await call(server, "POST", "/v1/webhook_endpoints", { key: account.testKey, body: { url: "https://93.184.215.14/hooks", events: ["file.ready"] } })
    expect(endpoint.status, endpoint.text).toBe(201)
    expect(endpoint.json.secret).toMatch(/^whsec_/)
    expect(endpoint.headers.get("cache-control")).toBe("no-store")
    // a path no endpoint has under /v1/dashboard/ too; the public API's ordinary answers are left alone
    expect((await browser.request("GET", "/v1/dashboard/nothing-here")).headers.get("cache-control")).toBe("no-store")
    expect((await call(server, "GET", "/v1/health")).headers.get("cache-control")).toBeNull()
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key: account.testKey })).headers.get("cache-control")).toBeNull()
  })
})
