/**
 * The machine-readable descriptions and their browsable pages (decisions.md, Versioning):
 * `GET /v1/openapi.json` (`/docs`), the public API only, and `GET /v1/openapi.dashboard.json`
 * (`/docs/dashboard`), the dashboard's session and work endpoints and the payment webhook; both
 * compressed, with an ETag. What each operation says (examples, errors, descriptions) is
 * openapi-reference.test.ts; the generated client and Redocly are openapi-clients.test.ts.
 */
import { Validator } from "@seriousme/openapi-schema-validator"
import { request as httpRequest } from "node:http"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allEndpointFacts } from "../../apps/api/server/edge/facts.js"
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

/** decisions.md's dashboard paths (with checkout and the payment webhook), plus password change: the second document's. */
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

const METHODS = ["get", "post", "put", "patch", "delete"]

const operationsOf = (doc: any): Array<string> =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.keys(item).filter((m) => METHODS.includes(m)).map((m) => `${m} ${path}`))

/** A GET as a client that does not decompress sees it: the raw bytes and headers. */
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; body: Buffer }>((resolve, reject) => {
    const request = httpRequest(url, { headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end()
  })

let server: TestServer
let spec: any
let dashboard: any

beforeAll(async () => {
  server = await startTestServer()
  const response = await fetch(`${server.baseUrl}/v1/openapi.json`)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  expect(response.headers.get("x-request-id")).toMatch(/^req_/)
  spec = await response.json()
  dashboard = await (await fetch(`${server.baseUrl}/v1/openapi.dashboard.json`)).json()
})
afterAll(async () => {
  await server?.close()
})

describe("the two OpenAPI documents", () => {
  it("are valid OpenAPI 3.1 documents, version 1.0.0, listing PUBLIC_BASE_URL as their one server", async () => {
    for (const doc of [spec, dashboard]) {
      const validator = new Validator()
      const result = await validator.validate(structuredClone(doc))
      expect(result.errors).toBeUndefined()
      expect(result.valid).toBe(true)
      expect(validator.version).toBe("3.1")
      expect(doc.openapi).toBe("3.1.0")
      expect(doc.info.version).toBe("1.0.0")
      expect(doc.info.title).toEqual(expect.stringMatching(/\S/))
      expect(doc.servers).toEqual([{ url: server.baseUrl, description: expect.any(String) }])
    }
  })

  it("have every reference resolvable inside the document", () => {
    for (const doc of [spec, dashboard]) {
      for (const ref of refsOf(doc)) {
        expect(ref, ref).toMatch(/^#\//)
        const target = ref.slice(2).split("/").reduce((node: any, part) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc)
        expect(target, `dangling ${ref}`).toBeDefined()
      }
    }
  })

  it("/v1/openapi.json lists exactly the spec's 15 endpoints and the webhook endpoints: no dashboard, session or payment-webhook path", () => {
    expect(operationsOf(spec).sort()).toEqual([...ENDPOINTS, ...WEBHOOKS].map(([m, p]) => `${m} ${p}`).sort())
    for (const path of Object.keys(spec.paths)) {
      expect(path, path).not.toMatch(/^\/v1\/(auth|dashboard)\/|^\/v1\/webhooks\/payments$/)
    }
    // nor the session's cookie scheme, nor a schema only the dashboard uses
    expect(Object.keys(spec.components.securitySchemes)).toEqual(["apiKey"])
    for (const name of ["Session", "LoginResponse", "KeyOut", "LedgerEntry", "DashboardJob", "CheckoutRequest"]) {
      expect(Object.keys(spec.components.schemas), name).not.toContain(name)
    }
    expect(JSON.stringify(spec)).not.toContain("__Host-hush_session")
  })

  it("/v1/openapi.dashboard.json lists exactly the dashboard's paths; together the two describe every /v1 endpoint", () => {
    expect(operationsOf(dashboard).sort()).toEqual(DASHBOARD.map(([m, p]) => `${m} ${p}`).sort())
    const served = allEndpointFacts().filter((f) => f.path.startsWith("/v1/"))
      .map((f) => `${f.method.toLowerCase()} ${f.path.replace(/:(\w+)/g, "{$1}")}`)
    expect([...operationsOf(spec), ...operationsOf(dashboard)].sort()).toEqual(served.sort())
  })

  it("declare their scheme and select it: the bearer key on every keyed operation, the session cookie on the dashboard's, none on public ones", () => {
    expect(spec.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer", description: expect.stringContaining("Bearer") })
    expect(spec.security).toEqual([{ apiKey: [] }])
    const schemes = dashboard.components.securitySchemes
    expect(schemes.session).toMatchObject({ type: "apiKey", in: "cookie", name: "__Host-hush_session" })
    expect(dashboard.security).toEqual([{ session: [] }])
    for (const [doc, list] of [[spec, [...ENDPOINTS, ...WEBHOOKS]], [dashboard, DASHBOARD]] as const) {
      for (const [method, path, status] of list) {
        const operation = doc.paths[path][method]
        const successes = Object.keys(operation.responses).filter((s) => /^[23]/.test(s))
        expect(successes, `${method} ${path}`).toEqual([status])
        // an operation's own `security` wins over the document's: [] for a public one
        const security = operation.security.flatMap((s: object) => Object.keys(s))
        const expected = PUBLIC.has(path) || SESSIONLESS.has(path) ? [] : doc === spec ? ["apiKey"] : ["session"]
        expect(security, `${method} ${path}`).toEqual(expected)
      }
    }
  })

  it("documents the X-CSRF-Token header on the dashboard's unsafe requests", () => {
    for (const [method, path] of DASHBOARD) {
      if (method === "get" || SESSIONLESS.has(path) && !path.endsWith("/start")) continue
      const headers = (dashboard.paths[path][method].parameters ?? []).filter((p: any) => p.in === "header").map((p: any) => p.name.toLowerCase())
      expect(headers, `${method} ${path}`).toContain("x-csrf-token")
    }
    for (const [path, status] of [["/v1/dashboard/keys", "403"], ["/v1/auth/signup", "403"], ["/v1/auth/login", "401"], ["/v1/auth/login", "429"]] as const) {
      expect(dashboard.paths[path].post.responses[status], `${path} ${status}`).toBeDefined()
    }
  })

  it("describes every error response as application/problem+json, with X-Request-Id on every response", () => {
    const problem = spec.components.schemas.ProblemDetails
    expect(problem.required).toEqual(expect.arrayContaining(["type", "title", "status", "detail", "code", "request_id"]))
    for (const doc of [spec, dashboard]) {
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        for (const [method, operation] of Object.entries<any>(item)) {
          const responses = operation.responses
          expect(responses["500"], `${method} ${path}`).toBeDefined()
          for (const status of Object.keys(responses).filter((s) => Number(s) >= 400)) {
            expect(Object.keys(responses[status].content), `${method} ${path} ${status}`).toEqual(["application/problem+json"])
            expect(responses[status].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/ProblemDetails" })
          }
          for (const response of Object.values<any>(responses)) expect(response.headers?.["X-Request-Id"], `${method} ${path}`).toBeDefined()
        }
      }
    }
    for (const [method, path] of ENDPOINTS) {
      if (PUBLIC.has(path)) continue
      expect(spec.paths[path][method].responses["401"], `${method} ${path}`).toBeDefined()
      expect(spec.paths[path][method].responses["403"], `${method} ${path}`).toBeDefined()
    }
    // the statuses the handlers can answer are listed where they occur
    const denoise = spec.paths["/v1/audio/denoise"].post.responses
    for (const status of ["400", "402", "403", "404", "409", "413", "415", "422", "429"]) expect(denoise[status], status).toBeDefined()
    expect(spec.paths["/v1/jobs/{job_id}/output"].get.responses["410"]).toBeDefined()
    expect(spec.paths["/v1/files"].post.responses["415"]).toBeDefined()
    // and only there: health is never limited, takes no body, and has nothing to find
    expect(Object.keys(spec.paths["/v1/health"].get.responses).sort()).toEqual(["200", "500"])
  })

  it("describes the request bodies and the job list's query parameters", () => {
    const body = (path: string) => spec.paths[path].post.requestBody
    expect(body("/v1/files").required).toBe(true)
    expect(Object.keys(body("/v1/files").content)).toEqual(["application/json"])
    expect(body("/v1/audio/denoise").required).toBe(true)
    expect(body("/v1/files/{file_id}/complete").required).toBe(false)
    const params = spec.paths["/v1/jobs"].get.parameters.map((p: any) => `${p.in}:${p.name}`).sort()
    expect(params).toEqual(["query:cursor", "query:limit", "query:model", "query:status"])
    expect(spec.paths["/v1/jobs"].get.parameters.find((p: any) => p.name === "limit").schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
  })

  it("documents Idempotency-Key once on exactly the POSTs that take it, and the replay headers", () => {
    const withKey = [[spec, [...ENDPOINTS, ...WEBHOOKS]], [dashboard, DASHBOARD]].flatMap(([doc, list]: any) =>
      list.filter(([method, path]: [string, string]) => {
        const keys = (doc.paths[path][method].parameters ?? []).filter((p: any) => p.in === "header" && p.name.toLowerCase() === "idempotency-key")
        expect(keys.length, `${method} ${path}`).toBeLessThanOrEqual(1)
        return keys.length === 1
      }))
    expect(withKey.map(([method, path]: [string, string]) => `${method} ${path}`).sort()).toEqual([
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
})

describe("the documents and their pages on the wire", () => {
  const DOCUMENTS = [
    ["/v1/openapi.json", /^application\/json/],
    ["/v1/openapi.dashboard.json", /^application\/json/],
    ["/docs", /^text\/html/],
    ["/docs/dashboard", /^text\/html/],
    ["/docs/scalar.js", /^text\/javascript/]
  ] as const

  it("are sent compressed as the client accepts (br, else gzip, else as they are), with an ETag per coding", async () => {
    for (const [path, type] of DOCUMENTS) {
      const plain = await rawGet(`${server.baseUrl}${path}`, {})
      expect(plain.status, path).toBe(200)
      expect(plain.headers["content-type"], path).toMatch(type)
      expect(plain.headers["content-encoding"], path).toBeUndefined()
      expect(plain.headers["vary"], path).toBe("Accept-Encoding")
      const br = await rawGet(`${server.baseUrl}${path}`, { "accept-encoding": "gzip, deflate, br" })
      expect(br.headers["content-encoding"], path).toBe("br")
      expect(brotliDecompressSync(br.body).equals(plain.body), path).toBe(true)
      const gzip = await rawGet(`${server.baseUrl}${path}`, { "accept-encoding": "gzip;q=1, br;q=0" })
      expect(gzip.headers["content-encoding"], path).toBe("gzip")
      expect(gunzipSync(gzip.body).equals(plain.body), path).toBe(true)
      const tags = [plain, br, gzip].map((r) => r.headers["etag"] as string)
      for (const tag of tags) expect(tag, path).toMatch(/^"[\w-]+"$/)
      expect(new Set(tags).size, path).toBe(3)
      // compression pays: the big ones shrink at least fourfold
      if (plain.body.length > 100_000) expect(br.body.length, path).toBeLessThan(plain.body.length / 4)
    }
  })

  it("answer 304 with no body to a matching If-None-Match, and the full answer to a stale one", async () => {
    for (const [path] of DOCUMENTS) {
      const first = await rawGet(`${server.baseUrl}${path}`, { "accept-encoding": "br" })
      const etag = first.headers["etag"] as string
      const again = await rawGet(`${server.baseUrl}${path}`, { "accept-encoding": "br", "if-none-match": `"stale", ${etag}` })
      expect(again.status, path).toBe(304)
      expect(again.body.length, path).toBe(0)
      expect(again.headers["etag"], path).toBe(etag)
      const stale = await rawGet(`${server.baseUrl}${path}`, { "accept-encoding": "br", "if-none-match": "\"stale\"" })
      expect(stale.status, path).toBe(200)
      expect(stale.body.equals(first.body), path).toBe(true)
    }
  })

  it("serve small pages that load the document and Scalar's script from this origin", async () => {
    for (const [page, document] of [["/docs", "/v1/openapi.json"], ["/docs/dashboard", "/v1/openapi.dashboard.json"]]) {
      const html = await (await fetch(`${server.baseUrl}${page}`)).text()
      expect(html.toLowerCase()).toContain("<html")
      expect(html).toContain(`data-url="${document}"`)
      expect(html).toContain('<script src="/docs/scalar.js">')
      expect(html.length).toBeLessThan(4_000)
    }
  })
})
