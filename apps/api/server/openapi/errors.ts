/**
 * Which problems an operation can answer, and an example of each: what the reference lists
 * under its error statuses. Three sources, nothing else:
 *  - what the endpoint (or its group) declares with `addError`, its handlers' own failures;
 *  - what the edge answers for it, read from its facts (edge/facts.ts): who calls it, its rate
 *    bucket, its scopes, its idempotency, whether it reads a body or query parameters;
 *  - `internal_error`, which any request can meet.
 * The caller middleware's and EdgeRules' failure unions are left out of the declared part: they
 * say what any endpoint behind them might meet, and the facts say which ones this one does.
 */
import type { HttpApiGroup, HttpApiMiddleware } from "@effect/platform"
import { SchemaAST as AST } from "effect"
import { ALL_ERROR_CLASSES, ERROR_TABLE, type ErrorCode } from "../../../../core/errors.js"
import { methodHasBody } from "../edge/body.js"
import type { EndpointFacts } from "../edge/facts.js"
import { BrowserOrigin } from "../../contract/middleware.js"
import { EXAMPLE_IDS } from "./examples.js"

const codeOfClass = new Map<AST.AST, ErrorCode>(ALL_ERROR_CLASSES.map((Class) => [
  Class.ast,
  (Object.keys(ERROR_TABLE) as Array<ErrorCode>).find((code) => pascal(code) === Class._tag)!
]))

function pascal(code: string) {
  return code.split("_").map((word) => word[0]!.toUpperCase() + word.slice(1)).join("")
}

/** The error codes of an error schema (a class or a union of them). */
export const codesOfSchema = (ast: AST.AST): ReadonlyArray<ErrorCode> => {
  if (ast._tag === "Union") return ast.types.flatMap(codesOfSchema)
  const code = codeOfClass.get(ast)
  return code === undefined ? [] : [code]
}

export interface ReflectedEndpoint {
  readonly facts: EndpointFacts
  readonly group: HttpApiGroup.HttpApiGroup.AnyWithProps
  readonly endpointErrors: AST.AST
  readonly middleware: ReadonlySet<HttpApiMiddleware.TagClassAny>
  readonly hasUrlParams: boolean
}

