/**
 * The problem decoder the dashboard and the typed client share (core/problem.ts): the API's
 * own problems decode whole, anything else becomes a generic problem described from the status.
 */
import { describe, expect, it } from "vitest"
import { InvalidRequest, RateLimited, toProblem } from "../../core/errors.js"
import { problemOf } from "../../core/problem.js"

const CONTEXT = { errorsBaseUrl: "https://docs.hush.example/errors", requestId: "req_123" }

describe("problemOf: one of the API's problems", () => {
  it("decodes the body toProblem renders, as text or as parsed JSON alike", () => {
    const rendered = toProblem(new InvalidRequest({ detail: "size_bytes must be positive", status: 422, field: "size_bytes" }), CONTEXT)
    const fromText = problemOf(422, JSON.stringify(rendered))
    expect(fromText).toEqual({
      status: 422,
      code: "invalid_request",
      title: "Invalid request",
      detail: "size_bytes must be positive",
      requestId: "req_123",
      field: "size_bytes",
      retryAfterSeconds: undefined,
      body: rendered
    })
    expect(problemOf(422, rendered)).toEqual(fromText)
  })

  it("keeps retry_after, and a code this client does not know yet", () => {
    const rendered = toProblem(new RateLimited({ detail: "slow down", retryAfterSeconds: 7 }), CONTEXT)
    expect(problemOf(429, JSON.stringify(rendered))).toMatchObject({ code: "rate_limited", retryAfterSeconds: 7, detail: "slow down" })
    const newer = { ...rendered, code: "some_future_code", title: "Some future code" }
    expect(problemOf(429, newer)).toMatchObject({ code: "some_future_code", title: "Some future code", body: newer })
  })

  it("the status is the answer's, whatever the body says", () => {
    const rendered = toProblem(new RateLimited({ detail: "slow down" }), CONTEXT)
    expect(problemOf(503, rendered).status).toBe(503)
  })
})

describe("problemOf: a body that is not a problem", () => {
  it("an HTML page or an empty body: described from the status", () => {
    const html = problemOf(502, "<html><body><h1>502 Bad Gateway</h1></body></html>")
    expect(html).toEqual({
      status: 502, code: "http_502", title: "HTTP 502", detail: "The server answered 502.",
      requestId: undefined, field: undefined, retryAfterSeconds: undefined, body: undefined
    })
    expect(problemOf(500, "")).toMatchObject({ code: "http_500", detail: "The server answered 500.", body: undefined })
    expect(problemOf(500, undefined)).toMatchObject({ code: "http_500", detail: "The server answered 500.", body: undefined })
  })

  it("short plain text (a proxy's own words) becomes the detail, cut at 200 characters", () => {
    expect(problemOf(503, "upstream connect error\n")).toMatchObject({ code: "http_503", detail: "upstream connect error" })
    expect(problemOf(503, "x".repeat(500)).detail).toHaveLength(200)
  })

  it("JSON that is not a problem (another service's error shape) is not read as one", () => {
    const other = { message: "Internal server error", code: "E500" }
    expect(problemOf(500, JSON.stringify(other))).toMatchObject({ code: "http_500", title: "HTTP 500", detail: "The server answered 500.", body: undefined })
    expect(problemOf(500, other)).toMatchObject({ code: "http_500", body: undefined })
    expect(problemOf(500, null)).toMatchObject({ code: "http_500", body: undefined })
  })
})

describe("problemOf: a malformed body", () => {
  const rendered = toProblem(new RateLimited({ detail: "slow down", retryAfterSeconds: 3 }), CONTEXT)

  it("a problem cut short (truncated JSON) is generic, not half-read", () => {
    const text = JSON.stringify(rendered)
    expect(problemOf(429, text.slice(0, text.length - 5))).toMatchObject({ code: "http_429", body: undefined, retryAfterSeconds: undefined })
  })

  it("a problem whose members have the wrong types, or that lacks one, is generic", () => {
    expect(problemOf(429, { ...rendered, status: "429" })).toMatchObject({ code: "http_429", body: undefined })
    expect(problemOf(429, { ...rendered, retry_after: "3" })).toMatchObject({ code: "http_429", body: undefined })
    const { request_id: _, ...withoutRequestId } = rendered
    expect(problemOf(429, withoutRequestId)).toMatchObject({ code: "http_429", body: undefined })
  })
})
