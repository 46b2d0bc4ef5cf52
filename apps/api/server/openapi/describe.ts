/**
 * Makes the document HttpApi generates true to what the edge answers and useful to a caller:
 * - every error is `application/problem+json` (RFC 9457), and each operation lists only the
 *   problems it can answer (errors.ts), each with an example body;
 * - every operation has an example request (parameters, body) and answer (examples.ts), each
 *   decoded by the endpoint's own schemas here, so an example cannot drift from the API;
 * - every response names its headers (`X-Request-Id`, the rate-limit ones where a bucket
 *   applies, the replay ones on idempotent operations), by reference;
 * - validator names (`title: "maxLength(64)"`, `description: "an integer"`) and one-line
 *   component schemas (`Int`) are folded away: the reference reads as the caller's.
 */
import type { HttpApiEndpoint } from "@effect/platform"
import { Either, JSONSchema, ParseResult, Schema } from "effect"
import { ERROR_TABLE, ProblemDetails } from "../../../../core/errors.js"
import { ERROR_HELP } from "../pages.js"
import { errorsOfOperation, exampleProblem, type OperationError, type ReflectedEndpoint } from "./errors.js"
import type { OperationExample, OperationExamples } from "./example-types.js"

type Json = Record<string, any>

export interface DescribedEndpoint extends ReflectedEndpoint {
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
}

export interface DescribeOptions {
  /** By operation id (`files.createFile`). */
  readonly endpoints: ReadonlyMap<string, DescribedEndpoint>
  readonly examples: OperationExamples
  /** `{PUBLIC_BASE_URL}/errors`: the `type` of the example problems. */
  readonly errorsBaseUrl: string
  /** The security scheme selected for the whole document (public operations opt out with `security: []`). */
  readonly defaultSecurity: string
}

const PROBLEM_REF = { $ref: "#/components/schemas/ProblemDetails" }

const HEADERS: Json = {
  RequestId: { description: "Identifies the request; equals `request_id` in a problem body. Quote it to support.", schema: { type: "string" } },
  RateLimitLimit: { description: "The size of the rate bucket this request drew on (requests).", schema: { type: "integer" } },
  RateLimitRemaining: { description: "Requests left in the bucket.", schema: { type: "integer" } },
  RateLimitReset: { description: "Seconds until the bucket is full again.", schema: { type: "integer" } },
  RetryAfter: { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
  IdempotentReplayed: {
    description: "`true` when this is the recorded answer of an earlier request with the same `Idempotency-Key`.",
    schema: { type: "string", enum: ["true"] }
  },
  OriginalRequestId: {
    description: "On a replay: the id of the request that produced the answer (the `request_id` of a replayed problem).",
    schema: { type: "string" }
  }
}
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })

const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Any 1–255 printable characters, e.g. a UUID, kept 24 hours per account and mode. A retry with the same key " +
    "and request answers the first result again (`Idempotent-Replayed: true`) instead of acting twice; the same key with " +
    "another request is 409 idempotency_key_reused. Send one on every retry of a create.",
  schema: { type: "string", minLength: 1, maxLength: 255 }
}

/** ProblemDetails as a component schema, its definitions added beside it. */
const problemDetailsSchema = (): { readonly schema: Json; readonly definitions: Json } => {
  const definitions: Json = {}
  const schema = JSONSchema.fromAST(ProblemDetails.ast, {
    definitions,
    definitionPath: "#/components/schemas/",
    target: "openApi3.1",
    topLevelReferenceStrategy: "skip"
  }) as Json
  return { schema, definitions }
}

const fail = (operationId: string, what: string) => {
  throw new Error(`OpenAPI reference, ${operationId}: ${what}`)
}

/** Decodes an example with the endpoint's schema: an example that does not fit the API stops the build. */
const check = (operationId: string, what: string, schema: Schema.Schema.Any, value: unknown) => {
  const result = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown, never>)(value, { onExcessProperty: "error" })
  if (Either.isLeft(result)) fail(operationId, `the ${what} example does not fit: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`)
}

const scopesSentence = (scopes: ReadonlyArray<string>) =>
  scopes.length === 0 ? "" : `\n\nNeeds an API key with the ${scopes.map((s) => `\`${s}\``).join(" or ")} scope.`

const errorsDescription = (errors: ReadonlyArray<OperationError>) =>
  errors.map((e) => `- \`${e.code}\`: ${ERROR_HELP[e.code]}`).join("\n")

