/**
 * What the reference tells a caller (issue 31, "The API reference"), in both documents:
 * - every operation has a summary and a description, and an example of its request (parameters,
 *   body) and of its answer; the examples use ids of the service's form, a real filename, the
 *   catalog's default model and no `strength`;
 * - every field and parameter has a description written for a caller, not a validator's name;
 * - each operation lists only the problems it can answer, each with an example of its own code
 *   and status: the edge's generic refusals are probed on every public operation, and what it
 *   answers must be listed, what is listed must be answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEFAULT_MODEL_DEFINITIONS, makeCatalog } from "../../core/domain/catalog.js"
import { ERROR_TABLE, type ErrorCode } from "../../core/errors.js"
import { createKey } from "../../core/services/accounts.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, type Reply } from "./helpers.js"

const METHODS = ["get", "post", "put", "patch", "delete"]

interface Operation {
  readonly method: string
  readonly path: string
  readonly operation: any
}

const operationsOf = (doc: any): Array<Operation> =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).filter(([method]) => METHODS.includes(method)).map(([method, operation]) => ({ method, path, operation })))

/** Effect's wording for its refinements ("a string at most 64 character(s) long"): not for a caller. */
const VALIDATOR_TEXT = /^(an? (string|number|integer|finite|non[- ]|positive|negative|valid|array|object)|an integer|expected )|character\(s\)/i

/** `file_` and 24 lowercase base32 characters: the ids the service mints (core/ports/ids.ts). */
const ID = /^(file|job|acct|key|txn|lot|chk|req|whe|whd|evt)_[a-z2-7]{24}$/
/** What would be taken for one (not an error code such as `file_too_large`). */
const ID_LIKE = /^(file|job|acct|key|txn|lot|chk|req|whe|whd|evt)_[^_\s]+$/

let server: TestServer
let spec: any
let dashboard: any

beforeAll(async () => {
  server = await startTestServer()
  spec = await (await fetch(`${server.baseUrl}/v1/openapi.json`)).json()
  dashboard = await (await fetch(`${server.baseUrl}/v1/openapi.dashboard.json`)).json()
})
afterAll(async () => {
  await server?.close()
})

/** Every string of an example, wherever it sits. */
const stringsOf = (value: unknown): Array<string> =>
  typeof value === "string" ? [value] : Array.isArray(value) ? value.flatMap(stringsOf)
  : typeof value === "object" && value !== null ? Object.values(value).flatMap(stringsOf) : []