/** One error an operation can answer: its code and the status it comes with. */
export interface OperationError {
  readonly code: ErrorCode
  readonly status: number
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"])

export const errorsOfOperation = (endpoint: ReflectedEndpoint): ReadonlyArray<OperationError> => {
  const { facts } = endpoint
  const fromMiddleware = new Set([...endpoint.middleware].flatMap((m) => codesOfSchema((m as unknown as { failure: { ast: AST.AST } }).failure.ast)))
  const declared = new Set([
    ...codesOfSchema(endpoint.endpointErrors),
    ...codesOfSchema(endpoint.group.errorSchema.ast).filter((code) => !fromMiddleware.has(code))
  ])
  const codes = new Set<ErrorCode>(declared)
  const invalid = new Set<400 | 422>()
  if (declared.has("invalid_request")) invalid.add(422)
  const hasBody = methodHasBody(facts.method)
  if (facts.caller === "key") ["unauthorized", "account_frozen", "service_unavailable"].forEach((c) => codes.add(c as ErrorCode))
  if (facts.caller === "session") ["unauthorized", "service_unavailable"].forEach((c) => codes.add(c as ErrorCode))
  // the session's CSRF token and the browser's origin are checked on unsafe methods only
  if (facts.caller === "session" || endpoint.middleware.has(BrowserOrigin as unknown as HttpApiMiddleware.TagClassAny)) {
    if (UNSAFE.has(facts.method)) codes.add("forbidden")
  }
  if (facts.bucket !== "unlimited") ["rate_limited", "service_unavailable"].forEach((c) => codes.add(c as ErrorCode))
  if (facts.caller === "key" && facts.scopes.length > 0) codes.add("insufficient_scope")
  if (facts.idempotent) {
    codes.add("idempotency_key_reused")
    invalid.add(400)
  }
  if (hasBody) {
    codes.add("request_too_large")
    codes.add("unsupported_media_type")
    invalid.add(400)
  }
  if (facts.hasPayload) invalid.add(422)
  if (endpoint.hasUrlParams) invalid.add(400)
  codes.add("internal_error")
  codes.delete("invalid_request")
  const errors: Array<OperationError> = [...invalid].map((status) => ({ code: "invalid_request" as const, status }))
  for (const code of codes) errors.push({ code, status: ERROR_TABLE[code].status })
  return errors.sort((a, b) => a.status - b.status || ERROR_CODE_ORDER.indexOf(a.code) - ERROR_CODE_ORDER.indexOf(b.code))
}

const ERROR_CODE_ORDER = Object.keys(ERROR_TABLE) as ReadonlyArray<ErrorCode>

/** A `detail` each code's example problem carries: what a caller would really read. */
const EXAMPLE_DETAIL: Record<ErrorCode, { readonly detail: string; readonly field?: string; readonly retry_after?: number }> = {
  invalid_request: { detail: "invalid request body: file: is missing", field: "file" },
  unauthorized: { detail: "missing Authorization header: send 'Authorization: Bearer <API key>'" },
  insufficient_credit: { detail: "the job costs $0.0036 and $0.0012 is available: add credit in the dashboard" },
  forbidden: { detail: "missing X-CSRF-Token header: send the token from login, signup or GET /v1/auth/csrf" },
  insufficient_scope: { detail: "this API key lacks the 'jobs:write' scope" },
  account_suspended: { detail: "the account is suspended: new jobs are refused" },
  account_frozen: { detail: "the account is frozen while a payment dispute is open" },
  not_found: { detail: `no file '${EXAMPLE_IDS.file}' on this account in live mode` },
  method_not_allowed: { detail: "PUT is not allowed on /v1/health; allowed: GET" },
  file_not_ready: { detail: `file '${EXAMPLE_IDS.file}' is validating, not ready: retry once it is ready` },
  file_in_use: { detail: `file '${EXAMPLE_IDS.file}' is used by queued or processing job '${EXAMPLE_IDS.job}'` },
  upload_expired: { detail: "the upload window of this file closed at 2026-11-03T20:20:11.482Z: create a new file" },
  job_not_cancelable: { detail: `job '${EXAMPLE_IDS.job}' is processing: only a queued job can be canceled` },
  job_not_succeeded: { detail: `job '${EXAMPLE_IDS.job}' is processing: only a succeeded job has an output` },
  idempotency_key_reused: {
    detail: "Idempotency-Key '5f0c8a9e-3b1d-4c62-9f7a-1e2d3c4b5a69' was used for another request (POST /v1/files with a different body)"
  },
  output_expired: { detail: `the output of job '${EXAMPLE_IDS.job}' was deleted 7 days after it succeeded` },
  file_too_large: { detail: "size_bytes 6442450944 is over the 5368709120-byte (5 GiB) limit of live files" },
  request_too_large: { detail: "the request body is over 1048576 bytes (1 MiB)" },
  unsupported_media_type: { detail: "content_type 'text/plain' is not an accepted audio type (audio/*, or video/mp4, video/quicktime, video/webm, video/x-matroska, application/ogg)" },
  invalid_audio: { detail: "the upload could not be decoded as audio" },
  audio_too_long: { detail: "the audio lasts 25200 s, over the 21600 s (6 hours) limit" },
  model_not_available: { detail: "model 'xiph/rnnoise-2' is unknown; see GET /v1/models" },
  rate_limited: { detail: "rate limit of 120 requests per minute exceeded; retry after 2 s", retry_after: 2 },
  quota_exceeded: { detail: "10 uploads are already open on this account; complete or delete one first" },
  internal_error: { detail: "an internal error occurred; quote the request id to support" },
  provider_error: { detail: "the payment provider did not answer; nothing was charged, retry shortly" },
  service_unavailable: { detail: "the database is briefly unavailable; retry after 5 s", retry_after: 5 }
}

/** What an operation's example problems can be fitted to. */
export interface ProblemContext {
  /** The first field of its example body, named by the 422 example. */
  readonly bodyField: string | undefined
  readonly hasBody: boolean
  readonly hasQuery: boolean
  readonly overrides: Partial<Readonly<Record<ErrorCode, string>>>
}

/** `invalid_request` as this operation meets it: a body that is not JSON, a bad query parameter, a bad Idempotency-Key, a missing field. */
const invalidRequestExample = (status: number, context: ProblemContext): { readonly detail: string; readonly field?: string } => {
  if (status === 422) {
    return context.bodyField === undefined
      ? EXAMPLE_DETAIL.invalid_request
      : { detail: `invalid request body: ${context.bodyField}: is missing`, field: context.bodyField }
  }
  if (context.hasBody) return { detail: "the request body is not valid JSON: Unexpected token } in JSON at position 41" }
  if (context.hasQuery) return { detail: "invalid query parameters: limit: Expected a number between 1 and 100, actual 500", field: "limit" }
  return { detail: "the Idempotency-Key header must be 1 to 255 printable ASCII characters", field: "Idempotency-Key" }
}

/** An example problem body for `error`, as `apps/api/server/edge/problem.ts` would render it at `errorsBaseUrl`. */
export const exampleProblem = (error: OperationError, errorsBaseUrl: string, context: ProblemContext) => {
  // an operation's own wording is for the code's usual status (invalid_request: 422)
  const override = error.status === ERROR_TABLE[error.code].status ? context.overrides[error.code] : undefined
  const example = override !== undefined
    ? { detail: override }
    : error.code === "invalid_request" ? invalidRequestExample(error.status, context) : EXAMPLE_DETAIL[error.code]
  return {
    type: `${errorsBaseUrl}/${error.code}`,
    title: ERROR_TABLE[error.code].title,
    status: error.status,
    detail: example.detail,
    code: error.code,
    request_id: EXAMPLE_IDS.request,
    ...("field" in example && example.field !== undefined ? { field: example.field } : {}),
    ...("retry_after" in example && example.retry_after !== undefined ? { retry_after: example.retry_after } : {})
  }
}
