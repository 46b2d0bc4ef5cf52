/**
 * Token buckets in process: unused capacity refills continuously. Buckets that have
 * refilled completely carry no information and are pruned, so memory follows active callers.
 */
import { Clock, Effect, Layer } from "effect"
import { type RateDecision, RateLimiter, type RateLimitBucket } from "../../core/ports/rate-limiter.js"

interface BucketState {
  readonly spec: RateLimitBucket
  readonly tokens: number
  readonly updatedAt: number
}

const PRUNE_EVERY = 1_000

const tokensAt = (state: BucketState, now: number) =>
  Math.min(state.spec.capacity, state.tokens + (Math.max(0, now - state.updatedAt) / 1000) * state.spec.refillPerSecond)

/** The bucket arithmetic, shared by every store that keeps buckets in process. */
export const makeTokenBuckets = () => {
  const buckets = new Map<string, BucketState>()
  let takes = 0
  return (spec: RateLimitBucket, now: number): RateDecision => {
    if (++takes % PRUNE_EVERY === 0) {
      for (const [key, state] of buckets) if (tokensAt(state, now) >= state.spec.capacity) buckets.delete(key)
    }
    const previous = buckets.get(spec.key)
    const available = previous === undefined ? spec.capacity : tokensAt({ ...previous, spec }, now)
    const allowed = available >= 1
    const tokens = allowed ? available - 1 : available
    buckets.set(spec.key, { spec, tokens, updatedAt: now })
    return {
      allowed,
      limit: spec.capacity,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((spec.capacity - tokens) / spec.refillPerSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / spec.refillPerSecond))
    }
  }
}

export const MemoryRateLimiter = Layer.sync(RateLimiter, () => {
  const take = makeTokenBuckets()
  return { take: (bucket) => Effect.map(Clock.currentTimeMillis, (now) => take(bucket, now)) }
})
