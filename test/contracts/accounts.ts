/**
 * The contract of the self-serve accounts' repositories (core/ports/users.ts, usage.ts) and the
 * dashboard's read of lots (WalletRepo.unexpiredLots): one suite every persistence adapter
 * (memory, PGlite, Postgres) passes. Each test gets a fresh store; time is passed explicitly.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Layer } from "effect"
import { EmailTokenRecord, OAuthIdentityRecord, OAuthStateRecord, SessionRecord, UserRecord } from "../../core/domain/users.js"
import { JobRepo, WalletRepo } from "../../core/ports/repositories.js"
import { Transactor, transactionally } from "../../core/ports/transactor.js"
import { UsageRepo } from "../../core/ports/usage.js"
import { EmailTokenRepo, OAuthRepo, SessionRepo, UserRepo } from "../../core/ports/users.js"
import { DAY, fixtureId, HOUR, makeJob, makeLot, pricing, sha256Hex, T0, YEAR } from "./fixtures.js"

export type AccountsPersistence = UserRepo | SessionRepo | EmailTokenRepo | OAuthRepo | UsageRepo | WalletRepo | JobRepo | Transactor

const makeUser = (o: Partial<ConstructorParameters<typeof UserRecord>[0]> = {}) => {
  const id = o.id ?? fixtureId("user")
  return new UserRecord({
    id, accountId: `acct_${id.slice(5)}`, email: `${id}@Example.com`, passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA",
    emailVerifiedAt: T0 + 5, createdAt: T0, ...o
  })
}

let secrets = 0
const secretHash = () => sha256Hex(`secret ${++secrets} ${Math.random()}`)

const session = (o: Partial<ConstructorParameters<typeof SessionRecord>[0]> = {}) =>
  new SessionRecord({ idHash: secretHash(), userId: "user_a", createdAt: T0, lastSeenAt: T0, ...o })

const token = (o: Partial<ConstructorParameters<typeof EmailTokenRecord>[0]> = {}) =>
  new EmailTokenRecord({
    hash: secretHash(), userId: "user_a", purpose: "verify_email", email: "a@example.com", createdAt: T0, expiresAt: T0 + DAY, usedAt: null, ...o
  })

const state = (o: Partial<ConstructorParameters<typeof OAuthStateRecord>[0]> = {}) =>
  new OAuthStateRecord({
    hash: secretHash(), provider: "oidc", codeVerifier: "v".repeat(52), acceptTerms: true, connectUserId: null,
    createdAt: T0, expiresAt: T0 + 600_000, ...o
  })

const identity = (o: Partial<ConstructorParameters<typeof OAuthIdentityRecord>[0]> = {}) =>
  new OAuthIdentityRecord({ provider: "github", subject: "12345", userId: "user_a", email: "a@example.com", createdAt: T0, ...o })

const some = <A>(option: Option.Option<A>): A => {
  expect(Option.isSome(option), "expected Some").toBe(true)
  return Option.getOrThrow(option)
}

export const accountsContracts = (name: string, makeLayer: () => Layer.Layer<AccountsPersistence, unknown, never>) => {
  const test = (title: string, body: Effect.Effect<void, unknown, AccountsPersistence>) =>
    it.live(title, () => Effect.provide(body, makeLayer()))

  describe(`${name} accounts repositories`, () => {
    describe("UserRepo", () => {
      test("insert then get, findByEmail (any case, spaces around), findByAccount", Effect.gen(function*() {
        const users = yield* UserRepo
        const a = makeUser({ passwordHash: null, emailVerifiedAt: null, createdAt: T0 + 123 })
        const b = makeUser({ email: "Grace.Hopper@Example.com" })
        expect(yield* users.insert(a)).toBe("inserted")
        expect(yield* users.insert(b)).toBe("inserted")
        expect(some(yield* users.get(a.id))).toEqual(a)
        expect(some(yield* users.findByEmail("  grace.hopper@EXAMPLE.COM "))).toEqual(b)
        expect(some(yield* users.findByAccount(b.accountId))).toEqual(b)
        expect(Option.isNone(yield* users.findByEmail("grace@example.com"))).toBe(true)
        expect(Option.isNone(yield* users.get("user_unknown"))).toBe(true)
        expect(Option.isNone(yield* users.findByAccount("acct_unknown"))).toBe(true)
      }))

      test("an address is taken once, case-insensitively: the second insert writes nothing", Effect.gen(function*() {
        const users = yield* UserRepo
        const a = makeUser({ email: "ada@example.com" })
        const twin = makeUser({ email: "ADA@Example.COM" })
        expect(yield* users.insert(a)).toBe("inserted")
        expect(yield* users.insert(twin)).toBe("email_taken")
        expect(Option.isNone(yield* users.get(twin.id))).toBe(true)
        expect(some(yield* users.findByEmail("ada@example.com")).id).toBe(a.id)
      }))

      test("concurrent inserts of one address: exactly one wins", Effect.gen(function*() {
        const users = yield* UserRepo
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => makeUser({ email: i % 2 === 0 ? "race@example.com" : "RACE@example.com" })),
          (u) => users.insert(u),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter((o) => o === "inserted")).toHaveLength(1)
      }))

      test("update replaces the fields; a failed transaction leaves nothing", Effect.gen(function*() {
        const users = yield* UserRepo
        const a = makeUser({ passwordHash: null, emailVerifiedAt: null })
        yield* users.insert(a)
        const changed = new UserRecord({ ...a, passwordHash: "$argon2id$new", emailVerifiedAt: T0 + 2 * YEAR })
        yield* users.update(changed)
        expect(some(yield* users.get(a.id))).toEqual(changed)
        const lost = makeUser()
        yield* Effect.either(transactionally(Effect.zipRight(users.insert(lost), Effect.fail("boom"))))
        expect(Option.isNone(yield* users.get(lost.id))).toBe(true)
        expect(Option.isNone(yield* users.findByEmail(lost.email))).toBe(true)
      }))
    })

    describe("SessionRepo", () => {
      test("insert, get, touch (forward only), delete", Effect.gen(function*() {
        const sessions = yield* SessionRepo
        const s = session({ createdAt: T0 + 1, lastSeenAt: T0 + 1 })
        yield* sessions.insert(s)
        expect(some(yield* sessions.get(s.idHash))).toEqual(s)
        yield* sessions.touch(s.idHash, T0 + YEAR)
        yield* sessions.touch(s.idHash, T0 + 5)
        expect(some(yield* sessions.get(s.idHash)).lastSeenAt).toBe(T0 + YEAR)
        yield* sessions.touch(secretHash(), T0 + YEAR) // unknown: nothing happens
        yield* sessions.delete(s.idHash)
        expect(Option.isNone(yield* sessions.get(s.idHash))).toBe(true)
      }))

      test("deleteByUser ends every session of the user but the one kept", Effect.gen(function*() {
        const sessions = yield* SessionRepo
        const mine = [session({ userId: "user_a" }), session({ userId: "user_a" }), session({ userId: "user_a" })]
        const theirs = session({ userId: "user_b" })
        for (const s of [...mine, theirs]) yield* sessions.insert(s)
        expect(yield* sessions.deleteByUser("user_a", mine[1]!.idHash)).toBe(2)
        expect(Option.isSome(yield* sessions.get(mine[1]!.idHash))).toBe(true)
        expect(Option.isNone(yield* sessions.get(mine[0]!.idHash))).toBe(true)
        expect(Option.isSome(yield* sessions.get(theirs.idHash))).toBe(true)
        expect(yield* sessions.deleteByUser("user_a")).toBe(1)
        expect(yield* sessions.deleteByUser("user_a")).toBe(0)
      }))

      test("deleteExpired removes sessions idle or created before the cutoffs", Effect.gen(function*() {
        const sessions = yield* SessionRepo
        const idle = session({ createdAt: T0, lastSeenAt: T0 + HOUR })
        const old = session({ createdAt: T0 - 1, lastSeenAt: T0 + 5 * DAY })
        const live = session({ createdAt: T0, lastSeenAt: T0 + 5 * DAY })
        for (const s of [idle, old, live]) yield* sessions.insert(s)
        expect(yield* sessions.deleteExpired({ idleBefore: T0 + 2 * HOUR, createdBefore: T0 })).toBe(2)
        expect(Option.isSome(yield* sessions.get(live.idHash))).toBe(true)
        expect(Option.isNone(yield* sessions.get(idle.idHash))).toBe(true)
        expect(Option.isNone(yield* sessions.get(old.idHash))).toBe(true)
      }))
    })

    describe("EmailTokenRepo", () => {
      test("use returns the token as it was and marks it used, once; purpose must match", Effect.gen(function*() {
        const tokens = yield* EmailTokenRepo
        const t = token({ purpose: "reset_password", expiresAt: T0 + HOUR })
        yield* tokens.insert(t)
        expect(Option.isNone(yield* tokens.use(t.hash, "verify_email", T0 + 1))).toBe(true)
        expect(some(yield* tokens.use(t.hash, "reset_password", T0 + 2))).toEqual(t)
        expect(some(yield* tokens.use(t.hash, "reset_password", T0 + 3))).toEqual(new EmailTokenRecord({ ...t, usedAt: T0 + 2 }))
        expect(Option.isNone(yield* tokens.use(secretHash(), "reset_password", T0))).toBe(true)
      }))

      test("concurrent uses of one token: exactly one finds it unused", Effect.gen(function*() {
        const tokens = yield* EmailTokenRepo
        const t = token()
        yield* tokens.insert(t)
        const seen = yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => i), (i) => tokens.use(t.hash, "verify_email", T0 + 10 + i), {
          concurrency: "unbounded"
        })
        expect(seen.filter((s) => Option.isSome(s) && s.value.usedAt === null)).toHaveLength(1)
      }))

      test("useAll uses every unused token of the user and purpose only; createdSince counts them", Effect.gen(function*() {
        const tokens = yield* EmailTokenRepo
        const a1 = token({ createdAt: T0 })
        const a2 = token({ createdAt: T0 + HOUR })
        const used = token({ createdAt: T0 + 2 * HOUR, usedAt: T0 + 2 * HOUR })
        const reset = token({ purpose: "reset_password", createdAt: T0 + HOUR, expiresAt: T0 + 2 * HOUR })
        const other = token({ userId: "user_b", createdAt: T0 + HOUR })
        for (const t of [a1, a2, used, reset, other]) yield* tokens.insert(t)
        expect(yield* tokens.createdSince("user_a", "verify_email", T0 + 1)).toEqual({ count: 2, earliest: T0 + HOUR })
        expect(yield* tokens.createdSince("user_a", "verify_email", T0)).toEqual({ count: 3, earliest: T0 })
        expect(yield* tokens.createdSince("user_c", "verify_email", T0)).toEqual({ count: 0, earliest: null })
        yield* tokens.useAll("user_a", "verify_email", T0 + 3 * HOUR)
        expect(some(yield* tokens.use(a1.hash, "verify_email", T0 + 4 * HOUR)).usedAt).toBe(T0 + 3 * HOUR)
        expect(some(yield* tokens.use(used.hash, "verify_email", T0 + 4 * HOUR)).usedAt).toBe(T0 + 2 * HOUR)
        expect(some(yield* tokens.use(reset.hash, "reset_password", T0 + 4 * HOUR)).usedAt).toBeNull()
        expect(some(yield* tokens.use(other.hash, "verify_email", T0 + 4 * HOUR)).usedAt).toBeNull()
        expect(yield* tokens.deleteExpired(T0 + DAY)).toBe(1)
        expect(Option.isNone(yield* tokens.use(reset.hash, "reset_password", T0 + DAY))).toBe(true)
      }))
    })

    describe("OAuthRepo", () => {
      test("a state is taken once; expired states are swept", Effect.gen(function*() {
        const oauth = yield* OAuthRepo
        const s = state({ connectUserId: "user_a", acceptTerms: false })
        const old = state({ expiresAt: T0 + 1 })
        yield* oauth.insertState(s)
        yield* oauth.insertState(old)
        expect(some(yield* oauth.takeState(s.hash))).toEqual(s)
        expect(Option.isNone(yield* oauth.takeState(s.hash))).toBe(true)
        expect(yield* oauth.deleteExpiredStates(T0 + 2)).toBe(1)
        expect(Option.isNone(yield* oauth.takeState(old.hash))).toBe(true)
      }))

      test("identities link by provider and subject, one per provider and user", Effect.gen(function*() {
        const oauth = yield* OAuthRepo
        const gh = identity()
        expect(yield* oauth.insertIdentity(gh)).toBe("inserted")
        expect(some(yield* oauth.findIdentity("github", "12345"))).toEqual(gh)
        expect(Option.isNone(yield* oauth.findIdentity("google", "12345"))).toBe(true)
        expect(yield* oauth.insertIdentity(identity({ userId: "user_b" }))).toBe("taken")
        expect(yield* oauth.insertIdentity(identity({ subject: "999" }))).toBe("taken")
        const google = identity({ provider: "google", subject: "12345", email: null, createdAt: T0 + 1 })
        expect(yield* oauth.insertIdentity(google)).toBe("inserted")
        expect(yield* oauth.identitiesOf("user_a")).toEqual([gh, google])
        expect(yield* oauth.identitiesOf("user_b")).toEqual([])
        // unlinking (the pre-hijack rule) removes the user's identities and nobody else's
        const theirs = identity({ userId: "user_b", subject: "777", provider: "oidc" })
        expect(yield* oauth.insertIdentity(theirs)).toBe("inserted")
        expect(yield* oauth.deleteIdentitiesOf("user_a")).toBe(2)
        expect(yield* oauth.identitiesOf("user_a")).toEqual([])
        expect(Option.isNone(yield* oauth.findIdentity("github", "12345"))).toBe(true)
        expect(yield* oauth.identitiesOf("user_b")).toEqual([theirs])
        expect(yield* oauth.insertIdentity(gh)).toBe("inserted")
      }))
    })

    describe("UsageRepo", () => {
      test("aggregates one account and mode in [from, to) by day, model and key; charges count succeeded jobs only", Effect.gen(function*() {
        const jobs = yield* JobRepo
        const usage = yield* UsageRepo
        const day0 = Math.floor(T0 / DAY) * DAY
        const job = (o: Parameters<typeof makeJob>[0]) => jobs.insert(makeJob({ accountId: "acct_u", ...o }))
        yield* job({ createdAt: day0 + 1, status: "succeeded", keyId: "key_1", chargedMicros: 1_200, pricing: pricing({ billableSeconds: 12 }) })
        yield* job({ createdAt: day0 + DAY - 1, status: "failed", keyId: "key_1", model: "acme/pro", pricing: pricing({ billableSeconds: 50 }) })
        yield* job({ createdAt: day0 + 2 * DAY, status: "succeeded", keyId: null, model: "acme/pro", chargedMicros: 3_000_000_000, pricing: pricing({ billableSeconds: 30 }) })
        yield* job({ createdAt: day0 + 2 * DAY + 5, status: "queued", keyId: "key_2" })
        // outside: before, at the end, another mode, another account
        yield* job({ createdAt: day0 - 1, status: "succeeded", chargedMicros: 7 })
        yield* job({ createdAt: day0 + 3 * DAY, status: "succeeded", chargedMicros: 7 })
        yield* job({ createdAt: day0 + 1, mode: "test", status: "succeeded", chargedMicros: 0 })
        yield* job({ createdAt: day0 + 1, accountId: "acct_other", status: "succeeded", chargedMicros: 7 })
        const query = { accountId: "acct_u", mode: "live" as const, from: day0, to: day0 + 3 * DAY }
        const sort = <T extends { key: string | null }>(rows: ReadonlyArray<T>) => [...rows].sort((a, b) => String(a.key).localeCompare(String(b.key)))
        const iso = (millis: number) => new Date(millis).toISOString().slice(0, 10)
        expect(sort(yield* usage.usage({ ...query, group: "day" }))).toEqual(sort([
          { key: iso(day0), jobs: 2, succeeded: 1, failed: 1, billableSeconds: 12, chargedMicros: 1_200 },
          { key: iso(day0 + 2 * DAY), jobs: 2, succeeded: 1, failed: 0, billableSeconds: 30, chargedMicros: 3_000_000_000 }
        ]))
        expect(sort(yield* usage.usage({ ...query, group: "model" }))).toEqual(sort([
          { key: "xiph/rnnoise", jobs: 2, succeeded: 1, failed: 0, billableSeconds: 12, chargedMicros: 1_200 },
          { key: "acme/pro", jobs: 2, succeeded: 1, failed: 1, billableSeconds: 30, chargedMicros: 3_000_000_000 }
        ]))
        expect(sort(yield* usage.usage({ ...query, group: "key" }))).toEqual(sort([
          { key: "key_1", jobs: 2, succeeded: 1, failed: 1, billableSeconds: 12, chargedMicros: 1_200 },
          { key: null, jobs: 1, succeeded: 1, failed: 0, billableSeconds: 30, chargedMicros: 3_000_000_000 },
          { key: "key_2", jobs: 1, succeeded: 0, failed: 0, billableSeconds: 0, chargedMicros: 0 }
        ]))
        expect(yield* usage.usage({ ...query, accountId: "acct_none", group: "day" })).toEqual([])
      }))
    })

    describe("WalletRepo.unexpiredLots", () => {
      test("lots not expired at now, used up or not, earliest expiry first, limited", Effect.gen(function*() {
        const wallets = yield* WalletRepo
        const lot = (o: Parameters<typeof makeLot>[0]) => makeLot({ accountId: "acct_l", ...o })
        const late = lot({ expiresAt: T0 + 2 * YEAR })
        const soon = lot({ expiresAt: T0 + DAY, remainingMicros: 0 })
        const flagged = lot({ expiresAt: T0 + 3 * YEAR, expired: true, remainingMicros: 0 })
        const past = lot({ expiresAt: T0 })
        const other = makeLot({ accountId: "acct_other", expiresAt: T0 + DAY })
        yield* wallets.apply({ lots: [late, soon, flagged, past, other], holds: [], entries: [] })
        expect(yield* wallets.unexpiredLots("acct_l", T0, 10)).toEqual([soon, late])
        expect(yield* wallets.unexpiredLots("acct_l", T0, 1)).toEqual([soon])
        expect(yield* wallets.unexpiredLots("acct_l", T0 + DAY, 10)).toEqual([late])
      }))
    })
  })
}
