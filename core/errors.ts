/**
 * The API's errors: one tagged class per `code` of the spec's Errors table, and the one
 * function (`toProblem`) that renders them as RFC 9457 problem bodies.
 *
 * `ERROR_TABLE` is the single source of each code's HTTP status and title; the classes
 * read their `code`, `status` and `title` from it, and carry the status as their HttpApi
 * annotation (so no endpoint repeats it).
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export const ERROR_TABLE = {
  /**
   * Listed as 422 (a JSON body whose fields fail validation); 400 is also used, for an
   * unparseable or non-object body, a bad query parameter or an invalid cursor
   * (decisions.md). The status actually sent is the `status` field of `InvalidRequest`.
   */
  invalid_request: { status: 422, title: "Invalid request" },
  unauthorized: { status: 401, title: "Unauthorized" },
  insufficient_credit: { status: 402, title: "Insufficient credit" },
  forbidden: { status: 403, title: "Forbidden" },
  insufficient_scope: { status: 403, title: "Insufficient scope" },
  account_suspended: { status: 403, title: "Account suspended" },
  account_frozen: { status: 403, title: "Account frozen" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  file_not_ready: { status: 409, title: "File not ready" },
  file_in_use: { status: 409, title: "File in use" },
  upload_expired: { status: 409, title: "Upload expired" },
  job_not_cancelable: { status: 409, title: "Job not cancelable" },
  job_not_succeeded: { status: 409, title: "Job not succeeded" },
  idempotency_key_reused: { status: 409, title: "Idempotency key reused" },
  output_expired: { status: 410, title: "Output expired" },
  file_too_large: { status: 413, title: "File too large" },
  request_too_large: { status: 413, title: "Request too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  invalid_audio: { status: 422, title: "Invalid audio" },
  audio_too_long: { status: 422, title: "Audio too long" },
  model_not_available: { status: 422, title: "Model not available" },
  rate_limited: { status: 429, title: "Rate limited" },
  quota_exceeded: { status: 429, title: "Quota exceeded" },
  internal_error: { status: 500, title: "Internal error" },
  provider_error: { status: 502, title: "Provider error" },
  service_unavailable: { status: 503, title: "Service unavailable" }
} as const satisfies Record<string, { readonly status: number; readonly title: string }>

export type ErrorCode = keyof typeof ERROR_TABLE

/** The most characters of a client's value that a problem's `detail` quotes (decisions.md, Requests and errors). */
export const MAX_QUOTED_CHARACTERS = 100

/**
 * A value the client sent (a field, an id in the path, a header), as a `detail` may quote it:
 * its first 100 characters, then `…` when it goes on. Every detail quoting such a value goes
 * through here: a 1 MiB string is not sent back, nor written whole into the log line.
 */
export const excerpt = (value: string): string => {
  if (value.length <= MAX_QUOTED_CHARACTERS) return value
  // a cut between the halves of a surrogate pair would leave half a character
  const end = /[\uD800-\uDBFF]/.test(value[MAX_QUOTED_CHARACTERS - 1]!) ? MAX_QUOTED_CHARACTERS - 1 : MAX_QUOTED_CHARACTERS
  return `${value.slice(0, end)}…`
}

/** Every code, in table order. */
export const ERROR_CODES = Object.keys(ERROR_TABLE) as ReadonlyArray<ErrorCode>

type Detailed = new (...args: Array<any>) => { readonly detail: string }

/** Adds `code` and `title` from the table; `message` is the detail, for logs and causes. */
const described = <Code extends ErrorCode>(code: Code) => <C extends Detailed>(Base: C) =>
  class extends Base {
    get code(): Code {
      return code
    }
    get title(): string {
      return ERROR_TABLE[code].title
    }
    get message(): string {
      return this.detail
    }
  }

/** As `described`, plus the code's fixed `status` from the table. */
const fixed = <Code extends Exclude<ErrorCode, "invalid_request">>(code: Code) => <C extends Detailed>(Base: C) =>
  class extends described(code)(Base) {
    get status(): (typeof ERROR_TABLE)[Code]["status"] {
      return ERROR_TABLE[code].status
    }
  }

/**
 * The HTTP status as the class's own annotation, read by HttpApi (its router's error
 * encoding and the OpenAPI description): endpoints declare `.addError(NotFound)`, no status.
 */
const statusOf = (code: ErrorCode) => ({ [HttpApiSchema.AnnotationStatus]: ERROR_TABLE[code].status })

const detail = Schema.String
const retryAfterSeconds = Schema.optional(Schema.Int)

/** `status` is a field here (400 or 422), not a getter: see `ERROR_TABLE.invalid_request`. */
export class InvalidRequest extends described("invalid_request")(
  Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
    detail,
    status: Schema.Literal(400, 422),
    /** The offending field or parameter, when there is one. */
    field: Schema.optional(Schema.String)
  }, statusOf("invalid_request"))
) {}

