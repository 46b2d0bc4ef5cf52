/**
 * The public endpoints (no key): health, models, one model, status; and X-Request-Id on
 * every response.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, expectIso } from "./helpers.js"

const RNNOISE = {
  id: "xiph/rnnoise",
  object: "model",
  task: "denoise",
  name: expect.any(String),
  description: expect.any(String),
  status: "live",
  pricing: { unit: "second", unit_price_micros: 100, min_units: 10, pricing_version: 1, display: expect.stringMatching(/^\$0\.0001\b/), currency: "usd" },
  limits: { max_bytes: null, max_seconds: null },
  output: { format: "mp3", bitrate_kbps: 192 }
}

describe("public endpoints", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("GET /v1/health: 200 status, version, env", async () => {
    const reply = await call(server, "GET", "/v1/health")
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
    expect(reply.json).toEqual({ status: "ok", version: "1.0.0", env: "test" })
  })

  it("GET /v1/models: 200 list with the default model", async () => {
    const reply = await call(server, "GET", "/v1/models")
    expect(reply.status).toBe(200)
    expect(reply.json.object).toBe("list")
    expect(Object.keys(reply.json).sort()).toEqual(["data", "object"])
    const model = reply.json.data.find((m: any) => m.id === "xiph/rnnoise")
    expect(model).toEqual(RNNOISE)
    for (const m of reply.json.data) {
      expect(m.id).toMatch(/^[^/]+\/[^/]+$/)
      expect(["live", "retired"]).toContain(m.status)
    }
  })

  it("GET /v1/models/{provider}/{model}: 200 with the model, 404 for an unknown one", async () => {
    const reply = await call(server, "GET", "/v1/models/xiph/rnnoise")
    expect(reply.status).toBe(200)
    expect(reply.json).toEqual(RNNOISE)
    expect((await call(server, "GET", "/v1/models/xiph/nothing")).status).toBe(404)
  })

  it("GET /v1/status: 200 with every component", async () => {
    const reply = await call(server, "GET", "/v1/status")
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.json).sort()).toEqual(["components", "status", "updated_at"])
    expect(["ok", "degraded", "down"]).toContain(reply.json.status)
    expect(Object.keys(reply.json.components).sort()).toEqual(["api", "database", "gpu", "queue", "storage"])
    for (const state of Object.values(reply.json.components)) expect(["ok", "degraded", "down", "unknown"]).toContain(state)
    expect(reply.json.components).toMatchObject({ api: "ok", database: "ok", storage: "ok" })
    expectIso(reply.json.updated_at)
  })

  it("needs no key, and ignores one that is sent", async () => {
    for (const path of ["/v1/health", "/v1/models", "/v1/status"]) {
      expect((await call(server, "GET", path, { key: "hush_live_not-a-real-key" })).status).toBe(200)
    }
  })

  it("gives every response a distinct X-Request-Id", async () => {
    const { liveKey } = await server.createAccount()
    const ids = new Set<string>()
    const replies = [
      await call(server, "GET", "/v1/health"),
      await call(server, "GET", "/v1/models"),
      await call(server, "GET", "/v1/me", { key: liveKey }),
      await call(server, "GET", "/v1/me"),
      await call(server, "GET", "/v1/unknown"),
      await call(server, "PUT", "/v1/health"),
      await call(server, "GET", "/v1/openapi.json"),
      await call(server, "GET", "/errors/not_found"),
      await call(server, "GET", "/storage/inputs/x")
    ]
    for (const reply of replies) {
      const id = reply.headers.get("x-request-id")
      expect(id).toMatch(/^req_[a-z2-7]{20,}$/)
      ids.add(id!)
    }
    expect(ids.size).toBe(replies.length)
  })
})
