/**
 * Dashboard sessions (decisions.md): a session ends 7 days after its last use (idle) or 30
 * days after it began (absolute), whichever comes first; logout, a password change and a
 * reset end sessions at once (core/services/sessions.ts deletes them).
 */
import type { AccountSettings } from "../domain/account-settings.js"
import type { SessionRecord } from "../domain/users.js"
import { MINUTE } from "../time.js"

/** `lastSeenAt` is written at most this often, so reads do not write on every request. */
export const SESSION_TOUCH_MS = MINUTE

type Lifetimes = Pick<AccountSettings, "sessionIdleMs" | "sessionAbsoluteMs">

export const sessionEndsAt = (session: SessionRecord, settings: Lifetimes): number =>
  Math.min(session.createdAt + settings.sessionAbsoluteMs, session.lastSeenAt + settings.sessionIdleMs)

export const isSessionLive = (session: SessionRecord, settings: Lifetimes, now: number): boolean =>
  now < sessionEndsAt(session, settings)

export const needsTouch = (session: SessionRecord, now: number): boolean => now - session.lastSeenAt >= SESSION_TOUCH_MS
