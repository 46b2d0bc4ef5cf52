import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import * as Errors from "../../core/errors.js"
import {
  ALL_ERROR_CLASSES, ApiErrorSchema, ERROR_CODES, ERROR_TABLE, InvalidRequest, isApiError, NotFound,
  ProblemDetails, RateLimited, ServiceUnavailable, toProblem, Unauthorized
} from "../../core/errors.js"

/** The spec's Errors table, written out: code → status (invalid_request listed as 422). */
const SPEC: ReadonlyArray<readonly [string, number, string]> = [
  ["invalid_request", 422, "InvalidRequest"],
  ["unauthorized", 401, "Unauthorized"],
  ["insufficient_credit", 402, "InsufficientCredit"],
  ["forbidden", 403, "Forbidden"],
  ["insufficient_scope", 403, "InsufficientScope"],
  ["account_suspended", 403, "AccountSuspended"],
  ["account_frozen", 403, "AccountFrozen"],
  ["not_found", 404, "NotFound"],
  ["method_not_allowed", 405, "MethodNotAllowed"],
  ["file_not_ready", 409, "FileNotReady"],
  ["file_in_use", 409, "FileInUse"],
  ["upload_expired", 409, "UploadExpired"],
  ["job_not_cancelable", 409, "JobNotCancelable"],
  ["job_not_succeeded", 409, "JobNotSucceeded"],
  ["idempotency_key_reused", 409, "IdempotencyKeyReused"],
  ["output_expired", 410, "OutputExpired"],
  ["file_too_large", 413, "FileTooLarge"],
  ["request_too_large", 413, "RequestTooLarge"],
  ["unsupported_media_type", 415, "UnsupportedMediaType"],
  ["invalid_audio", 422, "InvalidAudio"],
  ["audio_too_long", 422, "AudioTooLong"],
  ["model_not_available", 422, "ModelNotAvailable"],
  ["rate_limited", 429, "RateLimited"],
  ["quota_exceeded", 429, "QuotaExceeded"],
  ["internal_error", 500, "InternalError"],
  ["provider_error", 502, "ProviderError"],
  ["service_unavailable", 503, "ServiceUnavailable"]
]

const context = { errorsBaseUrl: "https://api.hush.test/errors", requestId: "req_123" }

const instantiate = (className: string, detail: string) => {
  const Class = (Errors as unknown as Record<string, new (props: object) => Errors.ApiError>)[className]
  return className === "InvalidRequest" ? new Class({ detail, status: 422 }) : new Class({ detail })
}

describe("ERROR_TABLE", () => {
  it("matches the spec's Errors table exactly, in order", () => {
    expect(SPEC).toHaveLength(27)
    expect(ERROR_CODES).toEqual(SPEC.map(([code]) => code))
    expect(Object.fromEntries(Object.entries(ERROR_TABLE).map(([code, facts]) => [code, facts.status])))
      .toEqual(Object.fromEntries(SPEC.map(([code, status]) => [code, status])))
  })

  it("gives every code a non-empty title", () => {
    for (const code of ERROR_CODES) expect(ERROR_TABLE[code].title).toMatch(/^[A-Z][a-z]/)
    expect(ERROR_TABLE.insufficient_credit.title).toBe("Insufficient credit")
  })

  it("has one class per code, all in ALL_ERROR_CLASSES and the union", () => {
    expect(ALL_ERROR_CLASSES).toHaveLength(27)
    expect(ALL_ERROR_CLASSES.map((Class) => Class._tag)).toEqual(SPEC.map(([, , className]) => className))
    expect(ApiErrorSchema.members).toBe(ALL_ERROR_CLASSES)
  })
})

describe("error classes", () => {
  it.each(SPEC)("%s → %i (%s)", (code, status, className) => {
    const error = instantiate(className, `specific detail for ${code}`)
    expect(error._tag).toBe(className)
    expect(error.code).toBe(code)
    expect(error.status).toBe(status)
    expect(error.title).toBe(ERROR_TABLE[code as Errors.ErrorCode].title)
    expect(error.detail).toBe(`specific detail for ${code}`)
    expect(error.message).toBe(`specific detail for ${code}`)
    expect(error).toBeInstanceOf(Error)
    expect(isApiError(error)).toBe(true)
  })

  it("InvalidRequest carries 400 or 422 and an optional field", () => {
    const bad400 = new InvalidRequest({ detail: "cursor is not valid", status: 400, field: "cursor" })
    const bad422 = new InvalidRequest({ detail: "file: expected a string", status: 422, field: "file" })
    expect(bad400.status).toBe(400)
    expect(bad422.status).toBe(422)
    expect(bad400.code).toBe("invalid_request")
    expect(bad422.field).toBe("file")
    expect(() => Schema.decodeUnknownSync(InvalidRequest)({ _tag: "InvalidRequest", detail: "x", status: 404 }))
      .toThrow()
  })

  it("isApiError rejects other values", () => {
    expect(isApiError(new Error("boom"))).toBe(false)
    expect(isApiError({ _tag: "NotFound", detail: "x" })).toBe(false)
    expect(isApiError(null)).toBe(false)
  })

  it("round-trips through ApiErrorSchema as class instances", () => {
    const error = new RateLimited({ detail: "creates bucket empty", retryAfterSeconds: 3 })
    const decoded = Schema.decodeUnknownSync(ApiErrorSchema)(Schema.encodeSync(ApiErrorSchema)(error))
    expect(decoded).toBeInstanceOf(RateLimited)
    expect(decoded.status).toBe(429)
    expect(decoded.code).toBe("rate_limited")
  })

  it.effect("fails an Effect when yielded", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.gen(function*() {
        return yield* new NotFound({ detail: "no such job: job_x" })
      }))
      expect(Exit.isFailure(exit)).toBe(true)
    }))
})

describe("toProblem", () => {
  it.each(SPEC)("renders %s as an RFC 9457 body", (code, status, className) => {
    const problem = toProblem(instantiate(className, `why ${code}`), context)
    expect(problem).toEqual({
      type: `https://api.hush.test/errors/${code}`,
      title: ERROR_TABLE[code as Errors.ErrorCode].title,
      status,
      detail: `why ${code}`,
      code,
      request_id: "req_123"
    })
    expect(Schema.is(ProblemDetails)(problem)).toBe(true)
  })

  it("never writes a double slash, whatever the base", () => {
    const problem = toProblem(new Unauthorized({ detail: "missing key" }), {
      errorsBaseUrl: "https://api.hush.test/errors/",
      requestId: "req_1"
    })
    expect(problem.type).toBe("https://api.hush.test/errors/unauthorized")
  })

  it("uses InvalidRequest's own status and names the field", () => {
    const problem = toProblem(new InvalidRequest({ detail: "limit must be 1 to 100", status: 400, field: "limit" }), context)
    expect(problem.status).toBe(400)
    expect(problem.code).toBe("invalid_request")
    expect(problem.field).toBe("limit")
    expect(toProblem(new InvalidRequest({ detail: "file is required", status: 422 }), context).status).toBe(422)
  })

  it("carries retry_after when given", () => {
    expect(toProblem(new ServiceUnavailable({ detail: "rate-limit store down", retryAfterSeconds: 1 }), context).retry_after)
      .toBe(1)
    expect(toProblem(new RateLimited({ detail: "slow down" }), context)).not.toHaveProperty("retry_after")
  })
})