export class Unauthorized extends fixed("unauthorized")(
  Schema.TaggedError<Unauthorized>()("Unauthorized", { detail }, statusOf("unauthorized"))
) {}

export class InsufficientCredit extends fixed("insufficient_credit")(
  Schema.TaggedError<InsufficientCredit>()("InsufficientCredit", { detail }, statusOf("insufficient_credit"))
) {}

export class Forbidden extends fixed("forbidden")(
  Schema.TaggedError<Forbidden>()("Forbidden", { detail }, statusOf("forbidden"))
) {}

export class InsufficientScope extends fixed("insufficient_scope")(
  Schema.TaggedError<InsufficientScope>()("InsufficientScope", { detail }, statusOf("insufficient_scope"))
) {}

export class AccountSuspended extends fixed("account_suspended")(
  Schema.TaggedError<AccountSuspended>()("AccountSuspended", { detail }, statusOf("account_suspended"))
) {}

export class AccountFrozen extends fixed("account_frozen")(
  Schema.TaggedError<AccountFrozen>()("AccountFrozen", { detail }, statusOf("account_frozen"))
) {}

export class NotFound extends fixed("not_found")(
  Schema.TaggedError<NotFound>()("NotFound", { detail }, statusOf("not_found"))
) {}

export class MethodNotAllowed extends fixed("method_not_allowed")(
  Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", { detail }, statusOf("method_not_allowed"))
) {}

export class FileNotReady extends fixed("file_not_ready")(
  Schema.TaggedError<FileNotReady>()("FileNotReady", { detail }, statusOf("file_not_ready"))
) {}

export class FileInUse extends fixed("file_in_use")(
  Schema.TaggedError<FileInUse>()("FileInUse", { detail }, statusOf("file_in_use"))
) {}

export class UploadExpired extends fixed("upload_expired")(
  Schema.TaggedError<UploadExpired>()("UploadExpired", { detail }, statusOf("upload_expired"))
) {}

export class JobNotCancelable extends fixed("job_not_cancelable")(
  Schema.TaggedError<JobNotCancelable>()("JobNotCancelable", { detail }, statusOf("job_not_cancelable"))
) {}

export class JobNotSucceeded extends fixed("job_not_succeeded")(
  Schema.TaggedError<JobNotSucceeded>()("JobNotSucceeded", { detail }, statusOf("job_not_succeeded"))
) {}

export class IdempotencyKeyReused extends fixed("idempotency_key_reused")(
  Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", { detail }, statusOf("idempotency_key_reused"))
) {}

export class OutputExpired extends fixed("output_expired")(
  Schema.TaggedError<OutputExpired>()("OutputExpired", { detail }, statusOf("output_expired"))
) {}

export class FileTooLarge extends fixed("file_too_large")(
  Schema.TaggedError<FileTooLarge>()("FileTooLarge", { detail }, statusOf("file_too_large"))
) {}

export class RequestTooLarge extends fixed("request_too_large")(
  Schema.TaggedError<RequestTooLarge>()("RequestTooLarge", { detail }, statusOf("request_too_large"))
) {}

export class UnsupportedMediaType extends fixed("unsupported_media_type")(
  Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", { detail }, statusOf("unsupported_media_type"))
) {}

export class InvalidAudio extends fixed("invalid_audio")(
  Schema.TaggedError<InvalidAudio>()("InvalidAudio", { detail }, statusOf("invalid_audio"))
) {}

