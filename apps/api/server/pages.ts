/**
 * Routes outside the HttpApi: the `type` pages of the errors (each problem's `type` URI
 * resolves to a short page for its code). The reference's routes are openapi/serve.ts.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { ERROR_TABLE, type ErrorCode } from "../../../core/errors.js"

/** What each code means and what to do, for a caller: the error pages and the reference's error lists. */
export const ERROR_HELP: Record<ErrorCode, string> = {
  invalid_request: "A field is missing or bad, the body is not valid JSON, or a cursor is invalid. `detail` names the field. 400 for an unreadable body or a bad query parameter, 422 for a JSON body whose fields fail validation.",
  unauthorized: "The Authorization header is missing, or the API key is unknown or revoked. Send `Authorization: Bearer <API key>`.",
  insufficient_credit: "Available credit (unexpired credit minus what running jobs hold) is below the job's exact cost. Nothing was started or charged.",
  forbidden: "The key or account is not allowed this action: a live key before the address is verified, more than 50 keys, or a dashboard request without the session's X-CSRF-Token or from another origin.",
  insufficient_scope: "The key lacks a scope this endpoint needs; `detail` names it. Create a key with that scope.",
  account_suspended: "The account is suspended: new jobs are refused; running jobs finish.",
  account_frozen: "The account is frozen while a card payment dispute is open.",
  not_found: "No such file, job or model on this account in this mode (ids of the other mode are not visible).",
  method_not_allowed: "The path exists but not with this method; see the Allow header.",
  file_not_ready: "The file is still uploading or validating, or was rejected. Retry once it is ready.",
  file_in_use: "A queued or processing job uses this file; it can be deleted once the job ends.",
  upload_expired: "The 6-hour upload window has closed. Create a new file.",
  job_not_cancelable: "The job has already started processing (or ended) and can no longer be canceled.",
  job_not_succeeded: "The job has no output: it has not succeeded.",
  idempotency_key_reused: "This Idempotency-Key was used with another body or path, or its first request is still running.",
  output_expired: "Outputs are kept 7 days after success; this one has been deleted.",
  file_too_large: "The file is over 5 GiB (live), 25 MiB (test), or the model's size limit.",
  request_too_large: "The request body itself is over 1 MiB. File bytes go to the upload URL, never to the API.",
  unsupported_media_type: "The content type is not an accepted audio (or audio-in-video) type, or a request body is not JSON.",
  invalid_audio: "The upload could not be decoded as audio; the file is rejected.",
  audio_too_long: "The audio is over 6 hours (21,600 s) or over the model's limit.",
  model_not_available: "The model id is unknown, retired or not priced. See GET /v1/models.",
  rate_limited: "Too many requests for this key or address. Retry after Retry-After seconds.",
  quota_exceeded: "An upload quota is reached (open uploads, retained input bytes, validations per hour).",
  internal_error: "A fault on our side. Retry with backoff; quote the request id to support. A failed job is never charged.",
  provider_error: "An upstream provider failed. Failed jobs are never charged.",
  service_unavailable: "A dependency is briefly unavailable. Retry after Retry-After seconds."
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const errorPage = (code: ErrorCode) => {
  const { title, status } = ERROR_TABLE[code]
  const statusLine = code === "invalid_request" ? "400 or 422" : String(status)
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Hush errors</title></head>` +
    `<body><h1>${escapeHtml(title)}</h1><p><code>${code}</code> · HTTP ${statusLine}</p><p>${escapeHtml(ERROR_HELP[code])}</p>` +
    `<p>Clients match on <code>code</code>. See <a href="/docs">the API reference</a>.</p></body></html>`
}

export const pageRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    for (const code of Object.keys(ERROR_TABLE) as Array<ErrorCode>) {
      yield* router.get(`/errors/${code}`, Effect.succeed(HttpServerResponse.html(errorPage(code))))
    }
  }))
