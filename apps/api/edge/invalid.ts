/** Schema failures → `invalid_request` whose detail names the field. */
import { ParseResult } from "effect"
import { InvalidRequest } from "../../../core/errors.js"

export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly _tag?: string
}

const fieldOf = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

/** The first issue decides the field; the detail lists them all (briefly). */
export const invalidFromIssues = (issues: ReadonlyArray<Issue>, status: 400 | 422, what: string): InvalidRequest => {
  const first = issues[0]
  if (first === undefined) return new InvalidRequest({ status, detail: `the ${what} is invalid` })
  const describe = (issue: Issue) => {
    const field = fieldOf(issue.path)
    const message = issue._tag === "Unexpected" ? "is not a known field" : issue.message
    return field === "" ? message : `${field}: ${message}`
  }
  const field = fieldOf(first.path)
  const detail = `invalid ${what}: ${issues.slice(0, 5).map(describe).join("; ")}`
  return field === "" ? new InvalidRequest({ status, detail }) : new InvalidRequest({ status, detail, field })
}

export const invalidFromParseError = (error: ParseResult.ParseError, status: 400 | 422, what: string) =>
  invalidFromIssues(ParseResult.ArrayFormatter.formatErrorSync(error), status, what)
