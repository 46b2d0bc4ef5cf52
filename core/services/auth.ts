/**
 * Signing up, in and out, and changing the password. Every success starts a session with a
 * new id (the one the browser presented, if any, is ended: no fixation). Limits are domain
 * rules here, counted in the RateLimiter: signups 10 an hour per IP; failed logins 10 per
 * address and 100 per IP in 15 minutes, after which every attempt is `429 rate_limited`
 * (even with the right password, so guessing gains nothing). An IPv6 client's IP is its /64
 * (`rateNetworkOf`).
 */
import { Effect, Option } from "effect"
import { type AccountSettings, AccountSettingsConfig } from "../domain/account-settings.js"
import { UserRecord } from "../domain/users.js"
import { InvalidRequest, RateLimited, Unauthorized } from "../errors.js"
import { Digests } from "../ports/digests.js"
import { PasswordHasher } from "../ports/password-hasher.js"
import { type RateDecision, RateLimiter, type RateLimitBucket } from "../ports/rate-limiter.js"
import { AccountRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { UserRepo } from "../ports/users.js"
import { rateNetworkOf } from "../rules/ip-address.js"
import { type DigestFunctions, sha256Hex } from "../rules/secrets.js"
import { emailKey } from "../rules/users.js"
import { HOUR } from "../time.js"
import { createAccountWithUser } from "./accounts.js"
import { sendVerification } from "./email-links.js"
import { passwordChangedMail, sendQuietly } from "./mail.js"
import type { SignedIn } from "../domain/caller.js"
import { endSession, endUserSessions, startSession } from "./sessions.js"

/** What the HTTP edge knows of the client. */
export interface ClientInfo {
  /** Its address (behind a trusted proxy, the one forwarded for); buckets count its network (`rateNetworkOf`). */
  readonly ip: string
}

const bucket = (key: string, capacity: number, windowMs: number): RateLimitBucket =>
  ({ key, capacity, refillPerSecond: (capacity * 1000) / windowMs })

const rateLimited = (decision: RateDecision, what: string) =>
  new RateLimited({ detail: `${what}; retry after ${decision.retryAfterSeconds} s`, retryAfterSeconds: decision.retryAfterSeconds })

/** The failed-login buckets of an address and an IP. */
const loginBuckets = (settings: AccountSettings, digests: DigestFunctions, email: string, ip: string) => [
  bucket(`login-failures:address:${sha256Hex(emailKey(email), digests).slice(0, 32)}`, settings.failedLoginsPerAddress, settings.failedLoginWindowMs),
  bucket(`login-failures:ip:${rateNetworkOf(ip)}`, settings.failedLoginsPerIp, settings.failedLoginWindowMs)
]

const TOO_MANY_FAILURES = "too many failed sign-ins for this address or network"

/** Refuses an attempt while either bucket is empty. */
const checkLoginBudget = (email: string, client: ClientInfo) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    for (const b of loginBuckets(yield* AccountSettingsConfig, yield* Digests, email, client.ip)) {
      const decision = yield* limiter.peek(b)
      if (!decision.allowed) return yield* rateLimited(decision, TOO_MANY_FAILURES)
    }
  })

/** Counts a failure in both buckets; one found empty (a race past the check) is `429`. */
const countLoginFailure = (email: string, client: ClientInfo) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    for (const b of loginBuckets(yield* AccountSettingsConfig, yield* Digests, email, client.ip)) {
      const decision = yield* limiter.take(b)
      if (!decision.allowed) return yield* rateLimited(decision, TOO_MANY_FAILURES)
    }
  })

const WRONG_CREDENTIALS = "the e-mail address or the password is wrong"

const accountOf = (user: UserRecord) =>
  Effect.flatMap(AccountRepo, (accounts) => accounts.get(user.accountId)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.dieMessage(`user ${user.id} has no account ${user.accountId}`),
      onSome: Effect.succeed
    }))
  )

/**
 * `POST /v1/auth/signup`: an account and its user, a session, and the verification mail.
 * `accept_terms: false` and a taken address are `422 invalid_request`.
 */
export const signup = (
  request: { readonly email: string; readonly password: string; readonly acceptTerms: boolean },
  client: ClientInfo,
  presentedSession: string | undefined
) =>
  Effect.gen(function*() {
    const settings = yield* AccountSettingsConfig
    const decision = yield* Effect.flatMap(RateLimiter, (limiter) =>
      limiter.take(bucket(`signups:ip:${rateNetworkOf(client.ip)}`, settings.signupsPerHourPerIp, HOUR)))
    if (!decision.allowed) return yield* rateLimited(decision, `at most ${settings.signupsPerHourPerIp} signups an hour from one network`)
    if (!request.acceptTerms) {
      return yield* new InvalidRequest({ status: 422, field: "accept_terms", detail: "accept_terms must be true: signing up means accepting the terms of service" })
    }
    const passwordHash = yield* Effect.flatMap(PasswordHasher, (hasher) => hasher.hash(request.password))
    const { account, user } = yield* createAccountWithUser({ email: request.email, name: "", passwordHash, emailVerified: false })
    yield* endSession(presentedSession)
    const started = yield* startSession(user.id)
    yield* sendVerification(user)
    return { started, user, account }
  })

/** `POST /v1/auth/login`: a wrong address and a wrong password read the same (and take as long). */
export const login = (
  request: { readonly email: string; readonly password: string },
  client: ClientInfo,
  presentedSession: string | undefined
) =>
  Effect.gen(function*() {
    yield* checkLoginBudget(request.email, client)
    const user = yield* Effect.flatMap(UserRepo, (users) => users.findByEmail(request.email))
    const matches = yield* Effect.flatMap(PasswordHasher, (hasher) =>
      hasher.verify(Option.isSome(user) ? user.value.passwordHash : null, request.password))
    if (!matches || Option.isNone(user)) {
      yield* countLoginFailure(request.email, client)
      return yield* new Unauthorized({ detail: WRONG_CREDENTIALS })
    }
    const account = yield* accountOf(user.value)
    yield* endSession(presentedSession)
    const started = yield* startSession(user.value.id)
    return { started, user: user.value, account }
  })

/** `POST /v1/auth/logout`: the session ends on the server. */
export const logout = (presentedSession: string) => endSession(presentedSession)

/**
 * `POST /v1/auth/password/change`: needs the current password (counted as a failed login
 * when wrong); ends every session of the user, this one included, and starts a new one.
 */
export const changePassword = (
  signedIn: SignedIn,
  request: { readonly password: string; readonly newPassword: string },
  client: ClientInfo
) =>
  Effect.gen(function*() {
    const user = signedIn.user
    yield* checkLoginBudget(user.email, client)
    const hasher = yield* PasswordHasher
    if (!(yield* hasher.verify(user.passwordHash, request.password))) {
      yield* countLoginFailure(user.email, client)
      return yield* new InvalidRequest({
        status: 422, field: "password",
        detail: "the current password is wrong (no password was ever set? use POST /v1/auth/password/forgot)"
      })
    }
    const passwordHash = yield* hasher.hash(request.newPassword)
    const changed = new UserRecord({ ...user, passwordHash })
    const started = yield* transactionally(Effect.gen(function*() {
      yield* Effect.flatMap(UserRepo, (users) => users.update(changed))
      yield* endUserSessions(user.id)
      return yield* startSession(user.id)
    }))
    yield* sendQuietly(passwordChangedMail(user.email))
    return { started, user: changed, account: signedIn.account }
  })
