/**
 * Repositories of self-serve accounts: users, sessions, e-mail tokens, OAuth identities and
 * states. As in repositories.ts, operations fail only with defects; the rules (lifetimes,
 * single use, idle and absolute limits) live in core/rules and core/services. Where a rule
 * needs atomicity (a token used once, a state consumed once, an address taken once) the
 * operation is atomic and says so.
 */
import { Context, Effect, Option } from "effect"
import type {
  EmailTokenPurpose, EmailTokenRecord, OAuthIdentityRecord, OAuthProviderName, OAuthStateRecord, SessionRecord,
  UserRecord
} from "../domain/users.js"

export class UserRepo extends Context.Tag("hush/UserRepo")<UserRepo, {
  /** Atomic: `email_taken` when another user has the address (case-insensitively), nothing written. */
  readonly insert: (user: UserRecord) => Effect.Effect<"inserted" | "email_taken">
  readonly get: (id: string) => Effect.Effect<Option.Option<UserRecord>>
  /** Case-insensitive, ignoring surrounding spaces. */
  readonly findByEmail: (email: string) => Effect.Effect<Option.Option<UserRecord>>
  readonly findByAccount: (accountId: string) => Effect.Effect<Option.Option<UserRecord>>
  readonly update: (user: UserRecord) => Effect.Effect<void>
}>() {}

export class SessionRepo extends Context.Tag("hush/SessionRepo")<SessionRepo, {
  readonly insert: (session: SessionRecord) => Effect.Effect<void>
  readonly get: (idHash: string) => Effect.Effect<Option.Option<SessionRecord>>
  readonly touch: (idHash: string, lastSeenAt: number) => Effect.Effect<void>
  readonly delete: (idHash: string) => Effect.Effect<void>
  /** Every session of the user but `except` (when given); how many ended. */
  readonly deleteByUser: (userId: string, except?: string) => Effect.Effect<number>
  /** Sessions idle since before `idleBefore` or created before `createdBefore`; how many. */
  readonly deleteExpired: (cutoffs: { readonly idleBefore: number; readonly createdBefore: number }) => Effect.Effect<number>
}>() {}

export class EmailTokenRepo extends Context.Tag("hush/EmailTokenRepo")<EmailTokenRepo, {
  readonly insert: (token: EmailTokenRecord) => Effect.Effect<void>
  /**
   * Atomic: marks the token used at `now` if it was unused, and returns it as it was before
   * (so `usedAt` tells whether this call was the one that used it). None when unknown.
   */
  readonly use: (hash: string, purpose: EmailTokenPurpose, now: number) => Effect.Effect<Option.Option<EmailTokenRecord>>
  /** Marks every unused token of the user and purpose used at `now`. */
  readonly useAll: (userId: string, purpose: EmailTokenPurpose, now: number) => Effect.Effect<void>
  /** Tokens of the user and purpose created at or after `since`, and the earliest of them. */
  readonly createdSince: (userId: string, purpose: EmailTokenPurpose, since: number) =>
    Effect.Effect<{ readonly count: number; readonly earliest: number | null }>
  /** Tokens that expired before `before`; how many. */
  readonly deleteExpired: (before: number) => Effect.Effect<number>
}>() {}

export class OAuthRepo extends Context.Tag("hush/OAuthRepo")<OAuthRepo, {
  readonly insertState: (state: OAuthStateRecord) => Effect.Effect<void>
  /** Atomic: removes the state and returns it; None when unknown or already taken. */
  readonly takeState: (hash: string) => Effect.Effect<Option.Option<OAuthStateRecord>>
  readonly deleteExpiredStates: (before: number) => Effect.Effect<number>
  readonly findIdentity: (provider: OAuthProviderName, subject: string) => Effect.Effect<Option.Option<OAuthIdentityRecord>>
  /** Atomic: `taken` when the provider subject, or this provider for this user, is linked already. */
  readonly insertIdentity: (identity: OAuthIdentityRecord) => Effect.Effect<"inserted" | "taken">
  /** Unlinks every identity of the user; how many there were. */
  readonly deleteIdentitiesOf: (userId: string) => Effect.Effect<number>
  /** Oldest first. */
  readonly identitiesOf: (userId: string) => Effect.Effect<ReadonlyArray<OAuthIdentityRecord>>
}>() {}
