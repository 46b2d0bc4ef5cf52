/**
 * What the edge records of each request once it is answered: the request metrics (by route
 * template, never the raw path), the problem counters, and one log line with the request id,
 * route, status, duration and the caller's account and key ids. Headers, bodies and query
 * strings are never logged: they carry keys, signed URLs' signatures and session cookies.
 */
import { Context, Effect, LogLevel, Option, Tracer } from "effect"
import type { ApiError } from "../../../../core/errors.js"
import { LogFields, logNow } from "../../../../core/observability/log-fields.js"
import * as Metrics from "../../../../core/observability/metrics.js"
import { isRecorded } from "../../../../core/observability/spans.js"
import type { RequestFacts } from "./request-facts.js"

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
  /** The route template the router matched (edge/routes.ts), `unmatched` for none: never the raw path. */
  readonly route: string
  readonly method: string
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
    const { route, method } = answer
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
