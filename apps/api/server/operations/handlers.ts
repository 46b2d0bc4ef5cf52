/** `GET /metrics` and `GET /readyz` (apps/api/contract/groups/operations.ts). */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { NotFound, Unauthorized } from "../../../../core/errors.js"
import { RateLimiter } from "../../../../core/ports/rate-limiter.js"
import { HushApi } from "../../contract/definition.js"
import { takeAddressToken } from "../edge/rate-limit.js"
import { bearerMatches, MetricsAccess } from "./access.js"
import { PROMETHEUS_CONTENT_TYPE } from "./prometheus.js"
import { notReady, readiness } from "./readiness.js"
import { makeScrape } from "./scrape.js"

export const OperationsHandlers = HttpApiBuilder.group(HushApi, "operations", (handlers) =>
  Effect.gen(function*() {
    const access = yield* MetricsAccess
    const scrape = yield* makeScrape
    const limiter = yield* RateLimiter
    const context = yield* Effect.context<Effect.Effect.Context<typeof readiness>>()
    return handlers
      .handleRaw("metrics", () =>
        Effect.gen(function*() {
          if (Option.isNone(access.token) || access.ownPort) return yield* new NotFound({ detail: "no route for GET /metrics" })
          const request = yield* HttpServerRequest.HttpServerRequest
          if (!bearerMatches(request.headers["authorization"], access.token.value)) {
            yield* takeAddressToken(limiter, request)
            return yield* new Unauthorized({ detail: "metrics need Authorization: Bearer with the metrics token" })
          }
          return HttpServerResponse.text(yield* scrape, { contentType: PROMETHEUS_CONTENT_TYPE, headers: { "cache-control": "no-store" } })
        }))
      .handle("readyz", () =>
        Effect.flatMap(readiness, (report) =>
          report.ready ? Effect.succeed({ status: "ready" as const, checks: report.checks }) : Effect.fail(notReady(report))
        ).pipe(Effect.provide(context)))
  }))
