/**
 * Token buckets (spec, Limits; decisions.md, Requests): creates 120/min and reads 1,200/min
 * per API key (its id: however the `Authorization` header is spelled) or per dashboard
 * account; 120/min per IP for the public endpoints and for every request that has no valid
 * caller (a 401 included). `unlimited` endpoints draw on none. The `RateLimit-*` headers are
 * added to whatever answer the request gets.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { RateLimited } from "../../../../core/errors.js"
import { type RateDecision, RateLimiter } from "../../../../core/ports/rate-limiter.js"
import { rateNetworkOf } from "../../../../core/rules/ip-address.js"
import * as Metrics from "../../../../core/observability/metrics.js"
import type { BucketName } from "../../contract/annotations.js"
import { addAnswerHeaders } from "./request-facts.js"

export const BUCKETS = {
  creates: { capacity: 120, perMinute: 120 },
  reads: { capacity: 1_200, perMinute: 1_200 },
  public: { capacity: 120, perMinute: 120 }
} as const

export type LimitedBucket = Exclude<BucketName, "unlimited">

export const rateLimitHeaders = (decision: RateDecision): Record<string, string> => ({
  "ratelimit-limit": String(decision.limit),
  "ratelimit-remaining": String(decision.remaining),
  "ratelimit-reset": String(decision.resetSeconds)
})

export const rateLimitedError = (decision: RateDecision) =>
  new RateLimited({
    detail: `rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.retryAfterSeconds} s`,
    retryAfterSeconds: decision.retryAfterSeconds
  })

/**
 * Takes a token from `bucket` for `who` (`key_…`, `account:acct_…`, `ip:…`); the answer gets
 * the bucket's headers; an empty bucket is `429 rate_limited`.
 */
export const takeToken = (
  limiter: RateLimiter["Type"],
  bucket: LimitedBucket,
  who: string
) =>
  Effect.flatMap(
    limiter.take({ key: `${bucket}:${who}`, capacity: BUCKETS[bucket].capacity, refillPerSecond: BUCKETS[bucket].perMinute / 60 }),
    (decision) => {
      const tagged = addAnswerHeaders(rateLimitHeaders(decision))
      return decision.allowed
        ? tagged
        : Effect.zipRight(Effect.zipRight(tagged, Metrics.count(Metrics.rateLimitRejections, { bucket })), Effect.fail(rateLimitedError(decision)))
    }
  )

/** The client's address: behind a trusted proxy, the one it forwarded for (edge/index.ts `fromClient`). */
export const addressOf = (request: HttpServerRequest.HttpServerRequest) => Option.getOrElse(request.remoteAddress, () => "unknown")

/** A request without a valid caller: the public bucket of its IP (an IPv6 client's /64). */
export const takeAddressToken = (limiter: RateLimiter["Type"], request: HttpServerRequest.HttpServerRequest) =>
  takeToken(limiter, "public", `ip:${rateNetworkOf(addressOf(request))}`)