const describeOperation = (operation: Json, endpoint: DescribedEndpoint, example: OperationExample | undefined, options: DescribeOptions) => {
  const id: string = operation.operationId
  if (example === undefined) return fail(id, "no example (examples.ts or dashboard-examples.ts)")
  const { facts } = endpoint
  operation.description = `${operation.description ?? ""}${scopesSentence(facts.caller === "key" ? facts.scopes : [])}`

  // parameters: the Idempotency-Key where the edge honours it, and an example for each
  const parameters: Array<Json> = operation.parameters ?? []
  if (facts.idempotent && !parameters.some((p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key")) {
    parameters.push({ ...IDEMPOTENCY_KEY_PARAMETER })
  }
  for (const parameter of parameters) {
    const source = parameter.in === "path" ? example.path : parameter.in === "query" ? example.query : example.headers
    const value = Object.entries(source ?? {}).find(([name]) => name.toLowerCase() === String(parameter.name).toLowerCase())?.[1]
    if (value !== undefined) parameter.example = parameter.schema?.type === "integer" ? Number(value) : value
    else if (parameter.required === true) fail(id, `no example for the required ${parameter.in} parameter ${parameter.name}`)
  }
  if (parameters.length > 0) operation.parameters = parameters
  else delete operation.parameters
  const raw = endpoint.endpoint
  if (example.path !== undefined && raw.pathSchema._tag === "Some") check(id, "path", raw.pathSchema.value, example.path)
  if (example.query !== undefined && raw.urlParamsSchema._tag === "Some") check(id, "query", raw.urlParamsSchema.value, example.query)

  // the request body
  if (operation.requestBody !== undefined) {
    const media = operation.requestBody.content?.["application/json"]
    if (example.body !== undefined) {
      if (raw.payloadSchema._tag === "Some") check(id, "request body", raw.payloadSchema.value, example.body)
      media.example = example.body
    } else if (operation.requestBody.required === true) fail(id, "no example request body")
  }

  // the success answer: its description and example
  const successes = Object.keys(operation.responses).filter((status) => Number(status) < 400)
  if (successes.length !== 1) fail(id, `expected one success status, found ${successes.join(", ")}`)
  const success = operation.responses[successes[0]!]
  success.description = example.answered
  const successMedia = success.content?.["application/json"]
  if (successMedia !== undefined) {
    if (example.answer === undefined) fail(id, "no example answer")
    check(id, "answer", raw.successSchema, example.answer)
    successMedia.example = example.answer
  } else if (example.answer !== undefined) fail(id, "an example answer for an answer without a body")

  // the problems it can answer, by status, each code with an example
  for (const status of Object.keys(operation.responses)) if (Number(status) >= 400) delete operation.responses[status]
  const errors = errorsOfOperation(endpoint)
  const problemContext = {
    bodyField: typeof example.body === "object" && example.body !== null ? Object.keys(example.body)[0] : undefined,
    hasBody: operation.requestBody !== undefined,
    hasQuery: endpoint.hasUrlParams,
    overrides: example.problems ?? {}
  }
  const byStatus = new Map<number, Array<OperationError>>()
  for (const error of errors) byStatus.set(error.status, [...(byStatus.get(error.status) ?? []), error])
  for (const [status, list] of byStatus) {
    operation.responses[String(status)] = {
      description: errorsDescription(list),
      content: {
        "application/problem+json": {
          schema: PROBLEM_REF,
          examples: Object.fromEntries(list.map((error) => [
            error.code,
            { summary: ERROR_TABLE[error.code].title, value: exampleProblem(error, options.errorsBaseUrl, problemContext) }
          ]))
        }
      }
    }
  }

  // every response's headers
  const limited = facts.bucket !== "unlimited"
  for (const [status, response] of Object.entries<Json>(operation.responses)) {
    const headers: Json = { "X-Request-Id": headerRef("RequestId") }
    if (limited) {
      Object.assign(headers, {
        "RateLimit-Limit": headerRef("RateLimitLimit"),
        "RateLimit-Remaining": headerRef("RateLimitRemaining"),
        "RateLimit-Reset": headerRef("RateLimitReset")
      })
    }
    if (status === "429" || status === "503") headers["Retry-After"] = headerRef("RetryAfter")
    // replays answer recorded statuses only: not 429 or 5xx
    if (facts.idempotent && status !== "429" && !status.startsWith("5")) {
      Object.assign(headers, { "Idempotent-Replayed": headerRef("IdempotentReplayed"), "Original-Request-Id": headerRef("OriginalRequestId") })
    }
    response.headers = { ...response.headers, ...headers }
  }
}

/** The reference's schema keywords a node's children sit under. */
const CHILD_LISTS = ["anyOf", "allOf", "oneOf"] as const

/** Effect's own wording for its refinements, which says nothing to a caller. */
const VALIDATOR_TEXT = /^(an? (string|number|integer|finite|non[- ]|positive|negative|valid|array|object)|an integer|expected )/i

/**
 * Folds validator names away in a schema tree: `title`s (`maxLength(64)`), validator-worded
 * descriptions, a lone `allOf` (what a described `$ref` becomes) merged into its node.
 */
const tidySchema = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(tidySchema)
  if (typeof node !== "object" || node === null) return
  const schema = node as Json
  delete schema.title
  if (typeof schema.description === "string" && VALIDATOR_TEXT.test(schema.description)) delete schema.description
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && Object.keys(schema.allOf[0]).length === 1 && "$ref" in schema.allOf[0]) {
    schema.$ref = schema.allOf[0].$ref
    delete schema.allOf
  }
  for (const key of CHILD_LISTS) if (Array.isArray(schema[key])) schema[key].forEach(tidySchema)
  if (schema.properties !== undefined) Object.values(schema.properties).forEach(tidySchema)
  if (typeof schema.items === "object") tidySchema(schema.items)
  if (typeof schema.additionalProperties === "object") tidySchema(schema.additionalProperties)
}

