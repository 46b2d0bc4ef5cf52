/**
 * The machine-readable description (GET /v1/openapi.json) and the browsable reference (/docs).
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"

/** The spec's Endpoints table: method, path, success status. */
const ENDPOINTS: ReadonlyArray<readonly [string, string, string]> = [
  ["post", "/v1/audio/denoise", "202"],
  ["get", "/v1/credits", "200"],
  ["post", "/v1/files", "201"],
  ["get", "/v1/files/{file_id}", "200"],
  ["delete", "/v1/files/{file_id}", "204"],
  ["post", "/v1/files/{file_id}/complete", "202"],
  ["get", "/v1/health", "200"],
  ["get", "/v1/jobs", "200"],
  ["get", "/v1/jobs/{job_id}", "200"],
  ["post", "/v1/jobs/{job_id}/cancel", "200"],
  ["get", "/v1/jobs/{job_id}/output", "200"],
  ["get", "/v1/me", "200"],
  ["get", "/v1/models", "200"],
  ["get", "/v1/models/{provider}/{model}", "200"],
  ["get", "/v1/status", "200"]
]

/** decisions.md's dashboard paths (with checkout and the payment webhook), plus password change. */
const DASHBOARD: ReadonlyArray<readonly [string, string, string]> = [
  ["post", "/v1/auth/signup", "201"],
  ["post", "/v1/auth/login", "200"],
  ["post", "/v1/auth/logout", "204"],
  ["get", "/v1/auth/session", "200"],
  ["get", "/v1/auth/csrf", "200"],
  ["post", "/v1/auth/email/verify", "200"],
  ["post", "/v1/auth/email/resend", "202"],
  ["post", "/v1/auth/password/forgot", "202"],
  ["post", "/v1/auth/password/reset", "200"],
  ["post", "/v1/auth/password/change", "200"],
  ["post", "/v1/auth/oauth/{provider}/start", "200"],
  ["get", "/v1/auth/oauth/{provider}/callback", "302"],
  ["get", "/v1/dashboard/account", "200"],
  ["patch", "/v1/dashboard/account", "200"],
  ["get", "/v1/dashboard/keys", "200"],
  ["post", "/v1/dashboard/keys", "201"],
  ["post", "/v1/dashboard/keys/{key_id}/revoke", "200"],
  ["get", "/v1/dashboard/credits", "200"],
  ["get", "/v1/dashboard/ledger", "200"],
  ["get", "/v1/dashboard/usage", "200"],
  ["get", "/v1/dashboard/jobs", "200"],
  ["get", "/v1/dashboard/jobs/{job_id}", "200"],
  ["get", "/v1/dashboard/jobs/{job_id}/output", "200"],
  ["post", "/v1/dashboard/checkout", "201"],
  // Web dashboard: doing the work (live mode, the keyed API's rules)
  ["post", "/v1/dashboard/files", "201"],
  ["get", "/v1/dashboard/files/{file_id}", "200"],
  ["post", "/v1/dashboard/files/{file_id}/complete", "202"],
  ["post", "/v1/dashboard/audio/denoise", "202"],
  ["post", "/v1/dashboard/jobs/{job_id}/cancel", "200"],
  ["get", "/v1/dashboard/jobs/{job_id}/input", "200"],
  ["get", "/v1/dashboard/webhook_endpoints", "200"],
  ["post", "/v1/dashboard/webhook_endpoints", "201"],
  ["delete", "/v1/dashboard/webhook_endpoints/{endpoint_id}", "204"],
  ["get", "/v1/dashboard/webhook_endpoints/{endpoint_id}/deliveries", "200"],
  ["post", "/v1/dashboard/webhook_endpoints/{endpoint_id}/test", "202"],
  ["post", "/v1/webhooks/payments", "200"]
]

/** decisions.md, Events (outbound webhooks): keyed, scope webhooks:write. */
const WEBHOOKS: ReadonlyArray<readonly [string, string, string]> = [
  ["post", "/v1/webhook_endpoints", "201"],
  ["get", "/v1/webhook_endpoints", "200"],
  ["get", "/v1/webhook_endpoints/{endpoint_id}", "200"],
  ["delete", "/v1/webhook_endpoints/{endpoint_id}", "204"],
  ["get", "/v1/webhook_endpoints/{endpoint_id}/deliveries", "200"],
  ["post", "/v1/webhook_endpoints/{endpoint_id}/test", "202"]
]

