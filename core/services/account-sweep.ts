/**
 * Housekeeping of self-serve accounts, run with the lifecycle sweeper: sessions past their
 * idle or absolute limit, e-mail links past their lifetime and abandoned OAuth flows are
 * deleted. None of them would work anyway (the rules refuse them); this only keeps the
 * tables from growing.
 */
import { Clock, Effect } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import { EmailTokenRepo, OAuthRepo, SessionRepo } from "../ports/users.js"

export const sweepAccounts = Effect.gen(function*() {
  const settings = yield* AccountSettingsConfig
  const now = yield* Clock.currentTimeMillis
  const sessions = yield* Effect.flatMap(SessionRepo, (repo) =>
    repo.deleteExpired({ idleBefore: now - settings.sessionIdleMs, createdBefore: now - settings.sessionAbsoluteMs }))
  const links = yield* Effect.flatMap(EmailTokenRepo, (repo) => repo.deleteExpired(now))
  const oauthStates = yield* Effect.flatMap(OAuthRepo, (repo) => repo.deleteExpiredStates(now))
  return { sessions, links, oauthStates }
})