/** A component that is only a primitive type (`Int`: `{type: integer}`) is written where it is used. */
const inlinePrimitiveComponents = (spec: Json) => {
  const schemas: Json = spec.components.schemas
  const primitive = Object.fromEntries(Object.entries<Json>(schemas).filter(([, schema]) =>
    ["string", "integer", "number", "boolean"].includes(schema.type) && schema.enum === undefined && schema.properties === undefined
  ))
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (typeof node !== "object" || node === null) return
    const record = node as Json
    const ref = record.$ref
    if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) {
      const target = primitive[ref.slice("#/components/schemas/".length)]
      if (target !== undefined) {
        delete record.$ref
        const { description: _, title: __, ...rest } = target
        Object.assign(record, { ...rest, ...record })
      }
    }
    Object.values(record).forEach(visit)
  }
  visit(spec.paths)
  visit(schemas)
}

/** Component schemas nothing refers to any more (HttpApi's error encodings, inlined primitives). */
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
    for (const [key, value] of Object.entries<Json>(spec.components)) if (key !== "schemas") visit(value)
    for (const [name, schema] of Object.entries(schemas)) visit(schema, name)
    const unused = Object.keys(schemas).filter((name) => !referenced.has(name))
    if (unused.length === 0) return
    for (const name of unused) delete schemas[name]
  }
}

const METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"])

export const describeReference = (spec: Json, options: DescribeOptions): Json => {
  spec.openapi = "3.1.0"
  spec.components ??= {}
  spec.components.schemas ??= {}
  const problem = problemDetailsSchema()
  for (const [name, definition] of Object.entries(problem.definitions)) spec.components.schemas[name] ??= definition
  spec.components.schemas.ProblemDetails = problem.schema
  spec.components.headers = HEADERS
  spec.security = [{ [options.defaultSecurity]: [] }]
  for (const item of Object.values<Json>(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (!METHODS.has(method)) continue
      const endpoint = options.endpoints.get(operation.operationId)
      if (endpoint === undefined) fail(operation.operationId, "not reflected")
      describeOperation(operation, endpoint!, options.examples[endpoint!.facts.name], options)
      for (const parameter of operation.parameters ?? []) tidySchema(parameter.schema)
      if (typeof operation.requestBody === "object") Object.values<Json>(operation.requestBody.content).forEach((m) => tidySchema(m.schema))
    }
  }
  for (const schema of Object.values(spec.components.schemas)) tidySchema(schema)
  inlinePrimitiveComponents(spec)
  dropUnreferencedSchemas(spec)
  return spec
}
