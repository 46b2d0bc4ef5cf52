/**
 * The OpenAPI document is generated from the HttpApi definition, then made true to what the
 * edge answers: every error is `application/problem+json` (RFC 9457), `invalid_request` is
 * 400 or 422, and every response carries `X-Request-Id` (and the rate-limit headers where
 * a bucket applies).
 *
 * The transform reads the edge's facts, which reflect `HushApi`; so it is attached here
 * (`DescribedHushApi`), not in definition.ts, which would otherwise import itself back.
 */
import { OpenApi } from "@effect/platform"
import { JSONSchema } from "effect"
import { ERROR_TABLE, ProblemDetails } from "../../core/errors.js"
import { HushApi } from "./definition.js"
import { type EndpointFacts, factsOfEndpoint } from "./edge/facts.js"

type Json = Record<string, any>

const PROBLEM_REF = { $ref: "#/components/schemas/ProblemDetails" }

const codesByStatus = (() => {
  const map = new Map<number, Array<string>>()
  for (const [code, entry] of Object.entries(ERROR_TABLE)) {
    map.set(entry.status, [...(map.get(entry.status) ?? []), code])
  }
  map.set(400, ["invalid_request"])
  return map
})()

const problemResponse = (status: number) => ({
  description: `Problem (${(codesByStatus.get(status) ?? ["error"]).join(", ")})`,
  content: { "application/problem+json": { schema: PROBLEM_REF } }
})

const REQUEST_ID_HEADER = { description: "Identifies the request; equals `request_id` in a problem body.", schema: { type: "string" } }
const RATE_HEADERS = {
  "RateLimit-Limit": { description: "Bucket size.", schema: { type: "integer" } },
  "RateLimit-Remaining": { description: "Requests left in the bucket.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the bucket is full.", schema: { type: "integer" } }
}
const RETRY_AFTER = { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } } }

const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "1–255 printable characters, kept 24 hours per account and mode. A retry with the same key " +
    "and request replays the first answer; another request with it is 409 idempotency_key_reused.",
  schema: { type: "string", minLength: 1, maxLength: 255 }
}
const REPLAY_HEADERS = {
  "Idempotent-Replayed": { description: "`true` when this is the recorded answer of an earlier request.", schema: { type: "string", enum: ["true"] } },
  "Original-Request-Id": {
    description: "On a replay: the id of the request that produced the answer (the `request_id` of a replayed problem).",
    schema: { type: "string" }
  }
}

/**
 * ProblemDetails as a component schema: its definitions (e.g. `Int`) are referenced under
 * `#/components/schemas/`, where they are added, not under a `$defs` of its own (a `#/$defs/…`
 * reference would point at the document root, where nothing is).
 */
export const problemDetailsSchema = (): { readonly schema: Json; readonly definitions: Json } => {
  const definitions: Json = {}
  const schema = JSONSchema.fromAST(ProblemDetails.ast, {
    definitions,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1",
    topLevelReferenceStrategy: "skip"
  }) as Json
  return { schema, definitions }
}

/** Statuses every operation can answer, besides what its handlers declare. */
const commonStatuses = (method: string, keyed: boolean, limited: boolean): Array<number> => {
  const statuses = [400, 404, 405, 500]
  if (limited) statuses.push(429)
  if (keyed) statuses.push(401, 403, 503)
  if (method === "post" || method === "patch") statuses.push(413, 415, 422)
  return statuses
}

export const describeProblems = (spec: Json): Json => {
  spec.openapi = "3.1.0"
  spec.components ??= {}
  spec.components.schemas ??= {}
  const problem = problemDetailsSchema()
  for (const [name, definition] of Object.entries(problem.definitions)) spec.components.schemas[name] ??= definition
  spec.components.schemas.ProblemDetails = problem.schema
  for (const item of Object.values<Json>(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (typeof operation !== "object" || operation === null || !("responses" in operation)) continue
      const keyed = Array.isArray(operation.security) && operation.security.length > 0
      const facts: EndpointFacts | undefined = typeof operation.operationId === "string"
        ? factsOfEndpoint(operation.operationId.slice(operation.operationId.indexOf(".") + 1))
        : undefined
      const idempotent = facts?.idempotent === true
      const limited = facts?.bucket !== "unlimited"
      if (idempotent) operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER]
      const responses: Json = operation.responses
      const statuses = new Set([
        ...Object.keys(responses).map(Number).filter((s) => s >= 400),
        ...commonStatuses(method, keyed, limited)
      ])
      // the edge's own 429 is declared for every endpoint; an unlimited one never answers it
      if (!limited) statuses.delete(429)
      for (const status of statuses) responses[String(status)] = problemResponse(status)
      if (!limited) delete responses["429"]
      for (const [status, response] of Object.entries<Json>(responses)) {
        const headers: Json = { "X-Request-Id": REQUEST_ID_HEADER }
        if (limited) Object.assign(headers, RATE_HEADERS)
        if (["429", "503"].includes(status)) Object.assign(headers, RETRY_AFTER)
        // replays answer recorded statuses only: not 429 or 5xx
        if (idempotent && status !== "429" && !status.startsWith("5")) Object.assign(headers, REPLAY_HEADERS)
        response.headers = { ...response.headers, ...headers }
      }
    }
  }
  // the error classes' own encodings never reach the wire
  for (const name of Object.keys(spec.components.schemas)) {
    if (name in errorNames) delete spec.components.schemas[name]
  }
  dropUnreferencedSchemas(spec)
  return spec
}

/** Component schemas nothing refers to any more (what only the dropped error encodings used). */
const dropUnreferencedSchemas = (spec: Json) => {
  for (;;) {
    const schemas: Json = spec.components.schemas
    const referenced = new Set<string>()
    const visit = (node: unknown, skip?: string): void => {
      if (Array.isArray(node)) node.forEach((n) => visit(n, skip))
      else if (typeof node === "object" && node !== null) {
        for (const [key, value] of Object.entries(node)) {
          if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/schemas/")) {
            const name = value.slice("#/components/schemas/".length)
            if (name !== skip) referenced.add(name)
          } else visit(value, skip)
        }
      }
    }
    for (const [key, value] of Object.entries(spec)) if (key !== "components") visit(value)
    for (const [key, value] of Object.entries<Json>(spec.components)) {
      if (key !== "schemas") visit(value)
    }
    for (const [name, schema] of Object.entries(schemas)) visit(schema, name)
    const unused = Object.keys(schemas).filter((name) => !referenced.has(name))
    if (unused.length === 0) return
    for (const name of unused) delete schemas[name]
  }
}

/** The component names HttpApi gives our error classes (`invalid_request` → `InvalidRequest`). */
const errorNames: Record<string, true> = Object.fromEntries([
  ...Object.keys(ERROR_TABLE).map((code) => code.split("_").map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")),
  "HttpApiDecodeError",
  "Issue"
].map((name) => [name, true]))

/** `HushApi` with the transform above: what /v1/openapi.json, /docs and the generated types describe. */
export const DescribedHushApi = HushApi.annotate(OpenApi.Transform, describeProblems)
