/**
 * The edge's outer layer, around every route of the app (HttpApi endpoints, storage, pages):
 * it gives every response an `X-Request-Id`, refuses path spellings the spec does not list
 * (the router itself is strict: see `StrictRouting`), reads a /v1 body under the 1 MiB cap
 * before anything else runs, answers unknown paths (404) and wrong methods (405 with
 * `Allow`), renders every error, from any layer, as an RFC 9457 problem, and marks the answers
 * of `NoStore` endpoints `Cache-Control: no-store`, problems included. What depends
 * on the endpoint runs after routing, in its HttpApi middleware (apps/api/contract/middleware.ts).
 */
import {
  HttpApiBuilder, HttpApiError, type HttpApp, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse
} from "@effect/platform"
import { Cause, Context, Effect, FiberRef, FiberRefs, Layer, Option, Schema } from "effect"
import {
  type ApiError, ApiErrorSchema, excerpt, InternalError, isApiError, MethodNotAllowed, NotFound, ServiceUnavailable
} from "../../../../core/errors.js"
import { IdGenerator } from "../../../../core/ports/ids.js"
import { type Dependency, unavailableIn } from "../../../../core/ports/unavailable.js"
import { type Cidr, clientAddressOf } from "../../../../core/rules/ip-address.js"
import { AnswerHeaders } from "../../../../adapters/node-http/answer-headers.js"
import { STORAGE_PATH_PREFIX } from "../../../../adapters/local-storage/config.js"
import { bufferBody, needsBuffering } from "./body.js"
import { answersNoStore, pathOf } from "./facts.js"
import { countProblem, recordAnswer } from "./observe.js"
import { layerRoutes, ROUTER_CONFIG, Routes, type RouteTable } from "./routes.js"
import { CurrentRequestFacts, type RequestFacts } from "./request-facts.js"
import { Replay } from "./idempotency.js"
import { invalidFromIssues } from "./invalid.js"
import { ErrorsBaseUrl, PROBLEM_CONTENT_TYPE, problemResponse } from "./problem.js"

/**
 * Paths match as written: no trailing-slash, doubled-slash or case folding (decisions.md,
 * Requests). A parameter may be as long as a request line can be (Node's 16 KiB header
 * limit): an overlong id is an unknown id (404), not an unknown route.
 */
export const StrictRouting = HttpRouter.setRouterConfig(ROUTER_CONFIG)

/**
 * No path of ours needs percent-encoding or `;`, and the router would decode the one
 * (`/%761/files` is `/v1/files` to it) and cut at the other: such a spelling is another path,
 * no path of the spec. Nor has any an empty segment (`//`, a trailing `/`), which the router
 * would match as an empty parameter (`/v1/jobs/` as `/v1/jobs/:job_id`). Storage keys are
 * encoded, and signed, so the storage handler parses its own.
 */
const isCanonicalPath = (pathname: string) =>
  pathname.startsWith(`${STORAGE_PATH_PREFIX}/`) || !(/[%;]|\/\//.test(pathname) || (pathname.length > 1 && pathname.endsWith("/")))

/** `TRUSTED_PROXIES` (apps/runtime/config.ts): the proxies whose `X-Forwarded-For` names the client. */
export class TrustedProxies extends Context.Tag("hush/api/TrustedProxies")<TrustedProxies, ReadonlyArray<Cidr>>() {}

/**
 * The request as coming from its client (decisions.md, Requests and errors): behind a trusted
 * proxy, `remoteAddress` is the address `X-Forwarded-For` names (core/rules/ip-address.ts), so
 * every per-IP bucket and log line after this counts the client, not the proxy. Anyone else's
 * `X-Forwarded-For` is ignored.
 */
const fromClient = (request: HttpServerRequest.HttpServerRequest, trusted: ReadonlyArray<Cidr>) => {
  if (Option.isNone(request.remoteAddress)) return request
  const peer = request.remoteAddress.value
  const client = clientAddressOf(peer, request.headers["x-forwarded-for"], trusted)
  return client === peer ? request : request.modify({ remoteAddress: client })
}

const decodeApiError = Schema.decodeUnknownOption(ApiErrorSchema)

/** A non-problem error answer from a route outside the HttpApi → our error, by its JSON `_tag` or its status. */
const errorOfResponse = (response: HttpServerResponse.HttpServerResponse): ApiError => {
  const body = response.body
  let json: unknown = null
  try {
    json = body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(body.body)) : null
  } catch {
    json = null
  }
  const decoded = decodeApiError(json)
  if (Option.isSome(decoded)) return decoded.value
  if (response.status === 404) return new NotFound({ detail: "no such resource" })
  return new InternalError({ detail: `unexpected ${response.status} answer` })
}

