/**
 * Session and token properties over random sequences of signups, logins, session uses,
 * logouts, password changes, forgot/reset and verification links, and clock advances, run
 * through the core's services on the in-memory adapters (TestClock). A small model says what
 * must hold: no session outlives a logout, its user's password change or reset, its idle
 * limit (7 days) or its absolute limit (30 days), and a session the model holds live works;
 * every link works exactly once while it is valid, and never after.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Either, Layer, TestClock, TestContext } from "effect"
import fc from "fast-check"
import { layerArgon2Hasher } from "../../../adapters/argon2/hasher.js"
import { layerMemoryMailer, MemoryOutbox } from "../../../adapters/memory/mailer.js"
import { layerMemoryRateLimiter } from "../../../adapters/memory/rate-limiter.js"
import { AccountSettingsConfig, defaultAccountSettings } from "../../../core/domain/account-settings.js"
import { changePassword, login, logout, signup } from "../../../core/services/auth.js"
import { forgotPassword, resetPassword, verifyEmail } from "../../../core/services/email-links.js"
import { authenticateSession } from "../../../core/services/sessions.js"
import { DAY, HOUR, MINUTE, SECOND } from "../../../core/time.js"
import { coreEnvironment } from "../../support/env.js"

const RUNS = 1_000
const EMAILS = ["ada@example.com", "grace@example.com", "edsger@example.com"]
const SETTINGS = {
  ...defaultAccountSettings("http://hush.test"),
  // the properties are about sessions and links: throttles stay out of the way
  signupsPerHourPerIp: 1_000_000,
  failedLoginsPerAddress: 1_000_000,
  failedLoginsPerIp: 1_000_000,
  mailsPerHour: 1_000_000
}
const CLIENT = { ip: "203.0.113.7" }

type Op =
  | { readonly _tag: "Signup"; readonly user: number }
  | { readonly _tag: "Login"; readonly user: number; readonly right: boolean }
  | { readonly _tag: "Use"; readonly pick: number }
  | { readonly _tag: "UseAll" }
  | { readonly _tag: "Logout"; readonly pick: number }
  | { readonly _tag: "Change"; readonly pick: number; readonly right: boolean }
  | { readonly _tag: "Forgot"; readonly user: number }
  | { readonly _tag: "Reset"; readonly pick: number }
  | { readonly _tag: "Verify"; readonly pick: number }
  | { readonly _tag: "Advance"; readonly ms: number }
  | { readonly _tag: "DailyUse"; readonly days: number }

const user = fc.integer({ min: 0, max: EMAILS.length - 1 })
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ _tag: fc.constant("Signup" as const), user }), weight: 2 },
  { arbitrary: fc.record({ _tag: fc.constant("Login" as const), user, right: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ _tag: fc.constant("Use" as const), pick: fc.nat() }), weight: 3 },
  // every session at once: with advances of under 7 days, sessions then reach their 30-day limit
  { arbitrary: fc.constant({ _tag: "UseAll" as const }), weight: 3 },
  { arbitrary: fc.record({ _tag: fc.constant("Logout" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ _tag: fc.constant("Change" as const), pick: fc.nat(), right: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ _tag: fc.constant("Forgot" as const), user }), weight: 2 },
  { arbitrary: fc.record({ _tag: fc.constant("Reset" as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ _tag: fc.constant("Verify" as const), pick: fc.nat() }), weight: 2 },
  // days of daily use: sessions then live up to their 30-day limit
  { arbitrary: fc.record({ _tag: fc.constant("DailyUse" as const), days: fc.integer({ min: 1, max: 12 }) }), weight: 2 },
  {
    arbitrary: fc.record({
      _tag: fc.constant("Advance" as const),
      ms: fc.constantFrom(30 * SECOND, 61 * SECOND, 50 * MINUTE, 2 * HOUR, 23 * HOUR, 3 * DAY, 6 * DAY + 23 * HOUR, 8 * DAY, 29 * DAY)
    }),
    weight: 3
  }
)

interface ModelSession {
  readonly secret: string
  readonly email: string
  readonly createdAt: number
  lastSeen: number
  ended: boolean
}

interface ModelToken {
  readonly token: string
  readonly email: string
  readonly purpose: "verify_email" | "reset_password"
  readonly createdAt: number
  used: boolean
}

const live = (s: ModelSession, now: number) =>
  !s.ended && now < Math.min(s.createdAt + SETTINGS.sessionAbsoluteMs, s.lastSeen + SETTINGS.sessionIdleMs)

const valid = (t: ModelToken, now: number) =>
  !t.used && now < t.createdAt + (t.purpose === "verify_email" ? SETTINGS.verifyTokenTtlMs : SETTINGS.resetTokenTtlMs)

const environment = Layer.mergeAll(
  coreEnvironment(),
  Layer.succeed(AccountSettingsConfig, SETTINGS),
  layerMemoryMailer,
  layerMemoryRateLimiter,
  layerArgon2Hasher({ memoryCost: 8, timeCost: 1, parallelism: 1 })
)

const runScenario = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(1_800_000_000_000)
    const passwords = new Map<string, string>()
    const sessions: Array<ModelSession> = []
    const tokens: Array<ModelToken> = []
    const outbox = yield* MemoryOutbox
    let seenMail = 0
    let passwordCounter = 0

    /** Links in mail sent since the last look (some mail leaves off the request: let it run). */
    const collectMail = (wanted: number) =>
      Effect.gen(function*() {
        let messages = yield* outbox.messages
        for (let spins = 0; messages.length < seenMail + wanted && spins < 100; spins++) {
          yield* Effect.yieldNow()
          messages = yield* outbox.messages
        }
        expect(messages.length).toBe(seenMail + wanted)
        const fresh = messages.slice(seenMail)
        seenMail = messages.length
        const now = yield* Clock.currentTimeMillis
        for (const m of fresh) {
          const link = /(verify-email|reset-password)\?token=([a-z2-7]{52})/.exec(m.text)
          if (link === null) continue
          tokens.push({
            token: link[2]!, email: m.to, purpose: link[1] === "verify-email" ? "verify_email" : "reset_password", createdAt: now, used: false
          })
        }
      })

    const startedSession = (email: string, secret: string, now: number) =>
      sessions.push({ secret, email, createdAt: now, lastSeen: now, ended: false })

    const endAll = (email: string) => sessions.filter((s) => s.email === email).forEach((s) => (s.ended = true))

    /** The middleware's check, mirrored in the model (lastSeen moves at most once a minute). */
    const use = (s: ModelSession) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const expected = live(s, now)
        const outcome = yield* Effect.either(authenticateSession(s.secret))
        expect(Either.isRight(outcome), `session of ${s.email} created ${s.createdAt}, seen ${s.lastSeen}, ended ${s.ended}, now ${now}`).toBe(expected)
        if (Either.isRight(outcome)) {
          expect(outcome.right.user.email).toBe(s.email)
          if (now - s.lastSeen >= MINUTE) s.lastSeen = now
        } else {
          expect(outcome.left._tag).toBe("Unauthorized")
          s.ended = true // an ended session never comes back
        }
        return outcome
      })

    for (const op of ops) {
      const now = yield* Clock.currentTimeMillis
      switch (op._tag) {
        case "Signup": {
          const email = EMAILS[op.user]!
          const password = `password ${++passwordCounter}`
          const outcome = yield* Effect.either(signup({ email, password, acceptTerms: true }, CLIENT, undefined))
          expect(Either.isRight(outcome)).toBe(!passwords.has(email))
          if (Either.isRight(outcome)) {
            passwords.set(email, password)
            startedSession(email, outcome.right.started.secret, now)
            yield* collectMail(1)
          }
          break
        }
        case "Login": {
          const email = EMAILS[op.user]!
          const current = passwords.get(email)
          const outcome = yield* Effect.either(login({ email, password: op.right ? current ?? "never set" : "a wrong one" }, CLIENT, undefined))
          expect(Either.isRight(outcome)).toBe(op.right && current !== undefined)
          if (Either.isRight(outcome)) startedSession(email, outcome.right.started.secret, now)
          else expect(outcome.left._tag).toBe("Unauthorized")
          break
        }
        case "Use": {
          if (sessions.length > 0) yield* use(sessions[op.pick % sessions.length]!)
          break
        }
        case "UseAll": {
          for (const s of sessions) yield* use(s)
          break
        }
        case "Logout": {
          if (sessions.length === 0) break
          const s = sessions[op.pick % sessions.length]!
          yield* logout(s.secret)
          s.ended = true
          break
        }
        case "Change": {
          if (sessions.length === 0) break
          const s = sessions[op.pick % sessions.length]!
          const signedIn = yield* use(s)
          if (Either.isLeft(signedIn)) break
          const newPassword = `password ${++passwordCounter}`
          const outcome = yield* Effect.either(changePassword(
            signedIn.right,
            { password: op.right ? passwords.get(s.email)! : "a wrong one", newPassword },
            CLIENT
          ))
          expect(Either.isRight(outcome)).toBe(op.right)
          if (Either.isRight(outcome)) {
            endAll(s.email)
            passwords.set(s.email, newPassword)
            startedSession(s.email, outcome.right.started.secret, now)
            yield* collectMail(1) // the notice
          }
          break
        }
        case "Forgot": {
          const email = EMAILS[op.user]!
          yield* forgotPassword(email.toUpperCase())
          yield* collectMail(passwords.has(email) ? 1 : 0)
          break
        }
        case "Reset": {
          const resets = tokens.filter((t) => t.purpose === "reset_password")
          if (resets.length === 0) break
          const t = resets[op.pick % resets.length]!
          const newPassword = `password ${++passwordCounter}`
          const expected = valid(t, now)
          const outcome = yield* Effect.either(resetPassword(t.token, newPassword))
          expect(Either.isRight(outcome), `reset token created ${t.createdAt}, used ${t.used}, now ${now}`).toBe(expected)
          if (Either.isRight(outcome)) {
            tokens.filter((x) => x.email === t.email && x.purpose === "reset_password").forEach((x) => (x.used = true))
            endAll(t.email)
            passwords.set(t.email, newPassword)
            yield* collectMail(1) // the notice
          } else {
            expect(outcome.left._tag).toBe("InvalidRequest")
            t.used = true // whatever made it fail (used, expired) is final
          }
          break
        }
        case "Verify": {
          const verifies = tokens.filter((t) => t.purpose === "verify_email")
          if (verifies.length === 0) break
          const t = verifies[op.pick % verifies.length]!
          const expected = valid(t, now)
          const outcome = yield* Effect.either(verifyEmail(t.token))
          expect(Either.isRight(outcome)).toBe(expected)
          if (Either.isRight(outcome)) tokens.filter((x) => x.email === t.email && x.purpose === "verify_email").forEach((x) => (x.used = true))
          else t.used = true
          break
        }
        case "Advance": {
          yield* TestClock.adjust(op.ms)
          break
        }
        case "DailyUse": {
          for (let day = 0; day < op.days; day++) {
            yield* TestClock.adjust(DAY)
            for (const s of sessions) if (!s.ended) yield* use(s)
          }
          break
        }
      }
      // every session the model holds ended or expired is refused (checking one the model holds
      // live would count as a use; those are checked by "Use")
      const at = yield* Clock.currentTimeMillis
      for (const s of sessions) {
        if (!live(s, at)) expect(Either.isLeft(yield* Effect.either(authenticateSession(s.secret)))).toBe(true)
      }
    }
    // and in the end, every session is what the model says
    for (const s of sessions) yield* use(s)
  })

describe("session and link properties", () => {
  it("no session outlives a logout, a password change or reset, or its limits; no link works twice", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 30, size: "max" }), (ops) =>
        Effect.runPromise(runScenario(ops).pipe(Effect.provide(Layer.merge(environment, TestContext.TestContext))))),
      { numRuns: RUNS }
    )
  }, 600_000)
})
