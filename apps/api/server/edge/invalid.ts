/** Schema failures → `invalid_request` whose detail names the field. */
import { ParseResult } from "effect"
import { excerpt, InvalidRequest } from "../../../../core/errors.js"

export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly _tag?: string
}

/** A field's name: an unknown one is the client's, quoted as any value of theirs is. */
const fieldOf = (path: ReadonlyArray<PropertyKey>) => path.map((key) => excerpt(String(key))).join(".")

const ACTUAL = ", actual "
/** A JSON string as the schema's messages quote one (`Unable to decode "…" into a number`). */
const QUOTED_STRING = /"(?:[^"\\]|\\.)*"/g

/**
 * The schema's message, with the value it quotes cut as every quoted value is: what follows
 * `, actual ` (`Expected string, actual [1,2,…]`; what precedes the first one is the schema's
 * own text), and any other quoted string.
 */
const messageOf = (message: string) => {
  const at = message.indexOf(ACTUAL)
  const cut = at === -1 ? message : `${message.slice(0, at + ACTUAL.length)}${excerpt(message.slice(at + ACTUAL.length))}`
  return cut.replace(QUOTED_STRING, (quoted) => excerpt(quoted))
}

/** The first issue decides the field; the detail lists up to five (a body is decoded to its first: contract/strict.ts). */
export const invalidFromIssues = (issues: ReadonlyArray<Issue>, status: 400 | 422, what: string): InvalidRequest => {
  const first = issues[0]
  if (first === undefined) return new InvalidRequest({ status, detail: `the ${what} is invalid` })
  const describe = (issue: Issue) => {
    const field = fieldOf(issue.path)
    const message = issue._tag === "Unexpected" ? "is not a known field" : messageOf(issue.message)
    return field === "" ? message : `${field}: ${message}`
  }
  const field = fieldOf(first.path)
  const detail = `invalid ${what}: ${issues.slice(0, 5).map(describe).join("; ")}`
  return field === "" ? new InvalidRequest({ status, detail }) : new InvalidRequest({ status, detail, field })
}

export const invalidFromParseError = (error: ParseResult.ParseError, status: 400 | 422, what: string) =>
  invalidFromIssues(ParseResult.ArrayFormatter.formatErrorSync(error), status, what)
