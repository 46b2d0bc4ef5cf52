/**
 * EdgeRules: what every endpoint gets after routing and after its caller is known, read from
 * its annotations (edge/facts.ts): a token from its rate bucket (by key id, by dashboard
 * account, or by IP), the scopes it requires, the body's shape, and idempotency (the scopes
 * are checked first, so a replay never goes to a caller that could not have made the request).
 */
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option, type Scope } from "effect"
import { LimitsConfig } from "../../../../core/domain/limits.js"
import { RateLimiter } from "../../../../core/ports/rate-limiter.js"
import { IdempotencyRepo } from "../../../../core/ports/repositories.js"
import { requireScope } from "../../../../core/rules/index.js"
import { CurrentCaller } from "../../../../core/domain/caller.js"
import { CurrentSession } from "../../../../core/domain/caller.js"
import { checkBody, methodHasBody } from "./body.js"
import { allEndpointFacts, factsOfRoute, pathOf } from "./facts.js"
import { checkIdempotencyKey, idempotent } from "./idempotency.js"
import { EdgeRules, type EdgeRulesFailure } from "../../contract/middleware.js"
import { noteRequest } from "./request-facts.js"
import { takeAddressToken, takeToken } from "./rate-limit.js"

export const layerEdgeRules = Layer.effect(EdgeRules, Effect.gen(function*() {
  // read the facts now: an endpoint outside the edge stops the server here, not on its first request
  yield* Effect.sync(allEndpointFacts)
  const limiter = yield* RateLimiter
  const repo = yield* IdempotencyRepo
  const { idempotencyTtlMs } = yield* LimitsConfig
  // every request passes here: one read of the context, then only the steps its endpoint needs
  // (a health check or a poll has no body to check and no idempotency record)
  return Effect.withFiberRuntime<void, EdgeRulesFailure, Scope.Scope>((fiber) => {
    const context = fiber.currentContext as Context.Context<HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext>
    const request = Context.get(context, HttpServerRequest.HttpServerRequest)
    const { route } = Context.get(context, HttpRouter.RouteContext)
    const facts = factsOfRoute(route.method, route.path)
    if (facts === undefined) return Effect.dieMessage(`no edge facts for ${route.method} ${route.path}`)
    // provided by the caller's middleware, where the endpoint has one
    const optional = context as Context.Context<never>
    const caller = Context.getOption(optional, CurrentCaller)
    const session = Option.isNone(caller) ? Context.getOption(optional, CurrentSession) : Option.none()
    const account = Option.isSome(session) ? session.value.account.id : undefined
    noteRequest(
      fiber,
      route.path,
      Option.isSome(caller) ? caller.value : account !== undefined ? { accountId: account } : undefined
    )
    const steps: Array<Effect.Effect<void, EdgeRulesFailure, Scope.Scope>> = []
    if (facts.bucket !== "unlimited") {
      // without a caller every bucket is the IP's public one
      steps.push(Option.isSome(caller)
        ? takeToken(limiter, facts.bucket, caller.value.keyId)
        : account !== undefined
        ? takeToken(limiter, facts.bucket, `account:${account}`)
        : takeAddressToken(limiter, request))
    }
    if (Option.isSome(caller) && facts.scopes.length > 0) steps.push(requireScope(caller.value.scopes, facts.scopes))
    const key = facts.idempotent ? request.headers["idempotency-key"] : undefined
    if (methodHasBody(request.method) || key !== undefined) {
      steps.push(Effect.flatMap(checkBody(request, facts), (body) => {
        if (key === undefined) return Effect.void
        const owner = Option.isSome(caller)
          ? { accountId: caller.value.accountId, mode: caller.value.mode }
          : account !== undefined ? { accountId: account, mode: "live" as const } : undefined
        return owner === undefined
          ? checkIdempotencyKey(key)
          : Effect.zipRight(checkIdempotencyKey(key), idempotent(repo, idempotencyTtlMs, { ...owner, key, method: request.method, path: pathOf(request.url), body }))
      }))
    }
    return steps.length === 0 ? Effect.void : steps.length === 1 ? steps[0]! : Effect.all(steps, { discard: true })
  })
}))