export class AudioTooLong extends fixed("audio_too_long")(
  Schema.TaggedError<AudioTooLong>()("AudioTooLong", { detail }, statusOf("audio_too_long"))
) {}

export class ModelNotAvailable extends fixed("model_not_available")(
  Schema.TaggedError<ModelNotAvailable>()("ModelNotAvailable", { detail }, statusOf("model_not_available"))
) {}

export class RateLimited extends fixed("rate_limited")(
  Schema.TaggedError<RateLimited>()("RateLimited", { detail, retryAfterSeconds }, statusOf("rate_limited"))
) {}

export class QuotaExceeded extends fixed("quota_exceeded")(
  Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { detail, retryAfterSeconds }, statusOf("quota_exceeded"))
) {}

export class InternalError extends fixed("internal_error")(
  Schema.TaggedError<InternalError>()("InternalError", { detail }, statusOf("internal_error"))
) {}

export class ProviderError extends fixed("provider_error")(
  Schema.TaggedError<ProviderError>()("ProviderError", { detail }, statusOf("provider_error"))
) {}

export class ServiceUnavailable extends fixed("service_unavailable")(
  Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", { detail, retryAfterSeconds }, statusOf("service_unavailable"))
) {}

/** Members in table order. */
export const ApiErrorSchema = Schema.Union(
  InvalidRequest,
  Unauthorized,
  InsufficientCredit,
  Forbidden,
  InsufficientScope,
  AccountSuspended,
  AccountFrozen,
  NotFound,
  MethodNotAllowed,
  FileNotReady,
  FileInUse,
  UploadExpired,
  JobNotCancelable,
  JobNotSucceeded,
  IdempotencyKeyReused,
  OutputExpired,
  FileTooLarge,
  RequestTooLarge,
  UnsupportedMediaType,
  InvalidAudio,
  AudioTooLong,
  ModelNotAvailable,
  RateLimited,
  QuotaExceeded,
  InternalError,
  ProviderError,
  ServiceUnavailable
)

export type ApiError = typeof ApiErrorSchema.Type

export const ALL_ERROR_CLASSES = ApiErrorSchema.members

export const isApiError = (u: unknown): u is ApiError => ALL_ERROR_CLASSES.some((Class) => u instanceof Class)

/** RFC 9457 problem details, with the spec's `code` and `request_id` extension members. */
export const ProblemDetails = Schema.Struct({
  type: Schema.propertySignature(Schema.String).annotations({
    description: "A URI of the form `{base_url}/errors/<code>`: a short page explaining the code."
  }),
  title: Schema.propertySignature(Schema.String).annotations({ description: "A short summary of the code, the same for every occurrence." }),
  status: Schema.propertySignature(Schema.Int).annotations({ description: "The HTTP status of the answer." }),
  detail: Schema.propertySignature(Schema.String).annotations({ description: "What went wrong with this request, for a person to read. Do not match on it." }),
  code: Schema.propertySignature(Schema.String).annotations({
    description: "The stable error code (e.g. `file_not_ready`): match on this."
  }),
  request_id: Schema.propertySignature(Schema.String).annotations({
    description: "The request's id, equal to its `X-Request-Id` header: quote it to support."
  }),
  field: Schema.optional(Schema.String).annotations({ description: "The invalid field or parameter (`invalid_request` only)." }),
  retry_after: Schema.optional(Schema.Int).annotations({ description: "Seconds to wait before retrying, as in the `Retry-After` header (429 and 503)." })
}).annotations({ identifier: "ProblemDetails", description: "An RFC 9457 problem: every error answer has this body (`application/problem+json`)." })
export type ProblemDetails = typeof ProblemDetails.Type

export const toProblem = (
  error: ApiError,
  context: { readonly errorsBaseUrl: string; readonly requestId: string }
): ProblemDetails => {
  const base = context.errorsBaseUrl.replace(/\/+$/, "")
  const field = error._tag === "InvalidRequest" ? error.field : undefined
  const retryAfter = "retryAfterSeconds" in error ? error.retryAfterSeconds : undefined
  return {
    type: `${base}/${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    request_id: context.requestId,
    ...(field !== undefined ? { field } : {}),
    ...(retryAfter !== undefined ? { retry_after: retryAfter } : {})
  }
}
