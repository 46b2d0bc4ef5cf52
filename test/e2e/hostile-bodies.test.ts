/**
 * Hostile input over HTTP (issue 29; decisions.md, Requests and errors): bodies nested deeper
 * than 32 levels or holding more than 10,000 values are `400 invalid_request` on every kind of
 * endpoint (no caller, API key, dashboard session) before any field is read; a control
 * character in any field is refused naming the field (`422` in a body, `400` in a query) and
 * changes nothing; and a `detail` quotes at most 100 characters of what the client sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { type Browser, verifiedUser } from "./browser.js"
import { call, createFile, expectProblem, readyFile, type Reply } from "./helpers.js"

/** `{"<field>": [[…[0]…]]}`: `depth` levels of objects and arrays, the root object counted. */
const nested = (field: string, depth: number) => `{"${field}":${"[".repeat(depth - 1)}0${"]".repeat(depth - 1)}}`
/** `{"<field>": [0, 0, …]}` holding `values` values in all, the root and the array counted. */
const wide = (field: string, values: number) => `{"${field}":[${Array(values - 2).fill("0").join(",")}]}`

const JSON_HEADERS = { "content-type": "application/json" }

/** The detail quotes `value`, and at most 100 characters of it. */
const expectQuotedShort = (detail: string, value: string) => {
  expect(detail).toContain(value.slice(0, 90))
  expect(detail).not.toContain(value.slice(0, 101))
}

