/** The RateLimiter contract: token buckets with continuous refill, the same in every store. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, TestClock } from "effect"
import { RateLimiter } from "../../core/ports/rate-limiter.js"

export const rateLimiterContract = (name: string, makeLayer: () => Layer.Layer<RateLimiter, unknown, never>) => {
  describe(`${name} RateLimiter`, () => {
    let bucketCounter = 0
    // keys unique per test, so a shared store (Redis) starts every test with full buckets
    const bucket = (capacity: number, refillPerSecond: number) =>
      ({ key: `contract:${name}:${Date.now()}:${++bucketCounter}`, capacity, refillPerSecond })
    const run = <A, E>(body: Effect.Effect<A, E, RateLimiter>) => Effect.provide(body, makeLayer())

    it.effect("allows the capacity, then refuses with Retry-After, and refills continuously", () =>
      run(Effect.gen(function*() {
        yield* TestClock.setTime(1_700_000_000_000)
        const limiter = yield* RateLimiter
        const b = bucket(3, 1)
        const first = yield* limiter.take(b)
        expect(first).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 1, retryAfterSeconds: 0 })
        yield* limiter.take(b)
        expect((yield* limiter.take(b)).remaining).toBe(0)
        const refused = yield* limiter.take(b)
        expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 3, retryAfterSeconds: 1 })
        yield* TestClock.adjust(500)
        expect((yield* limiter.take(b)).allowed).toBe(false)
        yield* TestClock.adjust(500)
        const refilled = yield* limiter.take(b)
        expect(refilled.allowed).toBe(true)
        expect(refilled.remaining).toBe(0)
        yield* TestClock.adjust(60_000)
        expect((yield* limiter.take(b)).remaining).toBe(2) // never above capacity
      })))

    it.effect("peek shows the bucket as a take would find it, and takes nothing", () =>
      run(Effect.gen(function*() {
        yield* TestClock.setTime(1_700_000_000_000)
        const limiter = yield* RateLimiter
        const b = bucket(2, 1)
        expect(yield* limiter.peek(b)).toEqual({ allowed: true, limit: 2, remaining: 2, resetSeconds: 0, retryAfterSeconds: 0 })
        expect((yield* limiter.peek(b)).remaining).toBe(2)
        yield* limiter.take(b)
        yield* limiter.take(b)
        const empty = yield* limiter.peek(b)
        expect(empty).toEqual({ allowed: false, limit: 2, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 })
        expect((yield* limiter.take(b)).allowed).toBe(false)
        yield* TestClock.adjust(1_000)
        expect((yield* limiter.peek(b)).allowed).toBe(true)
        expect((yield* limiter.peek(b)).remaining).toBe(1)
        expect((yield* limiter.take(b)).allowed).toBe(true)
        expect((yield* limiter.peek(b)).allowed).toBe(false)
      })))

    it.effect("counts keys apart", () =>
      run(Effect.gen(function*() {
        yield* TestClock.setTime(1_700_000_000_000)
        const limiter = yield* RateLimiter
        const a = bucket(1, 0.5)
        const other = bucket(1, 0.5)
        expect((yield* limiter.take(a)).allowed).toBe(true)
        const refused = yield* limiter.take(a)
        expect(refused.allowed).toBe(false)
        expect(refused.retryAfterSeconds).toBe(2)
        expect((yield* limiter.take(other)).allowed).toBe(true)
      })))
  })
}
