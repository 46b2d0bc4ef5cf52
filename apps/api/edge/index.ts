/**
 * The edge: one middleware around the whole HTTP app. It gives every response an
 * `X-Request-Id`, applies rate limits, body rules and idempotency, answers unknown paths and
 * wrong methods, and renders every error, from any layer, as an RFC 9457 problem.
 */
import { HttpApiBuilder, HttpApiError, type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Schema } from "effect"
import { LimitsConfig } from "../../../core/domain/limits.js"
import { RateLimiter } from "../../../core/ports/rate-limiter.js"
import { AccountRepo, IdempotencyRepo, KeyRepo } from "../../../core/ports/repositories.js"
import {
  type ApiError, ApiErrorSchema, InternalError, isApiError, MethodNotAllowed, NotFound
} from "../../../core/errors.js"
import { authenticate } from "../../../core/services/caller.js"
import { IdGenerator } from "../../../core/ports/ids.js"
import { EdgeCaller } from "../context.js"
import { readBody } from "./body.js"
import { checkIdempotencyKey, withIdempotency } from "./idempotency.js"
import { invalidFromIssues } from "./invalid.js"
import { ErrorsBaseUrl, PROBLEM_CONTENT_TYPE, problemResponse } from "./problem.js"
import { rateLimitedError, rateLimitHeaders, takeToken } from "./rate-limit.js"
import { matchRoute, type RouteInfo } from "./routes.js"

const decodeApiError = Schema.decodeUnknownOption(ApiErrorSchema)

const bodyText = (response: HttpServerResponse.HttpServerResponse): string | null => {
  const body = response.body
  if (body._tag === "Empty") return ""
  if (body._tag === "Uint8Array") return new TextDecoder().decode(body.body)
  return null
}

/**
 * A non-problem error answer that reached the edge as a response (a route outside the HttpApi
 * answering an error by itself) → our error, by its JSON `_tag` when it has one, else its status.
 */
const errorOfResponse = (response: HttpServerResponse.HttpServerResponse): ApiError => {
  const text = bodyText(response)
  let json: unknown = null
  try {
    json = text === null || text === "" ? null : JSON.parse(text)
  } catch {
    json = null
  }
  const decoded = decodeApiError(json)
  if (Option.isSome(decoded)) return decoded.value
  if (response.status === 404) return new NotFound({ detail: "no such resource" })
  return new InternalError({ detail: `unexpected ${response.status} answer` })
}

const errorOfCause = (cause: Cause.Cause<unknown>, route: RouteInfo | null): ApiError | null => {
  const squashed = Cause.squash(cause)
  if (isApiError(squashed)) return squashed
  if (squashed instanceof HttpApiError.HttpApiDecodeError) {
    // the body's fields are 422; a bad path or query parameter is 400 (decisions.md)
    const fromBody = route !== null && route.hasPayload
    return invalidFromIssues(squashed.issues, fromBody ? 422 : 400, fromBody ? "request body" : "request parameters")
  }
  return null
}

const isProblem = (response: HttpServerResponse.HttpServerResponse) =>
  "contentType" in response.body && response.body.contentType === PROBLEM_CONTENT_TYPE

type EdgeNeeds = ErrorsBaseUrl | IdGenerator | RateLimiter | IdempotencyRepo | KeyRepo | AccountRepo | LimitsConfig

const edge = (app: HttpApp.Default): HttpApp.Default<never, EdgeNeeds> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = (yield* IdGenerator).next("req")
    const errorsBaseUrl = yield* ErrorsBaseUrl
    const problem = (error: ApiError) => problemResponse(error, { errorsBaseUrl, requestId })
    const pathname = new URL(request.url, "http://localhost").pathname
    const extraHeaders: Record<string, string> = { "x-request-id": requestId }

    const runApp = (route: RouteInfo | null) =>
      app.pipe(
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
          const known = errorOfCause(cause, route)
          if (known !== null) return Effect.succeed(problem(known))
          const squashed = Cause.squash(cause)
          if (typeof squashed === "object" && squashed !== null && (squashed as { _tag?: string })._tag === "RouteNotFound") {
            return Effect.succeed(problem(new NotFound({ detail: `no route for ${request.method} ${pathname}` })))
          }
          return Effect.as(
            Effect.logError("unhandled failure", cause),
            problem(new InternalError({ detail: `an internal error occurred; quote request id ${requestId} to support` }))
          )
        }),
        Effect.map((response) => {
          const rendered = response.status >= 400 && !isProblem(response) && bodyText(response) !== null
            ? problem(errorOfResponse(response))
            : response
          return { response: rendered, body: bodyText(rendered) ?? "" }
        })
      )

    const handle = Effect.gen(function*() {
      if (!pathname.startsWith("/v1/")) return (yield* runApp(null)).response
      const match = matchRoute(request.method, pathname)
      if (match._tag === "NotFound") {
        // outside the HttpApi but still under /v1 (e.g. the OpenAPI document)
        return (yield* runApp(null)).response
      }
      if (match._tag === "MethodNotAllowed") {
        extraHeaders["allow"] = match.allow.join(", ")
        return yield* new MethodNotAllowed({ detail: `${request.method} is not allowed on ${pathname}; allowed: ${match.allow.join(", ")}` })
      }
      const route = match.route
      const decision = yield* takeToken(route, request)
      if (decision !== null) Object.assign(extraHeaders, rateLimitHeaders(decision))
      if (decision !== null && !decision.allowed) return yield* rateLimitedError(decision)
      const body = yield* readBody(request, route)
      const key = request.headers["idempotency-key"]
      if (route.idempotent && key !== undefined) {
        yield* checkIdempotencyKey(key)
        const caller = yield* Effect.either(authenticate(request.headers["authorization"]))
        if (caller._tag === "Right") {
          return yield* withIdempotency(
            caller.right,
            { key, method: request.method, path: pathname, body, requestId },
            Effect.locally(runApp(route), EdgeCaller, Option.some(caller.right))
          )
        }
      }
      return (yield* runApp(route)).response
    })

    const response = yield* handle.pipe(
      Effect.catchAll((error) => Effect.succeed(problem(error))),
      Effect.catchAllDefect((defect) =>
        Effect.as(
          Effect.logError("unhandled defect at the edge", defect),
          problem(new InternalError({ detail: `an internal error occurred; quote request id ${requestId} to support` }))
        ))
    )
    return HttpServerResponse.setHeaders(response, extraHeaders)
  })

/** Installs the edge around every route of the app (HttpApi endpoints, storage and pages). */
export const EdgeLive = HttpApiBuilder.middleware(
  Effect.map(Effect.context<EdgeNeeds>(), (context) => (app: HttpApp.Default) => Effect.provide(edge(app), context))
)
