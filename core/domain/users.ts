/**
 * The records of self-serve accounts: the person who signs in (user), their sessions, the
 * single-use e-mail tokens (verification, password reset), and OAuth identities and the states
 * of OAuth flows in progress. Secrets (session ids, tokens, states) are kept only as the
 * lowercase hex SHA-256 of the secret; the secret itself exists only in a cookie or a link.
 */
import { Schema } from "effect"

const Millis = Schema.Int
/** Lowercase hex SHA-256 of a 256-bit secret. */
const SecretHash = Schema.String

export class UserRecord extends Schema.Class<UserRecord>("UserRecord")({
  id: Schema.String,
  /** One user owns one account. */
  accountId: Schema.String,
  /** As given, trimmed; compared case-insensitively (core/rules/users.ts). */
  email: Schema.String,
  /** Null for a user who never set a password (OAuth sign-in, or made by the operator). */
  passwordHash: Schema.NullOr(Schema.String),
  emailVerifiedAt: Schema.NullOr(Millis),
  createdAt: Millis
}) {}

export class SessionRecord extends Schema.Class<SessionRecord>("SessionRecord")({
  idHash: SecretHash,
  userId: Schema.String,
  createdAt: Millis,
  /** Refreshed on use, at most once a minute (core/rules/sessions.ts). */
  lastSeenAt: Millis
}) {}

export const EmailTokenPurpose = Schema.Literal("verify_email", "reset_password")
export type EmailTokenPurpose = typeof EmailTokenPurpose.Type

export class EmailTokenRecord extends Schema.Class<EmailTokenRecord>("EmailTokenRecord")({
  hash: SecretHash,
  userId: Schema.String,
  purpose: EmailTokenPurpose,
  /** The address the link was sent to: a verification proves this address only. */
  email: Schema.String,
  createdAt: Millis,
  expiresAt: Millis,
  usedAt: Schema.NullOr(Millis)
}) {}

export const OAuthProviderName = Schema.Literal("github", "google", "oidc")
export type OAuthProviderName = typeof OAuthProviderName.Type

/** A provider account linked to a user, by provider and subject (never by e-mail). */
export class OAuthIdentityRecord extends Schema.Class<OAuthIdentityRecord>("OAuthIdentityRecord")({
  provider: OAuthProviderName,
  subject: Schema.String,
  userId: Schema.String,
  /** The address the provider reported at linking, for support; never used to link. */
  email: Schema.NullOr(Schema.String),
  createdAt: Millis
}) {}

/** An OAuth flow between start and callback: state (hashed) and the PKCE verifier. */
export class OAuthStateRecord extends Schema.Class<OAuthStateRecord>("OAuthStateRecord")({
  hash: SecretHash,
  provider: OAuthProviderName,
  codeVerifier: Schema.String,
  acceptTerms: Schema.Boolean,
  /** Set when a signed-in user links this provider (`connect: true`). */
  connectUserId: Schema.NullOr(Schema.String),
  createdAt: Millis,
  expiresAt: Millis
}) {}
