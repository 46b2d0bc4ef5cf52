import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { RateLimiter } from "../../../../core/ports/rate-limiter.js"
import { KeyRepo } from "../../../../core/ports/repositories.js"
import { authenticateWith } from "../../../../core/services/caller.js"
import { Authentication } from "../../contract/middleware.js"
import { takeAddressToken } from "../edge/rate-limit.js"

/**
 * Reads the raw header, so a missing or non-Bearer header is judged by the core's rules too.
 * A request without a valid key draws on its IP's public bucket: a flood of them is 429.
 */
export const layerAuthentication = Layer.effect(Authentication, Effect.gen(function*() {
  const keys = yield* KeyRepo
  const limiter = yield* RateLimiter
  return {
    apiKey: () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.tapError(authenticateWith(keys, request.headers["authorization"]), () => takeAddressToken(limiter, request)))
  }
}))
