import { HttpServerRequest } from "@effect/platform"
import { Effect, FiberRef, Layer, Option } from "effect"
import { AccountRepo, KeyRepo } from "../../../core/ports/repositories.js"
import { authenticate } from "../../../core/services/caller.js"
import { EdgeCaller } from "../context.js"
import { Authentication } from "../definition.js"

/** Reads the raw header, so a missing or non-Bearer header is judged by the core's rules too. */
export const AuthenticationLive = Layer.effect(Authentication, Effect.gen(function*() {
  const repos = yield* Effect.context<AccountRepo | KeyRepo>()
  return {
    apiKey: () =>
      Effect.flatMap(FiberRef.get(EdgeCaller), Option.match({
        onSome: Effect.succeed,
        onNone: () =>
          Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
            authenticate(request.headers["authorization"]).pipe(Effect.provide(repos)))
      }))
  }
}))
