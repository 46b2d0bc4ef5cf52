/** Every error answer of the API as `application/problem+json` (RFC 9457). */
import { HttpServerResponse } from "@effect/platform"
import { Context } from "effect"
import { type ApiError, toProblem } from "../../../../core/errors.js"

export class ErrorsBaseUrl extends Context.Tag("hush/api/ErrorsBaseUrl")<ErrorsBaseUrl, string>() {}

/** Where each error code's page is: the `type` URIs of problem bodies. */
export const errorsBaseUrlOf = (publicBaseUrl: string) => `${publicBaseUrl}/errors`

export const PROBLEM_CONTENT_TYPE = "application/problem+json"

export const problemResponse = (error: ApiError, context: { readonly errorsBaseUrl: string; readonly requestId: string }) => {
  const body = toProblem(error, context)
  const headers: Record<string, string> = { "x-request-id": context.requestId }
  if ("retryAfterSeconds" in error && typeof error.retryAfterSeconds === "number") {
    headers["retry-after"] = String(error.retryAfterSeconds)
  }
  return HttpServerResponse.text(JSON.stringify(body), {
    status: error.status,
    contentType: PROBLEM_CONTENT_TYPE,
    headers
  })
}