describe("hostile input", () => {
  let server: TestServer
  let key: string
  let browser: Browser
  let ready: string
  beforeAll(async () => {
    server = await startTestServer({ webhooksAllowPrivate: true })
    key = (await server.createAccount(10_000_000)).liveKey
    browser = (await verifiedUser(server)).browser
    ready = await readyFile(server, key)
  }, 60_000)
  afterAll(async () => {
    await server.close()
  })

  /** The same raw body to an endpoint of each kind of caller. */
  const sendEverywhere = async (body: (field: string) => string): Promise<ReadonlyArray<readonly [string, Reply]>> => [
    ["POST /v1/auth/login", await call(server, "POST", "/v1/auth/login", { raw: body("email"), headers: JSON_HEADERS })],
    ["POST /v1/files", await call(server, "POST", "/v1/files", { key, raw: body("filename"), headers: JSON_HEADERS })],
    ["POST /v1/audio/denoise", await call(server, "POST", "/v1/audio/denoise", { key, raw: body("file"), headers: JSON_HEADERS })],
    ["POST /v1/webhook_endpoints", await call(server, "POST", "/v1/webhook_endpoints", { key, raw: body("url"), headers: JSON_HEADERS })],
    ["POST /v1/dashboard/keys", await call(server, "POST", "/v1/dashboard/keys", { raw: body("name"), headers: { ...JSON_HEADERS, ...sessionHeaders() } })]
  ]

  /** The dashboard's session cookie and CSRF token, for a raw body the browser helper would re-encode. */
  const sessionHeaders = () => ({
    cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join("; "),
    "x-csrf-token": browser.csrf!
  })

  it("refuses a body nested deeper than 32 levels with 400 on every kind of endpoint, 5,000 deep included; 32 is the fields' business", async () => {
    for (const depth of [33, 5_000]) {
      for (const [endpoint, reply] of await sendEverywhere((field) => nested(field, depth))) {
        const problem = await expectProblem(server, reply, 400, "invalid_request")
        expect(problem.detail, `${endpoint} at ${depth}`).toBe("the request body is nested deeper than 32 levels")
      }
    }
    for (const [endpoint, reply] of await sendEverywhere((field) => nested(field, 32))) {
      expect(reply.status, `${endpoint}: ${reply.text}`).toBe(422)
    }
  })

  it("refuses a body holding more than 10,000 values with 400; 10,000 are the fields' business", async () => {
    for (const [endpoint, reply] of await sendEverywhere((field) => wide(field, 10_001))) {
      const problem = await expectProblem(server, reply, 400, "invalid_request")
      expect(problem.detail, endpoint).toBe("the request body holds more than 10,000 values")
    }
    for (const [endpoint, reply] of await sendEverywhere((field) => wide(field, 10_000))) {
      expect(reply.status, `${endpoint}: ${reply.text}`).toBe(422)
    }
    // wide objects count as wide arrays do
    const members = Array.from({ length: 10_000 }, (_, i) => `"k${i}":0`).join(",")
    await expectProblem(server, await call(server, "POST", "/v1/files", { key, raw: `{${members}}`, headers: JSON_HEADERS }), 400, "invalid_request")
  })

  it("counts nothing inside strings: brackets, commas and escaped quotes in a filename are a filename", async () => {
    // as JSON text: an escaped quote, commas, an escaped backslash, another escaped quote
    const filename = `${"[{".repeat(40)}${String.raw`\",,\\\"[.wav`}`
    const raw = (name: string) => `{"filename":"${name}","size_bytes":10,"content_type":"audio/wav"}`
    const created = await call(server, "POST", "/v1/files", { key, raw: raw(filename), headers: JSON_HEADERS })
    expect(created.status, created.text).toBe(201)
    const file = await call(server, "GET", `/v1/files/${created.json.id}`, { key })
    expect(file.json.filename).toBe(JSON.parse(`"${filename}"`))
    // 10,001 commas in a string are one value: the filename's length is what is wrong
    const commas = await call(server, "POST", "/v1/files", { key, raw: raw(`${",".repeat(10_001)}.wav`), headers: JSON_HEADERS })
    expect((await expectProblem(server, commas, 422, "invalid_request")).field).toBe("filename")
  })

  it("refuses NUL and other control characters in every field, naming it, and creates nothing", async () => {
    const refusals: Array<readonly [string, Promise<Reply>, number, string]> = [
      ["signup e-mail", call(server, "POST", "/v1/auth/signup", { body: { email: "a\u0000b@example.com", password: "long enough password", accept_terms: true } }), 422, "email"],
      ["login e-mail", call(server, "POST", "/v1/auth/login", { body: { email: "a\u0000b@example.com", password: "x" } }), 422, "email"],
      ["login password", call(server, "POST", "/v1/auth/login", { body: { email: "a@example.com", password: "x\u0000" } }), 422, "password"],
      ["reset token", call(server, "POST", "/v1/auth/password/reset", { body: { token: "t\u0000", password: "long enough password" } }), 422, "token"],
      ["account name", browser.request("PATCH", "/v1/dashboard/account", { body: { name: "Acme\u0000" } }), 422, "name"],
      ["key name", browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test", name: "ci\u001b[31m" } }), 422, "name"],
      ["filename", call(server, "POST", "/v1/files", { key, body: { filename: "a\u0000.wav", size_bytes: 10, content_type: "audio/wav" } }), 422, "filename"],
      ["content_type", call(server, "POST", "/v1/files", { key, body: { filename: "a.wav", size_bytes: 10, content_type: "audio/wav\u0000" } }), 422, "content_type"],
      ["dashboard filename", browser.request("POST", "/v1/dashboard/files", { body: { filename: "a\n.wav", size_bytes: 10, content_type: "audio/wav" } }), 422, "filename"],
      ["denoise file", call(server, "POST", "/v1/audio/denoise", { key, body: { file: "file_\u0000" } }), 422, "file"],
      ["denoise model", call(server, "POST", "/v1/audio/denoise", { key, body: { file: ready, model: "xiph/rnnoise\u0000" } }), 422, "model"],
      ["?model=", call(server, "GET", "/v1/jobs?model=%00", { key }), 400, "model"],
      ["?cursor=", call(server, "GET", "/v1/jobs?cursor=a%01b", { key }), 400, "cursor"],
      ["webhook url", call(server, "POST", "/v1/webhook_endpoints", { key, body: { url: "http://127.0.0.1:9999/\u0000", events: ["job.succeeded"] } }), 422, "url"],
      ["webhook description", call(server, "POST", "/v1/webhook_endpoints", { key, body: { url: "http://127.0.0.1:9999/h", events: ["job.succeeded"], description: "a\u0000" } }), 422, "description"]
    ]
    for (const [what, reply, status, field] of refusals) {
      const problem = await expectProblem(server, await reply, status, "invalid_request")
      expect(problem.field, what).toBe(field)
      expect(problem.detail, what).toMatch(/control characters/)
    }
    // nothing was made: no file, job or webhook endpoint
    expect((await call(server, "GET", "/v1/jobs", { key })).json.data).toEqual([])
    expect((await call(server, "GET", "/v1/webhook_endpoints", { key })).json.data).toEqual([])
    const keys = (await browser.request("GET", "/v1/dashboard/keys")).json.data as Array<{ name: string }>
    expect(keys.filter((k) => k.name.startsWith("ci"))).toEqual([])
    // a tab is free text's: a description may hold one
    const tabbed = await call(server, "POST", "/v1/webhook_endpoints", { key, body: { url: "http://127.0.0.1:9999/h", events: ["job.succeeded"], description: "a\tb" } })
    expect(tabbed.status, tabbed.text).toBe(201)
    expect(tabbed.json.description).toBe("a\tb")
    await call(server, "DELETE", `/v1/webhook_endpoints/${tabbed.json.id}`, { key })
  })

  it("quotes at most 100 characters of a value in a detail: ids, fields, field names, headers, paths", async () => {
    const long = (c: string) => c.repeat(5_000)
    const cases: Array<readonly [string, Promise<Reply>, number, string]> = [
      [long("z"), call(server, "GET", `/v1/files/file_${long("z")}`, { key }), 404, "not_found"],
      [`/v1/nothing/${long("y")}`, call(server, "GET", `/v1/nothing/${long("y")}`, { key }), 404, "not_found"],
      [long("m"), browser.request("POST", "/v1/dashboard/keys", { body: { mode: long("m") } }), 422, "invalid_request"],
      [long("k"), call(server, "POST", "/v1/files", { key, body: { filename: "a.wav", size_bytes: 10, content_type: "audio/wav", [long("k")]: 1 } }), 422, "invalid_request"],
      [long("f"), call(server, "POST", "/v1/files", { key, body: { filename: long("f"), size_bytes: 10, content_type: "audio/wav" } }), 422, "invalid_request"],
      [long("w"), call(server, "POST", "/v1/files", { key, body: { filename: "a.wav", size_bytes: [long("w")], content_type: "audio/wav" } }), 422, "invalid_request"],
      [`x${long("e")}`, call(server, "POST", "/v1/auth/signup", { body: { email: `x${long("e")}`, password: "long enough password", accept_terms: true } }), 422, "invalid_request"],
      [`text/${long("t").slice(0, 240)}`, createFile(server, key, { size_bytes: 10, content_type: `text/${long("t").slice(0, 240)}` }), 415, "unsupported_media_type"],
      [`text/${long("h")}`, call(server, "POST", "/v1/files", { key, raw: "{}", headers: { "content-type": `text/${long("h")}` } }), 415, "unsupported_media_type"],
      [long("o"), browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test" }, headers: { origin: `https://${long("o")}` } }), 403, "forbidden"]
    ]
    for (const [value, reply, status, code] of cases) {
      const problem = await expectProblem(server, await reply, status, code)
      expectQuotedShort(problem.detail, value)
      if (problem.field !== undefined) expect(problem.field.length).toBeLessThanOrEqual(101)
    }
  })
})
