/** Rules and services of self-serve accounts that the end-to-end tests reach only in part. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { layerArgon2Hasher } from "../../../adapters/argon2/hasher.js"
import { layerMemoryMailer, MemoryOutbox } from "../../../adapters/memory/mailer.js"
import { layerMemoryRateLimiter } from "../../../adapters/memory/rate-limiter.js"
import { AccountRecord } from "../../../core/domain/records.js"
import { EmailTokenRecord, SessionRecord, UserRecord } from "../../../core/domain/users.js"
import { PasswordHasher } from "../../../core/ports/password-hasher.js"
import { EmailTokenRepo, SessionRepo } from "../../../core/ports/users.js"
import { checkTokenUse } from "../../../core/rules/email-tokens.js"
import { csrfTokenOf, isWellFormedSecret, sameSecret, sha256Hex } from "../../../core/rules/secrets.js"
import { isSessionLive, needsTouch, sessionEndsAt } from "../../../core/rules/sessions.js"
import { checkCanCreateKey, checkEmail, emailKey } from "../../../core/rules/users.js"
import { sweepAccounts } from "../../../core/services/account-sweep.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import { signup } from "../../../core/services/auth.js"
import { DAY, HOUR, MINUTE } from "../../../core/time.js"
import { coreEnvironment } from "../../support/env.js"

const T0 = 1_800_000_000_000
const LIMITS = { sessionIdleMs: 7 * DAY, sessionAbsoluteMs: 30 * DAY }

const user = (o: Partial<ConstructorParameters<typeof UserRecord>[0]> = {}) =>
  new UserRecord({ id: "user_a", accountId: "acct_a", email: "a@example.com", passwordHash: null, emailVerifiedAt: null, createdAt: T0, ...o })
const account = (termsVersion = "2026-11-01") =>
  new AccountRecord({ id: "acct_a", name: "", status: "active", hasPurchased: false, termsVersion, trainingOptIn: false, createdAt: T0 })

describe("rules", () => {
  it("a session ends at the earlier of 7 days idle and 30 days from its start", () => {
    const fresh = new SessionRecord({ idHash: "h", userId: "u", createdAt: T0, lastSeenAt: T0 })
    expect(sessionEndsAt(fresh, LIMITS)).toBe(T0 + 7 * DAY)
    expect(isSessionLive(fresh, LIMITS, T0 + 7 * DAY - 1)).toBe(true)
    expect(isSessionLive(fresh, LIMITS, T0 + 7 * DAY)).toBe(false)
    const busy = new SessionRecord({ ...fresh, lastSeenAt: T0 + 29 * DAY })
    expect(sessionEndsAt(busy, LIMITS)).toBe(T0 + 30 * DAY)
    expect(needsTouch(fresh, T0 + MINUTE - 1)).toBe(false)
    expect(needsTouch(fresh, T0 + MINUTE)).toBe(true)
  })

  it("live keys need a verified address and accepted terms; test keys need neither", () => {
    expect(Either.isRight(checkCanCreateKey("test", user(), account("")))).toBe(true)
    expect(Either.getLeft(checkCanCreateKey("live", user(), account()))).toMatchObject(Option.some({ _tag: "Forbidden" }))
    expect(Either.getLeft(checkCanCreateKey("live", user({ emailVerifiedAt: T0 }), account("")))).toMatchObject(Option.some({ _tag: "Forbidden" }))
    expect(Either.isRight(checkCanCreateKey("live", user({ emailVerifiedAt: T0 }), account()))).toBe(true)
  })

  it("addresses: trimmed, compared case-insensitively, something@something of 3 to 254 characters", () => {
    expect(checkEmail("  Ada@Example.com ")).toEqual(Either.right("Ada@Example.com"))
    expect(emailKey(" Ada@Example.COM")).toBe("ada@example.com")
    for (const bad of ["", "ada", "@example.com", "ada@", "a da@example.com", `${"a".repeat(250)}@e.co`]) {
      expect(Either.isLeft(checkEmail(bad)), bad).toBe(true)
    }
  })

  it("the CSRF token is the session's: fixed for it, different for another, not the secret", () => {
    const a = "a".repeat(52)
    const b = "b".repeat(52)
    expect(csrfTokenOf(a)).toBe(csrfTokenOf(a))
    expect(csrfTokenOf(a)).not.toBe(csrfTokenOf(b))
    expect(csrfTokenOf(a)).not.toContain(a)
    expect(sameSecret(csrfTokenOf(a), csrfTokenOf(a))).toBe(true)
    expect(sameSecret(csrfTokenOf(a), csrfTokenOf(a).slice(1))).toBe(false)
    expect(isWellFormedSecret(a)).toBe(true)
    expect(isWellFormedSecret(`${a}=`)).toBe(false)
    expect(sha256Hex("x")).toMatch(/^[0-9a-f]{64}$/)
  })

  it("a link works while unused and unexpired only", () => {
    const t = new EmailTokenRecord({ hash: "h", userId: "u", purpose: "verify_email", email: "a@b.c", createdAt: T0, expiresAt: T0 + DAY, usedAt: null })
    expect(Either.isRight(checkTokenUse(Option.some(t), T0 + DAY - 1))).toBe(true)
    expect(Either.isLeft(checkTokenUse(Option.some(t), T0 + DAY))).toBe(true)
    expect(Either.isLeft(checkTokenUse(Option.some(new EmailTokenRecord({ ...t, usedAt: T0 })), T0 + 1))).toBe(true)
    expect(Either.isLeft(checkTokenUse(Option.none(), T0))).toBe(true)
  })
})

const environment = Layer.mergeAll(coreEnvironment(), layerMemoryMailer, layerMemoryRateLimiter, layerArgon2Hasher({ memoryCost: 8, timeCost: 1, parallelism: 1 }))

describe("services", () => {
  it.effect("the sweep deletes sessions past their limits, expired links and abandoned OAuth states", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const created = yield* signup({ email: "sweep@example.com", password: "password 1", acceptTerms: true }, { ip: "198.51.100.1" }, undefined)
      expect((yield* MemoryOutbox.pipe(Effect.flatMap((o) => o.messages)))).toHaveLength(1)
      expect(yield* sweepAccounts).toEqual({ sessions: 0, links: 0, oauthStates: 0 })
      yield* TestClock.adjust(DAY + HOUR)
      expect(yield* sweepAccounts).toEqual({ sessions: 0, links: 1, oauthStates: 0 })
      yield* TestClock.adjust(7 * DAY)
      expect(yield* sweepAccounts).toEqual({ sessions: 1, links: 0, oauthStates: 0 })
      expect(Option.isNone(yield* Effect.flatMap(SessionRepo, (s) => s.get(created.started.session.idHash)))).toBe(true)
      expect((yield* Effect.flatMap(EmailTokenRepo, (t) => t.createdSince(created.user.id, "verify_email", 0))).count).toBe(0)
    }).pipe(Effect.provide(environment)))

  it.effect("the operator's account takes its address like a signup: a second one for it is refused", () =>
    Effect.gen(function*() {
      yield* createAccountWithKeys({ email: "ops@example.com" })
      const again = yield* Effect.either(createAccountWithKeys({ email: " OPS@example.com " }))
      expect(Either.getLeft(again)).toMatchObject(Option.some({ _tag: "InvalidRequest", detail: "an account with this e-mail address already exists" }))
      const taken = yield* Effect.either(signup({ email: "ops@EXAMPLE.com", password: "password 1", acceptTerms: true }, { ip: "198.51.100.2" }, undefined))
      expect(Either.getLeft(taken)).toMatchObject(Option.some({ _tag: "InvalidRequest" }))
      expect(Either.isLeft(yield* Effect.either(createAccountWithKeys({ email: "not-an-address" })))).toBe(true)
    }).pipe(Effect.provide(environment)))

  it.effect("argon2id hashes verify their own password only; no hash (no user) is false", () =>
    Effect.gen(function*() {
      const hasher = yield* PasswordHasher
      const hash = yield* hasher.hash("correct horse")
      expect(hash).toMatch(/^\$argon2id\$v=19\$m=8,t=1,p=1\$/)
      expect(yield* hasher.verify(hash, "correct horse")).toBe(true)
      expect(yield* hasher.verify(hash, "correct horsE")).toBe(false)
      expect(yield* hasher.verify(null, "correct horse")).toBe(false)
      expect(yield* hasher.verify("not a hash", "correct horse")).toBe(false)
      // the deployed parameters: OWASP's argon2id (19 MiB, 2 iterations, 1 lane); old hashes keep theirs
      const deployed = yield* Effect.provide(PasswordHasher, layerArgon2Hasher())
      const strong = yield* deployed.hash("correct horse")
      expect(strong).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
      expect(yield* deployed.verify(hash, "correct horse")).toBe(true)
      expect(yield* hasher.verify(strong, "correct horse")).toBe(true)
    }).pipe(Effect.provide(environment)))
})
