/**
 * Dashboard sessions: started on signup, login, OAuth sign-in and password change (always a
 * new id), read from the `__Host-hush_session` cookie on every dashboard request, ended by
 * logout, by a password change or reset (every session of the user), or by their idle and
 * absolute limits (core/rules/sessions.ts).
 */
import { Clock, Effect, Option } from "effect"
import type { SignedIn } from "../domain/caller.js"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import { SessionRecord } from "../domain/users.js"
import { Unauthorized } from "../errors.js"
import { Digests } from "../ports/digests.js"
import { IdGenerator } from "../ports/ids.js"
import { AccountRepo } from "../ports/repositories.js"
import { SessionRepo, UserRepo } from "../ports/users.js"
import { csrfTokenOf, isWellFormedSecret, sha256Hex } from "../rules/secrets.js"
import { isSessionLive, needsTouch, sessionEndsAt } from "../rules/sessions.js"

/** A session just started: the cookie's secret exists only here. */
export interface StartedSession {
  readonly secret: string
  readonly csrfToken: string
  /** When the absolute limit ends it (the cookie's lifetime). */
  readonly expiresAt: number
  readonly session: SessionRecord
}

export const startSession = (userId: string) =>
  Effect.gen(function*() {
    const secret = (yield* IdGenerator).secret()
    const now = yield* Clock.currentTimeMillis
    const settings = yield* AccountSettingsConfig
    const digests = yield* Digests
    const session = new SessionRecord({ idHash: sha256Hex(secret, digests), userId, createdAt: now, lastSeenAt: now })
    yield* Effect.flatMap(SessionRepo, (sessions) => sessions.insert(session))
    return { secret, csrfToken: csrfTokenOf(secret, digests), expiresAt: now + settings.sessionAbsoluteMs, session } satisfies StartedSession
  })

/** Ends the session a cookie names, if it names one (logout; the old session at a new login). */
export const endSession = (secret: string | undefined) =>
  secret === undefined || !isWellFormedSecret(secret)
    ? Effect.void
    : Effect.flatMap(Effect.zip(SessionRepo, Digests), ([sessions, digests]) => sessions.delete(sha256Hex(secret, digests)))

/** Every session of the user but `except` (a session hash). */
export const endUserSessions = (userId: string, except?: string) =>
  Effect.flatMap(SessionRepo, (sessions) => sessions.deleteByUser(userId, except))

const signInFirst = (detail = "sign in first: this needs a dashboard session") => new Unauthorized({ detail })

/**
 * The cookie's secret → who is signed in. Missing, malformed, unknown or ended → `401
 * unauthorized` (an ended session is deleted on the way). Use refreshes `lastSeenAt`.
 */
export const authenticateSession = (secret: string | undefined) =>
  Effect.gen(function*() {
    if (secret === undefined || !isWellFormedSecret(secret)) return yield* signInFirst()
    const sessions = yield* SessionRepo
    const settings = yield* AccountSettingsConfig
    const digests = yield* Digests
    const found = yield* sessions.get(sha256Hex(secret, digests))
    if (Option.isNone(found)) return yield* signInFirst("the session has ended or never existed; sign in again")
    const session = found.value
    const now = yield* Clock.currentTimeMillis
    if (!isSessionLive(session, settings, now)) {
      yield* sessions.delete(session.idHash)
      return yield* signInFirst("the session has ended; sign in again")
    }
    const user = yield* Effect.flatMap(UserRepo, (users) => users.get(session.userId))
    const account = Option.isNone(user)
      ? Option.none()
      : yield* Effect.flatMap(AccountRepo, (accounts) => accounts.get(user.value.accountId))
    if (Option.isNone(user) || Option.isNone(account)) {
      yield* sessions.delete(session.idHash)
      return yield* signInFirst("the session's user no longer exists")
    }
    const current = needsTouch(session, now) ? new SessionRecord({ ...session, lastSeenAt: now }) : session
    if (current !== session) yield* sessions.touch(session.idHash, now)
    return { session: current, user: user.value, account: account.value, csrfToken: csrfTokenOf(secret, digests) } satisfies SignedIn
  })

/** When the session ends if unused from now on (for a cookie's Max-Age). */
export const sessionExpiry = (signedIn: SignedIn) =>
  Effect.map(AccountSettingsConfig, (settings) => sessionEndsAt(signedIn.session, settings))
