/**
 * Token buckets in Redis, shared by every API node (decisions.md: REDIS_URL). One Lua script
 * refills and takes atomically; time comes from the caller's Clock, so every node applies the
 * same arithmetic as the in-process store. Redis unreachable → `503 service_unavailable`.
 */
import { Clock, Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { ServiceUnavailable } from "../../core/errors.js"
import { RateLimiter, type RateLimitBucket } from "../../core/ports/rate-limiter.js"
import { decide } from "../../core/rules/token-bucket.js"

/** KEYS[1] bucket; ARGV: capacity, refill per second, now (ms). Reads the bucket's state; `tokens` is nil when it has none. */
const READ_STATE = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call("HMGET", KEYS[1], "tokens", "updated")
local tokens = tonumber(state[1])
local updated = tonumber(state[2])
`

/** Takes a token. Returns {allowed, tokens×1000}. */
const TAKE = `${READ_STATE}
if tokens == nil then
  tokens = capacity
else
  tokens = math.min(capacity, tokens + math.max(0, now - updated) / 1000 * rate)
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "updated", tostring(now))
redis.call("PEXPIRE", KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1000)
return {allowed, math.floor(tokens * 1000)}
`

/** The same refill without a take or a write. Returns tokens×1000. */
const PEEK = `${READ_STATE}
if tokens == nil then
  return math.floor(capacity * 1000)
end
return math.floor(math.min(capacity, tokens + math.max(0, now - updated) / 1000 * rate) * 1000)
`

const RETRY_AFTER_SECONDS = 1

export const layerRedisRateLimiter = (url: string, options: { readonly keyPrefix?: string; readonly timeoutMs?: number } = {}) =>
  Layer.scoped(RateLimiter, Effect.gen(function*() {
    const timeoutMs = options.timeoutMs ?? 500
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() => new Redis(url, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: timeoutMs,
        commandTimeout: timeoutMs,
        keyPrefix: options.keyPrefix ?? "hush:rate:"
      })),
      (client) => Effect.promise(() => client.quit().catch(() => undefined))
    )
    // connection errors surface per command as 503; the client keeps reconnecting quietly
    redis.on("error", () => undefined)
    // a node may start while Redis is down: it answers 503 until the client reconnects
    yield* Effect.promise(() => redis.connect().catch(() => undefined))
    const run = <A>(script: string, bucket: RateLimitBucket) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({
          try: () => redis.eval(script, 1, bucket.key, bucket.capacity, bucket.refillPerSecond, now) as Promise<A>,
          catch: () => new ServiceUnavailable({
            detail: "the rate-limit store is briefly unavailable; retry shortly",
            retryAfterSeconds: RETRY_AFTER_SECONDS
          })
        }))
    return {
      take: (bucket) =>
        Effect.map(run<[number, number]>(TAKE, bucket), ([allowed, milliTokens]) => decide(bucket, milliTokens / 1000, allowed === 1)),
      peek: (bucket) =>
        Effect.map(run<number>(PEEK, bucket), (milliTokens) => decide(bucket, milliTokens / 1000, milliTokens >= 1000))
    }
  }))