describe("every operation", () => {
  it("has a summary, a description, and an example request and answer", () => {
    for (const doc of [spec, dashboard]) {
      for (const { method, path, operation } of operationsOf(doc)) {
        const name = `${method} ${path}`
        expect(operation.summary, name).toEqual(expect.stringMatching(/\S/))
        expect(operation.description, name).toEqual(expect.stringMatching(/\S{3}/))
        for (const parameter of operation.parameters ?? []) {
          if (parameter.required) expect(parameter.example, `${name} ${parameter.name}`).toBeDefined()
        }
        if (operation.requestBody?.required) expect(operation.requestBody.content["application/json"].example, name).toBeDefined()
        const [status, success] = Object.entries<any>(operation.responses).find(([s]) => Number(s) < 400)!
        expect(success.description, `${name} ${status}`).toEqual(expect.stringMatching(/\S/))
        // a body is described with its example; 204 and 302 have none
        if (status === "204" || status === "302") expect(success.content, name).toBeUndefined()
        else expect(success.content["application/json"].example, name).toBeDefined()
      }
    }
    for (const tag of [...spec.tags, ...dashboard.tags]) expect(tag.description, tag.name).toEqual(expect.stringMatching(/\S/))
  })

  it("uses ids of the service's form, a real filename, the default model and no strength in its examples", () => {
    const catalog = makeCatalog(DEFAULT_MODEL_DEFINITIONS, ["builtin"])
    for (const doc of [spec, dashboard]) {
      for (const { method, path, operation } of operationsOf(doc)) {
        const examples = [
          ...(operation.parameters ?? []).map((p: any) => p.example),
          operation.requestBody?.content["application/json"].example,
          ...Object.values<any>(operation.responses).flatMap((r) => [
            r.content?.["application/json"]?.example,
            ...Object.values<any>(r.content?.["application/problem+json"]?.examples ?? {}).map((e) => e.value)
          ])
        ]
        for (const text of stringsOf(examples)) {
          if (ID_LIKE.test(text)) expect(text, `${method} ${path}`).toMatch(ID)
        }
      }
    }
    const create = spec.paths["/v1/audio/denoise"].post
    const body = create.requestBody.content["application/json"].example
    expect(body.file).toMatch(/^file_[a-z2-7]{24}$/)
    expect(body).not.toHaveProperty("strength")
    expect(body.model ?? catalog.defaultModel.denoise).toBe(catalog.defaultModel.denoise)
    const job = create.responses["202"].content["application/json"].example
    expect(job).toMatchObject({ model: catalog.defaultModel.denoise, status: "queued", options: { strength: null } })
    const upload = spec.paths["/v1/files"].post.requestBody.content["application/json"].example
    expect(upload).toEqual({ filename: expect.stringMatching(/^[\w-]+\.(wav|mp3|m4a|flac|ogg)$/), size_bytes: expect.any(Number), content_type: expect.stringMatching(/^audio\//) })
    const models = spec.paths["/v1/models"].get.responses["200"].content["application/json"].example
    expect(models.data.map((m: any) => m.id)).toContain(catalog.defaultModel.denoise)
    const page = spec.paths["/v1/jobs"].get.responses["200"].content["application/json"].example
    expect(page.data[0].output.expires_at > page.data[0].finished_at).toBe(true)
  })

  it("describes every field and parameter for a caller, never with a validator's name", () => {
    for (const doc of [spec, dashboard]) {
      const problems: Array<string> = []
      const visit = (node: any, where: string) => {
        if (typeof node !== "object" || node === null) return
        if (typeof node.title === "string") problems.push(`${where}: title ${node.title}`)
        if (typeof node.description === "string" && VALIDATOR_TEXT.test(node.description)) problems.push(`${where}: ${node.description}`)
        for (const [name, property] of Object.entries<any>(node.properties ?? {})) {
          if (typeof property.description !== "string" || property.description.length < 8) problems.push(`${where}.${name}: no description`)
          visit(property, `${where}.${name}`)
        }
        for (const key of ["anyOf", "allOf", "oneOf"]) for (const member of node[key] ?? []) visit(member, where)
        if (node.items !== undefined) visit(node.items, `${where}[]`)
      }
      for (const [name, schema] of Object.entries(doc.components.schemas)) visit(schema, name)
      for (const { method, path, operation } of operationsOf(doc)) {
        for (const parameter of operation.parameters ?? []) {
          const where = `${method} ${path} ${parameter.in} ${parameter.name}`
          if (typeof parameter.description !== "string" || VALIDATOR_TEXT.test(parameter.description)) problems.push(`${where}: ${parameter.description}`)
          visit(parameter.schema, where)
        }
        if (operation.requestBody !== undefined) visit(operation.requestBody.content["application/json"].schema, `${method} ${path} body`)
      }
      expect(problems, doc.info.title).toEqual([])
    }
    // e.g. the denoise job's `file`, which a validator would call "a string at most 64 character(s) long"
    expect(spec.paths["/v1/audio/denoise"].post.requestBody.content["application/json"].schema.properties.file.description).toContain("ready")
  })

  it("lists, under each error status, only codes of that status, each with an example problem of its own", () => {
    for (const doc of [spec, dashboard]) {
      const base = `${server.baseUrl}/errors`
      for (const { method, path, operation } of operationsOf(doc)) {
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          if (Number(status) < 400) continue
          const examples = response.content["application/problem+json"].examples
          const codes = Object.keys(examples) as Array<ErrorCode>
          expect(codes.length, `${method} ${path} ${status}`).toBeGreaterThan(0)
          for (const code of codes) {
            const where = `${method} ${path} ${status} ${code}`
            expect(ERROR_TABLE[code].status === Number(status) || (code === "invalid_request" && status === "400"), where).toBe(true)
            expect(examples[code].value, where).toMatchObject({
              type: `${base}/${code}`, title: ERROR_TABLE[code].title, status: Number(status), code,
              detail: expect.stringMatching(/\S/), request_id: expect.stringMatching(/^req_[a-z2-7]{24}$/)
            })
            expect(response.description, where).toContain(`\`${code}\``)
          }
        }
      }
    }
  })
})

/** The codes an operation lists, as `status code`. */
const listed = (operation: any): Set<string> =>
  new Set(Object.entries<any>(operation.responses).filter(([s]) => Number(s) >= 400)
    .flatMap(([status, response]) => Object.keys(response.content["application/problem+json"].examples).map((code) => `${status} ${code}`)))

describe("the problems an operation lists", () => {
  it("/v1/health lists only 500; no operation that takes no body lists 413 or 415", () => {
    expect([...listed(spec.paths["/v1/health"].get)]).toEqual(["500 internal_error"])
    for (const doc of [spec, dashboard]) {
      for (const { method, path, operation } of operationsOf(doc)) {
        if (method !== "get" && method !== "delete") continue
        for (const entry of listed(operation)) expect(entry, `${method} ${path}`).not.toMatch(/^(413 request_too_large|415)/)
      }
    }
  })

  it("are what the edge answers each public operation: every generic refusal it meets is listed, and each listed one is met", { timeout: 120_000 }, async () => {
    const account = await server.createAccount(0)
    const key = account.liveKey
    const scopeless = (await server.run(createKey(account.account.id, { mode: "live", scopes: [] }))).key
    const seen: Array<string> = []
    for (const { method, path, operation } of operationsOf(spec)) {
      const name = `${method} ${path}`
      const url = path.replace(/\{(\w+)\}/g, (_, param: string) => operation.parameters.find((p: any) => p.name === param).example)
      const codes = listed(operation)
      const keyed = (operation.security ?? []).length > 0
      const probe = async (what: string, expected: string | undefined, reply: Reply) => {
        const answered = `${reply.status} ${reply.json?.code}`
        if (reply.status >= 400) expect(codes, `${name} answered ${answered} to ${what}, which it does not list`).toContain(answered)
        if (expected !== undefined) expect(answered, `${name}: ${what}`).toBe(expected)
        seen.push(`${name}: ${answered}`)
      }
      const M = method.toUpperCase()
      if (keyed) {
        await probe("no key", "401 unauthorized", await call(server, M, url))
        const noScope = await call(server, M, url, { key: scopeless })
        await probe("a key without scopes", codes.has("403 insufficient_scope") ? "403 insufficient_scope" : undefined, noScope)
        if (!codes.has("403 insufficient_scope")) expect(noScope.json?.code, name).not.toBe("insufficient_scope")
      }
      const auth = keyed ? { key } : {}
      if (method === "post") {
        await probe("a text body", "415 unsupported_media_type", await call(server, M, url, { ...auth, raw: "hello", headers: { "content-type": "text/plain" } }))
        await probe("broken JSON", "400 invalid_request", await call(server, M, url, { ...auth, raw: "{", headers: { "content-type": "application/json" } }))
        await probe("a 2 MiB body", "413 request_too_large", await call(server, M, url, { ...auth, raw: `"${"x".repeat(2 * 1024 * 1024)}"`, headers: { "content-type": "application/json" } }))
        if (operation.requestBody?.required) {
          await probe("an unknown field", "422 invalid_request", await call(server, M, url, { ...auth, body: { not_a_field: 1 } }))
        }
      } else {
        for (const code of ["413 request_too_large", "415 unsupported_media_type"]) expect(codes, name).not.toContain(code)
      }
      const query = (operation.parameters ?? []).find((p: any) => p.in === "query" && p.name === "limit")
      if (query !== undefined) await probe("limit=500", "400 invalid_request", await call(server, M, `${url}?limit=500`, auth))
      else if (method === "get") expect(codes, name).not.toContain("400 invalid_request")
      // a generic refusal listed is one a probe met
      for (const generic of ["401 unauthorized", "403 insufficient_scope", "413 request_too_large", "415 unsupported_media_type", "400 invalid_request"]) {
        if (codes.has(generic)) expect(seen, `${name} lists ${generic}`).toContain(`${name}: ${generic}`)
      }
    }
  })
})
