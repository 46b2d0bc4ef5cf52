/**
 * What the edge records of each request once it is answered: the request metrics (by route
 * template, never the raw path), the problem counters, and one log line with the request id,
 * route, status, duration and the caller's account and key ids. Headers, bodies and query
 * strings are never logged: they carry keys, signed URLs' signatures and session cookies.
 */
import { Context, Effect, LogLevel, Option, Tracer } from "effect"
import { STORAGE_PATH_PREFIX } from "../../../../adapters/local-storage/config.js"
import type { ApiError } from "../../../../core/errors.js"
import { LogFields, logNow } from "../../../../core/observability/log-fields.js"
import * as Metrics from "../../../../core/observability/metrics.js"
import { isRecorded } from "../../../../core/observability/spans.js"
import { REFERENCE_PATHS, SCALAR_SCRIPT_PATH } from "../openapi/paths.js"
import { DASHBOARD_PAGES } from "../web.js"
import { allEndpointFacts, pathMatches, pathOf } from "./facts.js"
import type { RequestFacts } from "./request-facts.js"

interface Template {
  readonly path: string
  /** Its segments, `null` where a parameter matches any non-empty segment. */
  readonly segments: ReadonlyArray<string | null>
}

let templatesByMethod: Map<string, ReadonlyArray<Template>> | undefined
/** The HttpApi's templates by method, split once, static segments first, as the router prefers them. */
const templates = (method: string) => {
  if (templatesByMethod === undefined) {
    const map = new Map<string, Array<Template>>()
    for (const facts of allEndpointFacts()) {
      const segments = facts.path.split("/").map((s) => (s.startsWith(":") ? null : s))
      map.set(facts.method, [...(map.get(facts.method) ?? []), { path: facts.path, segments }])
    }
    const params = (t: Template) => t.segments.filter((s) => s === null).length
    for (const list of map.values()) list.sort((a, b) => params(a) - params(b))
    templatesByMethod = map
  }
  return templatesByMethod.get(method) ?? []
}

const matches = (template: Template, segments: ReadonlyArray<string>) =>
  template.segments.length === segments.length &&
  template.segments.every((want, i) => (want === null ? segments[i] !== "" : want === segments[i]))

/** Routes outside the HttpApi with a bounded set of paths. */
const OTHER_ROUTES = new Set([
  ...Object.values(REFERENCE_PATHS).flatMap((paths) => [paths.page, paths.document]), SCALAR_SCRIPT_PATH, "/metrics", "/readyz"
])

/** The route template a request matched (`/v1/jobs/:job_id`); `unmatched` for no route: never the raw path. */
const routeByRequest = new WeakMap<object, string>()

/**
 * The route template of a request, computed once: the request's span is named by it when the
 * request starts and its metrics and log line use it again when it is answered.
 */
export const routeOfRequest = (request: { readonly method: string; readonly url: string }): string => {
  let route = routeByRequest.get(request)
  if (route === undefined) routeByRequest.set(request, route = routeOf(request.method, pathOf(request.url)))
  return route
}

export const routeOf = (method: string, pathname: string): string => {
  const segments = pathname.split("/")
  const template = templates(method).find((t) => matches(t, segments))
  if (template !== undefined) return template.path
  if (pathname.startsWith(`${STORAGE_PATH_PREFIX}/`)) return `${STORAGE_PATH_PREFIX}/*`
  if (pathname.startsWith("/errors/") && pathname.split("/").length === 3) return "/errors/:code"
  if (OTHER_ROUTES.has(pathname)) return pathname
  const page = DASHBOARD_PAGES.find((t) => pathMatches(t, pathname))
  if (page !== undefined) return page
  if (pathname.startsWith("/assets/") && pathname.split("/").length === 3) return "/assets/:name"
  return "unmatched"
}

/** Counts a problem answer by its code; rate-limit and quota refusals also by their own counters. */
export const countProblem = (error: ApiError) =>
  Effect.zipRight(
    Metrics.count(Metrics.problems, { code: error.code, status: String(error.status) }),
    error.code === "quota_exceeded" || error.code === "insufficient_credit"
      ? Metrics.count(Metrics.quotaRejections, { code: error.code })
      : Effect.void
  )

export interface Answered {
  readonly requestId: string
  readonly request: { readonly method: string; readonly url: string }
  readonly status: number
  readonly seconds: number
  readonly facts: RequestFacts
}

/**
 * The request's metrics, its span's attributes and its one log line. Every request ends here,
 * so it is one step of the runtime, not a dozen: the metrics, the span and the line (`logNow`)
 * are done in one synchronous read of the fiber, and the line's fields travel in its message
 * (`LogFields`), not as annotations of the fiber.
 */
export const recordAnswer = (answer: Answered) =>
  Effect.withFiberRuntime<void>((fiber) => {
    const context = fiber.currentContext
    // the router's match when an endpoint ran: no second matching of the path
    const route = answer.facts.route ?? routeOfRequest(answer.request)
    const method = answer.request.method
    const labels = { route, method, status: String(answer.status) }
    const { accountId, keyId } = answer.facts
    const span = Context.getOption(context, Tracer.ParentSpan)
    if (Option.isSome(span) && isRecorded(span.value)) {
      span.value.attribute("hush.request_id", answer.requestId)
      span.value.attribute("http.route", route)
      if (accountId !== undefined) span.value.attribute("hush.account_id", accountId)
      if (keyId !== undefined) span.value.attribute("hush.key_id", keyId)
    }
    Metrics.countNow(Metrics.httpRequests, labels)
    Metrics.observeNow(Metrics.httpRequestDuration, labels, answer.seconds)
    const fields: Array<readonly [string, unknown]> = [
      ["requestId", answer.requestId],
      ["method", method],
      ["route", route],
      ["status", answer.status],
      ["durationMs", Math.round(answer.seconds * 1e4) / 10]
    ]
    if (accountId !== undefined) fields.push(["accountId", accountId])
    if (keyId !== undefined) fields.push(["keyId", keyId])
    logNow(fiber, LogLevel.Info, ["request", new LogFields(fields)])
    return Effect.void
  })
