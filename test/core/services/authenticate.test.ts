/**
 * authenticate: API keys to callers (core/services/caller.ts),
 * end to end over the in-memory adapters (test/core/services/support.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { KeyRepo } from "../../../core/ports/repositories.js"
import { changeAccountStatus, revokeKey } from "../../../core/services/accounts.js"
import { authenticate } from "../../../core/services/caller.js"
import { SECOND } from "../../../core/time.js"
import { run, signup } from "./support.js"

describe("authenticate", () => {
  it.effect("missing, malformed and unknown keys → Unauthorized", () =>
    run(Effect.gen(function*() {
      yield* signup()
      for (
        const header of [
          undefined,
          "",
          "   ",
          "Basic dXNlcjpwYXNz",
          "Bearer",
          "Bearer not-a-key",
          `Bearer hush_prod_${"a".repeat(52)}`,
          `Bearer hush_live_${"a".repeat(51)}`,
          `Bearer hush_live_${"a".repeat(52)}` // well formed, unknown
        ]
      ) {
        const error = yield* Effect.flip(authenticate(header))
        expect(error._tag, String(header)).toBe("Unauthorized")
        expect(error.status).toBe(401)
      }
    })))

  it.effect("a revoked key → Unauthorized; the other key still works", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      yield* revokeKey(a.account.id, a.liveKeyId)
      expect((yield* Effect.flip(authenticate(`Bearer ${a.liveKey}`)))._tag).toBe("Unauthorized")
      expect((yield* authenticate(`Bearer ${a.testKey}`)).mode).toBe("test")
    })))

  it.effect("a frozen account → AccountFrozen on both keys; suspended still authenticates", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      yield* changeAccountStatus(a.account.id, "dispute_opened")
      for (const key of [a.liveKey, a.testKey]) {
        const error = yield* Effect.flip(authenticate(`Bearer ${key}`))
        expect(error._tag).toBe("AccountFrozen")
        expect(error.status).toBe(403)
      }
      yield* changeAccountStatus(a.account.id, "dispute_lost")
      const caller = yield* authenticate(`Bearer ${a.liveKey}`)
      expect(caller.account.status).toBe("suspended")
    })))

  it.effect("resolves the caller and sets last_used_at", () =>
    run(Effect.gen(function*() {
      const a = yield* signup()
      const keys = yield* KeyRepo
      yield* TestClock.adjust("5 minutes")
      const caller = yield* authenticate(`bearer  ${a.liveKey}`)
      expect(caller).toMatchObject({ accountId: a.account.id, keyId: a.liveKeyId, mode: "live" })
      expect(caller.scopes).toEqual(["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"])
      const key = Option.getOrThrow(yield* keys.get(a.liveKeyId))
      expect(key.lastUsedAt).toBe(5 * 60 * SECOND)
    })))
})