/** How long a caller should wait before retrying when a dependency did not answer. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2

const UNAVAILABLE_DETAIL: Record<Dependency, string> = {
  database: "the database is briefly unavailable; retry shortly",
  storage: "file storage is briefly unavailable; retry shortly"
}

const isProblem = (response: HttpServerResponse.HttpServerResponse) =>
  "contentType" in response.body && response.body.contentType === PROBLEM_CONTENT_TYPE

type EdgeNeeds = ErrorsBaseUrl | IdGenerator | TrustedProxies | Routes

const edge = (
  app: HttpApp.Default, ids: IdGenerator["Type"], errorsBaseUrl: string, trusted: ReadonlyArray<Cidr>, routes: RouteTable
): HttpApp.Default =>
  // one step of the runtime for what every request needs of its fiber (as the platform's own span middleware reads it)
  Effect.withFiberRuntime((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const untraced = fiber.getFiberRef(HttpMiddleware.currentTracerDisabledWhen)
    const started = performance.now()
    const requestId = ids.next("req")
    const headers: Record<string, string> = { "x-request-id": requestId }
    // the caller, once known (edge/rules.ts), and the problem answered, for the request's metrics and log line
    const facts: RequestFacts = { answerHeaders: headers }
    // the edge's headers go in as the server does it best (adapters/node-http/answer-headers.ts)
    const withAnswerHeaders = Context.get(fiber.currentContext, AnswerHeaders)
    let answeredProblem: ApiError | undefined
    const problem = (error: ApiError) => {
      answeredProblem = error
      return problemResponse(error, { errorsBaseUrl, requestId })
    }
    const pathname = pathOf(request.url)
    const internal = (cause: unknown) =>
      Effect.as(
        Effect.logError("unhandled failure", cause),
        problem(new InternalError({ detail: `an internal error occurred; quote request id ${requestId} to support` }))
      )

    const answerCause = (cause: Cause.Cause<unknown>): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
      // nothing to answer: the client went away (an interruption carries no failure)
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const squashed = Cause.squash(cause)
      if (squashed instanceof Replay) return Effect.succeed(squashed.response)
      if (isApiError(squashed)) return Effect.succeed(problem(squashed))
      if (squashed instanceof HttpApiError.HttpApiDecodeError) {
        // a body's fields are 422; a query parameter is 400 (decisions.md): only GETs have query parameters
        const fromBody = request.method !== "GET"
        return Effect.succeed(problem(invalidFromIssues(squashed.issues, fromBody ? 422 : 400, fromBody ? "request body" : "request parameters")))
      }
      if ((squashed as { _tag?: unknown } | null)?._tag === "RouteNotFound") {
        const allow = routes.methodsOf(request.url)
        if (allow.length === 0) return Effect.succeed(problem(new NotFound({ detail: `no route for ${request.method} ${excerpt(pathname)}` })))
        headers["allow"] = allow.join(", ")
        return Effect.succeed(problem(new MethodNotAllowed({ detail: `${request.method} is not allowed on ${excerpt(pathname)}; allowed: ${allow.join(", ")}` })))
      }
      // a dependency that did not answer is not a fault of ours to report as 500 (decisions.md, Faults)
      const unavailable = unavailableIn(cause)
      if (unavailable !== undefined) {
        return Effect.as(
          Effect.logWarning(`${unavailable} unavailable`, cause),
          problem(new ServiceUnavailable({ detail: UNAVAILABLE_DETAIL[unavailable], retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS }))
        )
      }
      return internal(cause)
    }

    const run = (served: HttpServerRequest.HttpServerRequest) =>
      Effect.provideService(app, HttpServerRequest.HttpServerRequest, served)
    // without trusted proxies (the default) the request stays as it came: nothing to provide
    const client = trusted.length === 0 ? request : fromClient(request, trusted)

    const handled: HttpApp.Default<unknown> = !isCanonicalPath(pathname)
      ? Effect.fail(new NotFound({ detail: `no route for ${request.method} ${excerpt(pathname)}` }))
      : pathname.startsWith("/v1/") && needsBuffering(client)
      ? Effect.flatMap(bufferBody(client), run)
      : client === request ? app : run(client)
    const answer = handled.pipe(
      Effect.map((response) =>
        response.status >= 400 && !isProblem(response) && response.body._tag === "Uint8Array" ? problem(errorOfResponse(response)) : response
      ),
      Effect.catchAllCause(answerCause),
      // recorded once answered: the problem counters, the request's metrics and its log line
      Effect.flatMap((response) => {
        // session answers and secrets are never kept by a browser or a proxy, whatever the status
        const route = facts.route ?? routes.routeOf(request)
        if (answersNoStore(request.method, route, pathname)) headers["cache-control"] = "no-store"
        const seconds = (performance.now() - started) / 1000
        const recorded = recordAnswer({ requestId, route, method: request.method, status: response.status, seconds, facts })
        return Effect.as(
          answeredProblem === undefined ? recorded : Effect.zipRight(countProblem(answeredProblem), recorded),
          withAnswerHeaders(request, response, headers)
        )
      })
    )
    // a request the span middleware leaves untraced (tracing off, sampled out, a credential in
    // its URL) traces nothing below it: no orphan spans, no span objects made for nobody. Set
    // for the rest of the request's own fiber, not scoped: nothing of it is traced after this.
    // With tracing off the tracer is already disabled for the whole process: nothing to set
    // (a set copies the fiber's refs and is a step of its own)
    const tracerOff = untraced(request) && fiber.getFiberRef(FiberRef.currentTracerEnabled)
    // the request's facts (and the tracer's switch) in one step (edge/request-facts.ts); a set
    // alone copies the fiber's refs once, where updateFiberRefs reads them out first (a second copy)
    const start = tracerOff
      ? Effect.updateFiberRefs((fiberId, refs) =>
        FiberRefs.updateAs(FiberRefs.updateAs(refs, { fiberId, fiberRef: CurrentRequestFacts, value: facts }), {
          fiberId, fiberRef: FiberRef.currentTracerEnabled, value: false
        }))
      : FiberRef.set(CurrentRequestFacts, facts)
    return Effect.zipRight(start, answer)
  })

/** Installs the edge around every route of the app (HttpApi endpoints, storage and pages). */
export const layerEdge = Layer.merge(
  HttpApiBuilder.middleware(
    Effect.gen(function*() {
      const ids = yield* IdGenerator
      const errorsBaseUrl = yield* ErrorsBaseUrl
      const trusted = yield* TrustedProxies
      const routes = yield* Routes
      return (app: HttpApp.Default) => edge(app, ids, errorsBaseUrl, trusted, routes)
    }) as Effect.Effect<(app: HttpApp.Default) => HttpApp.Default, never, EdgeNeeds>
  ).pipe(Layer.provide(layerRoutes)),
  StrictRouting
)
