import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"

describe("API smoke", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("answers health with a request id", async () => {
    const response = await fetch(`${server.baseUrl}/v1/health`)
    expect(response.status).toBe(200)
    expect(response.headers.get("x-request-id")).toMatch(/^req_/)
    expect(await response.json()).toEqual({ status: "ok", version: "1.0.0", env: "test" })
  })

  it("knows the caller of a fresh key", async () => {
    const account = await server.createAccount(5_000_000)
    const response = await fetch(`${server.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${account.liveKey}` } })
    expect(response.status).toBe(200)
    const me = (await response.json()) as { account_id: string; balance: { available_micros: number } }
    expect(me.account_id).toBe(account.account.id)
    expect(me.balance.available_micros).toBe(5_000_000)
  })
})
