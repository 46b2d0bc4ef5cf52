/**
 * How the user commands report a failure: one or two lines on stderr that say what went wrong
 * and what to do, whatever failed (issue 31). Every failure of the typed client lands here: a
 * problem the API answered (its title, detail, code and request_id), no connection, no answer
 * in time, an answer that is not what this version of the CLI expects (named in one line,
 * never the schema's whole tree), and anything else the CLI did not foresee.
 */
import { Cause, ParseResult } from "effect"
import { HushApiError } from "../../client/index.js"
import { EXIT, exitCodeOf } from "./args.js"

export interface Failure {
  /** One or two lines, without a trailing newline. */
  readonly message: string
  readonly exitCode: number
  /** What `--json` prints on stdout. */
  readonly json: { readonly error: Record<string, unknown> }
}

export interface FailureContext {
  /** Where the CLI sent its requests (HUSH_BASE_URL). */
  readonly baseUrl: string
}

/** At most this many characters of a detail we did not write (a proxy's page, a stack line). */
const MAX_DETAIL = 300

const oneLine = (text: string) => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL - 1)}…` : line
}

const jsonError = (fields: { code: string; title: string; detail: string; status?: number; request_id?: string | undefined }) => ({
  error: { status: fields.status ?? 0, code: fields.code, title: fields.title, detail: fields.detail, request_id: fields.request_id ?? null }
})

/** The first thing a schema found wrong, as `path: message` on one line. */
const firstIssue = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "unexpected answer"
  const path = issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("").replace(/^\./, "")
  return oneLine(path === "" ? issue.message : `${path}: ${issue.message}`)
}

const unexpectedAnswer = (context: FailureContext, what: string): Failure => {
  const detail = `the answer from ${context.baseUrl} is not what this CLI expects (${what})`
  return {
    message: `error: ${detail}\n  is HUSH_BASE_URL the address of a Hush API of this version? (hush --version)`,
    exitCode: EXIT.failure,
    json: jsonError({ code: "invalid_response", title: "Unexpected answer", detail })
  }
}

const fromApiError = (error: HushApiError, context: FailureContext): Failure => {
  if (error.code === "network_error") {
    return {
      message: `error: cannot reach Hush at ${context.baseUrl}: ${oneLine(error.detail)}\n  is the server running, and HUSH_BASE_URL right? Run the same command again once it answers.`,
      exitCode: EXIT.unavailable,
      json: jsonError({ code: error.code, title: error.title, detail: error.detail })
    }
  }
  if (error.code === "timeout") {
    return {
      message: `error: Hush at ${context.baseUrl} did not answer in time (${oneLine(error.detail)})\n  run the same command again later: an upload resumes where it stopped.`,
      exitCode: EXIT.unavailable,
      json: jsonError({ code: error.code, title: error.title, detail: error.detail })
    }
  }
  if (error.code === "invalid_response") return unexpectedAnswer(context, oneLine(error.detail))
  const requestId = error.requestId === undefined ? "" : `  request_id: ${error.requestId}`
  return {
    message: `error: ${oneLine(error.title)}: ${oneLine(error.detail)}\n  code: ${error.code}${requestId}`,
    exitCode: exitCodeOf(error),
    json: jsonError({ status: error.status, code: error.code, title: error.title, detail: error.detail, request_id: error.requestId })
  }
}

/** The report of any failure a user command can end with (interruptions are reported apart). */
export const describeFailure = (error: unknown, context: FailureContext): Failure => {
  if (error instanceof HushApiError) return fromApiError(error, context)
  if (ParseResult.isParseError(error)) return unexpectedAnswer(context, firstIssue(error))
  if (Cause.isTimeoutException(error)) {
    return fromApiError(new HushApiError({
      status: 0, code: "timeout", title: "No answer in time", detail: oneLine(error.message || "timed out"),
      requestId: undefined, retryAfterSeconds: undefined, field: undefined
    }), context)
  }
  const text = error instanceof Error ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}` : String(error)
  return {
    message: `error: unexpected failure: ${oneLine(text)}\n  please report it with the command you ran (HUSH_DEBUG=1 prints the whole trace)`,
    exitCode: EXIT.failure,
    json: jsonError({ code: "internal_error", title: "Unexpected failure", detail: text })
  }
}
