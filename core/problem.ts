/**
 * Reading a problem back: what a client (the dashboard, the typed client, the CLI) makes of an
 * answer of 400 or more. The body is decoded with the very schema the API renders its problems
 * with (`ProblemDetails`, core/errors.ts); any other body (a proxy's HTML page, an empty body, a
 * JSON object that is not one of Hush's problems) becomes a generic problem described from the
 * HTTP status, so a caller always has a code and a sentence to show.
 *
 * Pure and light on purpose: the dashboard's bundle imports it.
 */
import { Option, Schema } from "effect"
import { ProblemDetails } from "./errors.js"

/** A problem as a client reads it. */
export interface Problem {
  /** The answer's HTTP status. */
  readonly status: number
  /** The problem's stable code (core/errors.ts), or `http_<status>` for a body that was not a problem. */
  readonly code: string
  readonly title: string
  readonly detail: string
  readonly requestId: string | undefined
  /** The invalid field or parameter, when the problem names one. */
  readonly field: string | undefined
  /** The body's `retry_after` (seconds); the `Retry-After` header says the same on 429 and 503. */
  readonly retryAfterSeconds: number | undefined
  /** The body as the API rendered it; undefined when the body was not one of its problems. */
  readonly body: ProblemDetails | undefined
}

const decodeBody = Schema.decodeUnknownOption(ProblemDetails)
const decodeText = Schema.decodeUnknownOption(Schema.parseJson(ProblemDetails))

/** Short plain text (a proxy's "Bad Gateway") says more than the status alone; markup does not. */
const LONGEST_TEXT_DETAIL = 200

const genericDetail = (status: number, body: unknown): string => {
  const text = typeof body === "string" ? body.trim() : ""
  const plain = text !== "" && !text.startsWith("<") && !text.startsWith("{") && !text.startsWith("[")
  return plain ? text.slice(0, LONGEST_TEXT_DETAIL) : `The server answered ${status}.`
}

/**
 * The problem of an answer of `status` (≥ 400) whose body is `body`: its text, or the JSON
 * value already parsed from it.
 */
export const problemOf = (status: number, body: unknown): Problem =>
  Option.match(typeof body === "string" ? decodeText(body) : decodeBody(body), {
    onSome: (problem) => ({
      status,
      code: problem.code,
      title: problem.title,
      detail: problem.detail,
      requestId: problem.request_id,
      field: problem.field,
      retryAfterSeconds: problem.retry_after,
      body: problem
    }),
    onNone: () => ({
      status,
      code: `http_${status}`,
      title: `HTTP ${status}`,
      detail: genericDetail(status, body),
      requestId: undefined,
      field: undefined,
      retryAfterSeconds: undefined,
      body: undefined
    })
  })
