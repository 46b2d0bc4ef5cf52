import { Context, Effect } from "effect"
import type { ServiceUnavailable } from "../errors.js"

export interface RateLimitBucket {
  /** Who is counted, e.g. `creates:key_…:live` or `public:203.0.113.9`. */
  readonly key: string
  readonly capacity: number
  /** Tokens per second; unused capacity refills continuously. */
  readonly refillPerSecond: number
}

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Seconds until the bucket is full again. */
  readonly resetSeconds: number
  /** Seconds until one token is available (0 when allowed). */
  readonly retryAfterSeconds: number
}

export class RateLimiter extends Context.Tag("hush/RateLimiter")<RateLimiter, {
  readonly take: (bucket: RateLimitBucket) => Effect.Effect<RateDecision, ServiceUnavailable>
  /**
   * The bucket as a take would find it, without taking: `allowed` when a token is there. For
   * limits that count failures only (failed logins): look first, take when the attempt failed.
   */
  readonly peek: (bucket: RateLimitBucket) => Effect.Effect<RateDecision, ServiceUnavailable>
}>() {}
