/**
 * EdgeRules: what every endpoint gets after routing and after its caller is known, read from
 * its annotations (edge/facts.ts): a token from its rate bucket (by key id, by dashboard
 * account, or by IP), the scopes it requires, the body's shape, and idempotency (the scopes
 * are checked first, so a replay never goes to a caller that could not have made the request).
 */
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { LimitsConfig } from "../../../core/domain/limits.js"
import { RateLimiter } from "../../../core/ports/rate-limiter.js"
import { IdempotencyRepo } from "../../../core/ports/repositories.js"
import { requireScope } from "../../../core/rules/index.js"
import { CurrentCaller } from "../../../core/services/caller.js"
import { CurrentSession } from "../../../core/services/sessions.js"
import { checkBody } from "./body.js"
import { allEndpointFacts, factsOfRoute, pathOf } from "./facts.js"
import { checkIdempotencyKey, idempotent } from "./idempotency.js"
import { EdgeRules } from "./middleware.js"
import { noteRequest } from "./observe.js"
import { addressOf, takeToken } from "./rate-limit.js"

export const EdgeRulesLive = Layer.effect(EdgeRules, Effect.gen(function*() {
  // read the facts now: an endpoint outside the edge stops the server here, not on its first request
  yield* Effect.sync(allEndpointFacts)
  const limiter = yield* RateLimiter
  const repo = yield* IdempotencyRepo
  const { idempotencyTtlMs } = yield* LimitsConfig
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { route } = yield* HttpRouter.RouteContext
    const facts = factsOfRoute(route.method, route.path)
    if (facts === undefined) return yield* Effect.dieMessage(`no edge facts for ${route.method} ${route.path}`)
    const caller = yield* Effect.serviceOption(CurrentCaller)
    const session = Option.isNone(caller) ? yield* Effect.serviceOption(CurrentSession) : Option.none()
    yield* noteRequest(
      route.path,
      Option.isSome(caller) ? caller.value : Option.isSome(session) ? { accountId: session.value.account.id } : undefined
    )
    if (facts.bucket !== "unlimited") {
      const who = Option.isSome(caller)
        ? caller.value.keyId
        : Option.isSome(session) ? `account:${session.value.account.id}` : `ip:${addressOf(request)}`
      // without a caller every bucket is the IP's public one
      yield* takeToken(limiter, Option.isSome(caller) || Option.isSome(session) ? facts.bucket : "public", who)
    }
    if (Option.isSome(caller) && facts.scopes.length > 0) yield* requireScope(caller.value.scopes, facts.scopes)
    const body = yield* checkBody(request, facts)
    const key = facts.idempotent ? request.headers["idempotency-key"] : undefined
    if (key === undefined) return
    yield* checkIdempotencyKey(key)
    const owner = Option.isSome(caller)
      ? { accountId: caller.value.accountId, mode: caller.value.mode }
      : Option.isSome(session) ? { accountId: session.value.account.id, mode: "live" as const } : undefined
    if (owner === undefined) return
    yield* idempotent(repo, idempotencyTtlMs, { ...owner, key, method: request.method, path: pathOf(request.url), body })
  })
}))