/** Open to anyone: no key, no session (the session's own paths check it). */
const SESSIONLESS = new Set([
  "/v1/auth/signup", "/v1/auth/login", "/v1/auth/csrf", "/v1/auth/email/verify", "/v1/auth/password/forgot",
  "/v1/auth/password/reset", "/v1/auth/oauth/{provider}/start", "/v1/auth/oauth/{provider}/callback",
  // the payment provider's: its signature is the authentication
  "/v1/webhooks/payments"
])

const PUBLIC = new Set(["/v1/health", "/v1/models", "/v1/models/{provider}/{model}", "/v1/status"])

const refsOf = (node: unknown, found: Set<string> = new Set()): Set<string> => {
  if (Array.isArray(node)) node.forEach((n) => refsOf(n, found))
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") found.add(value)
      else refsOf(value, found)
    }
  }
  return found
}

describe("OpenAPI description", () => {
  let server: TestServer
  let spec: any
  beforeAll(async () => {
    server = await startTestServer()
    const response = await fetch(`${server.baseUrl}/v1/openapi.json`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(response.headers.get("x-request-id")).toMatch(/^req_/)
    spec = await response.json()
  })
  afterAll(async () => {
    await server.close()
  })

  it("is a valid OpenAPI 3.1 document, version 1.0.0", async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(spec))
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
    expect(spec.openapi).toBe("3.1.0")
    expect(spec.info.version).toBe("1.0.0")
    expect(typeof spec.info.title).toBe("string")
  })

  it("has every reference resolvable inside the document", () => {
    for (const ref of refsOf(spec)) {
      expect(ref, ref).toMatch(/^#\//)
      const target = ref.slice(2).split("/").reduce((node: any, part) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], spec)
      expect(target, `dangling ${ref}`).toBeDefined()
    }
  })

  it("lists exactly the spec's 15 endpoints, the webhook endpoints and the dashboard's paths, with their success statuses and security", () => {
    const listed: Array<string> = []
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      for (const method of Object.keys(item)) {
        if (["get", "post", "put", "patch", "delete"].includes(method)) listed.push(`${method} ${path}`)
      }
    }
    expect(listed.sort()).toEqual([...ENDPOINTS, ...WEBHOOKS, ...DASHBOARD].map(([m, p]) => `${m} ${p}`).sort())
    const schemes = spec.components.securitySchemes
    const bearer = Object.keys(schemes).find((name) => schemes[name].type === "http")!
    const cookie = Object.keys(schemes).find((name) => schemes[name].type === "apiKey")!
    expect(schemes[bearer]).toMatchObject({ type: "http", scheme: "bearer" })
    expect(schemes[cookie]).toMatchObject({ type: "apiKey", in: "cookie", name: "__Host-hush_session" })
    for (const [method, path, status] of [...ENDPOINTS, ...WEBHOOKS, ...DASHBOARD]) {
      const operation = spec.paths[path][method]
      const successes = Object.keys(operation.responses).filter((s) => /^[23]/.test(s))
      expect(successes, `${method} ${path}`).toEqual([status])
      // keyed endpoints carry the bearer security, the dashboard's the cookie, public ones none
      const security = (operation.security ?? []).flatMap((s: object) => Object.keys(s))
      const expected = PUBLIC.has(path) || SESSIONLESS.has(path) ? [] : path.startsWith("/v1/auth/") || path.startsWith("/v1/dashboard/") ? [cookie] : [bearer]
      expect(security, `${method} ${path}`).toEqual(expected)
    }
  })

  it("documents the X-CSRF-Token header on the dashboard's unsafe requests", () => {
    for (const [method, path] of DASHBOARD) {
      if (method === "get" || SESSIONLESS.has(path) && !path.endsWith("/start")) continue
      const headers = (spec.paths[path][method].parameters ?? []).filter((p: any) => p.in === "header").map((p: any) => p.name.toLowerCase())
      expect(headers, `${method} ${path}`).toContain("x-csrf-token")
    }
    for (const [path, status] of [["/v1/dashboard/keys", "403"], ["/v1/auth/signup", "403"], ["/v1/auth/login", "401"], ["/v1/auth/login", "429"]] as const) {
      expect(spec.paths[path].post.responses[status], `${path} ${status}`).toBeDefined()
    }
  })

  it("describes every error response as application/problem+json", () => {
    const problem = spec.components.schemas.ProblemDetails
    expect(problem.required).toEqual(expect.arrayContaining(["type", "title", "status", "detail", "code", "request_id"]))
    for (const [method, path] of ENDPOINTS) {
      const responses = spec.paths[path][method].responses
      const errors = Object.keys(responses).filter((s) => Number(s) >= 400)
      expect(errors.length, `${method} ${path}`).toBeGreaterThan(0)
      for (const status of errors) {
        expect(Object.keys(responses[status].content), `${method} ${path} ${status}`).toEqual(["application/problem+json"])
        expect(responses[status].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/ProblemDetails" })
      }
      expect(responses["400"]).toBeDefined()
      expect(responses["405"]).toBeDefined()
      expect(responses["500"]).toBeDefined()
      if (!PUBLIC.has(path)) {
        expect(responses["401"], `${method} ${path}`).toBeDefined()
        expect(responses["403"], `${method} ${path}`).toBeDefined()
      }
      // every response documents X-Request-Id
      for (const response of Object.values<any>(responses)) expect(response.headers?.["X-Request-Id"]).toBeDefined()
    }
    // the statuses the handlers can answer are listed where they occur
    const denoise = spec.paths["/v1/audio/denoise"].post.responses
    for (const status of ["402", "403", "404", "409", "413", "422", "429"]) expect(denoise[status], status).toBeDefined()
    expect(spec.paths["/v1/jobs/{job_id}/output"].get.responses["410"]).toBeDefined()
    expect(spec.paths["/v1/files"].post.responses["415"]).toBeDefined()
    expect(spec.paths["/v1/health"].get.responses["429"]).toBeUndefined()
  })

  it("describes the request bodies and the job list's query parameters", () => {
    const body = (path: string) => spec.paths[path].post.requestBody
    expect(body("/v1/files").required).toBe(true)
    expect(Object.keys(body("/v1/files").content)).toEqual(["application/json"])
    expect(body("/v1/audio/denoise").required).toBe(true)
    expect(body("/v1/files/{file_id}/complete").required).toBe(false)
    const params = spec.paths["/v1/jobs"].get.parameters.map((p: any) => `${p.in}:${p.name}`).sort()
    expect(params).toEqual(["query:cursor", "query:limit", "query:model", "query:status"])
  })

  it("documents Idempotency-Key on exactly the POSTs that take it, and the replay headers", () => {
    const withKey = [...ENDPOINTS, ...WEBHOOKS, ...DASHBOARD].filter(([method, path]) =>
      (spec.paths[path][method].parameters ?? []).some((p: any) => p.in === "header" && p.name.toLowerCase() === "idempotency-key"))
    expect(withKey.map(([method, path]) => `${method} ${path}`).sort()).toEqual([
      "post /v1/audio/denoise", "post /v1/dashboard/audio/denoise", "post /v1/dashboard/checkout", "post /v1/dashboard/files",
      "post /v1/dashboard/files/{file_id}/complete", "post /v1/dashboard/jobs/{job_id}/cancel", "post /v1/dashboard/keys",
      "post /v1/dashboard/webhook_endpoints", "post /v1/files", "post /v1/files/{file_id}/complete",
      "post /v1/jobs/{job_id}/cancel", "post /v1/webhook_endpoints"
    ])
    const responses = spec.paths["/v1/audio/denoise"].post.responses
    for (const status of ["202", "402", "409"]) {
      expect(Object.keys(responses[status].headers), status).toEqual(expect.arrayContaining(["Idempotent-Replayed", "Original-Request-Id"]))
    }
    // 429 and 5xx are never recorded, so never replayed
    for (const status of ["429", "500"]) expect(responses[status].headers["Idempotent-Replayed"], status).toBeUndefined()
  })

  it("serves the browsable reference at /docs", async () => {
    const docs = await fetch(`${server.baseUrl}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
    expect((await docs.text()).toLowerCase()).toContain("<html")
  })
})
