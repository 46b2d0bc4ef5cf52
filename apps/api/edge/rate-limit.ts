/**
 * Which token bucket a request draws on (spec, Limits): creates 120/min and reads 1,200/min
 * per key, public 120/min per IP; `GET /v1/health` is not limited. A key's bucket is named by
 * the hash of the presented key, so live and test keys are counted apart and no secret is kept.
 */
import type { HttpServerRequest } from "@effect/platform"
import { sha256 } from "@oslojs/crypto/sha2"
import { encodeHexLowerCase } from "@oslojs/encoding"
import { Effect, Option } from "effect"
import { type RateDecision, RateLimiter, type RateLimitBucket } from "../../../core/ports/rate-limiter.js"
import { RateLimited } from "../../../core/errors.js"
import type { RouteInfo } from "./routes.js"

export const BUCKETS = {
  creates: { capacity: 120, perMinute: 120 },
  reads: { capacity: 1_200, perMinute: 1_200 },
  public: { capacity: 120, perMinute: 120 }
} as const

const bucketFor = (route: RouteInfo, request: HttpServerRequest.HttpServerRequest): RateLimitBucket | null => {
  if (route.bucket === "none") return null
  const spec = BUCKETS[route.bucket]
  const refillPerSecond = spec.perMinute / 60
  if (route.bucket === "public") {
    const ip = Option.getOrElse(request.remoteAddress, () => "unknown")
    return { key: `public:${ip}`, capacity: spec.capacity, refillPerSecond }
  }
  const authorization = request.headers["authorization"]
  // no key: the request is answered 401 without touching anything
  if (authorization === undefined || authorization.trim() === "") return null
  const keyHash = encodeHexLowerCase(sha256(new TextEncoder().encode(authorization.trim()))).slice(0, 32)
  return { key: `${route.bucket}:${keyHash}`, capacity: spec.capacity, refillPerSecond }
}

export const rateLimitHeaders = (decision: RateDecision): Record<string, string> => ({
  "ratelimit-limit": String(decision.limit),
  "ratelimit-remaining": String(decision.remaining),
  "ratelimit-reset": String(decision.resetSeconds)
})

/** Takes a token; fails with `429 rate_limited` when the bucket is empty. */
export const takeToken = (route: RouteInfo, request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const bucket = bucketFor(route, request)
    if (bucket === null) return null
    const decision = yield* Effect.flatMap(RateLimiter, (limiter) => limiter.take(bucket))
    return decision
  })

export const rateLimitedError = (decision: RateDecision) =>
  new RateLimited({
    detail: `rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.retryAfterSeconds} s`,
    retryAfterSeconds: decision.retryAfterSeconds
  })
