/**
 * Token buckets in process: unused capacity refills continuously. Buckets that have
 * refilled completely carry no information and are pruned, so memory follows active callers.
 */
import { Clock, Effect, Layer } from "effect"
import { type RateDecision, RateLimiter, type RateLimitBucket } from "../../core/ports/rate-limiter.js"
import { decide, refill } from "../../core/rules/token-bucket.js"

interface BucketState {
  readonly spec: RateLimitBucket
  readonly tokens: number
  readonly updatedAt: number
}

const PRUNE_EVERY = 1_000

const tokensAt = (state: BucketState, now: number) => refill(state.spec, state.tokens, now - state.updatedAt)

/** The bucket arithmetic, shared by every store that keeps buckets in process. */
export const makeTokenBuckets = () => {
  const buckets = new Map<string, BucketState>()
  let takes = 0
  const availableAt = (spec: RateLimitBucket, now: number) => {
    const previous = buckets.get(spec.key)
    return previous === undefined ? spec.capacity : tokensAt({ ...previous, spec }, now)
  }
  const take = (spec: RateLimitBucket, now: number): RateDecision => {
    if (++takes % PRUNE_EVERY === 0) {
      for (const [key, state] of buckets) if (tokensAt(state, now) >= state.spec.capacity) buckets.delete(key)
    }
    const available = availableAt(spec, now)
    const allowed = available >= 1
    const tokens = allowed ? available - 1 : available
    buckets.set(spec.key, { spec, tokens, updatedAt: now })
    return decide(spec, tokens, allowed)
  }
  const peek = (spec: RateLimitBucket, now: number): RateDecision => {
    const available = availableAt(spec, now)
    return decide(spec, available, available >= 1)
  }
  return { take, peek }
}

export const layerMemoryRateLimiter = Layer.sync(RateLimiter, () => {
  const buckets = makeTokenBuckets()
  return {
    take: (bucket) => Effect.map(Clock.currentTimeMillis, (now) => buckets.take(bucket, now)),
    peek: (bucket) => Effect.map(Clock.currentTimeMillis, (now) => buckets.peek(bucket, now))
  }
})
