import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { layerMemoryRateLimiter } from "../../../adapters/memory/rate-limiter.js"
import { layerRedisRateLimiter } from "../../../adapters/redis/rate-limiter.js"
import { RateLimiter } from "../../../core/ports/rate-limiter.js"
import { rateLimiterContract } from "../../contracts/rate-limiter.js"

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

rateLimiterContract("memory", () => layerMemoryRateLimiter)
rateLimiterContract("redis", () => layerRedisRateLimiter(REDIS_URL, { keyPrefix: "hush-test:rate:" }))

describe("redis RateLimiter", () => {
  it.live("shares one bucket between two nodes", () =>
    Effect.gen(function*() {
      const bucket = { key: `shared:${Date.now()}`, capacity: 2, refillPerSecond: 0.01 }
      // two limiters with their own connections, as two API nodes would have
      const node = () => Effect.map(Layer.build(layerRedisRateLimiter(REDIS_URL, { keyPrefix: "hush-test:rate:" })), Context.get(RateLimiter))
      const nodeA = yield* node()
      const nodeB = yield* node()
      expect((yield* nodeA.take(bucket)).allowed).toBe(true)
      expect((yield* nodeB.take(bucket)).allowed).toBe(true)
      expect((yield* nodeA.take(bucket)).allowed).toBe(false)
    }).pipe(Effect.scoped))

  it.live("answers 503 service_unavailable with Retry-After when Redis is unreachable", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const error = yield* Effect.flip(limiter.take({ key: "any", capacity: 1, refillPerSecond: 1 }))
      expect(error._tag).toBe("ServiceUnavailable")
      expect(error.status).toBe(503)
      expect(error.retryAfterSeconds).toBe(1)
    }).pipe(Effect.provide(layerRedisRateLimiter("redis://127.0.0.1:1", { timeoutMs: 200 }))))
})
