/** Token-bucket arithmetic shared by every rate-limit store (spec: unused capacity refills continuously). */
import type { RateDecision, RateLimitBucket } from "../ports/rate-limiter.js"

/** Tokens after refilling `elapsedMs` since `tokens` were counted, capped at capacity. */
export const refill = (bucket: RateLimitBucket, tokens: number, elapsedMs: number): number =>
  Math.min(bucket.capacity, tokens + (Math.max(0, elapsedMs) / 1000) * bucket.refillPerSecond)

/** The answer for a take that left `tokens` in the bucket. */
export const decide = (bucket: RateLimitBucket, tokens: number, allowed: boolean): RateDecision => ({
  allowed,
  limit: bucket.capacity,
  remaining: Math.floor(tokens),
  resetSeconds: Math.ceil((bucket.capacity - tokens) / bucket.refillPerSecond),
  retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / bucket.refillPerSecond))
})
