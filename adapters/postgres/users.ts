/**
 * Users, sessions, e-mail tokens and OAuth identities and states over PostgreSQL, each table
 * described once (table.ts). The atomic operations of core/ports/users.ts are single statements.
 */
import { Effect, Layer } from "effect"
import { EmailTokenRecord, OAuthIdentityRecord, OAuthStateRecord, SessionRecord, UserRecord } from "../../core/domain/users.js"
import { EmailTokenRepo, OAuthRepo, SessionRepo, UserRepo } from "../../core/ports/users.js"
import { repositoryStatements } from "./statements.js"
import { bool, int, orNull, type Row, statement, table, text, toInt, toIntOrNull } from "./table.js"

const users = table("users", UserRecord, {
  id: text("id"),
  accountId: text("account_id"),
  email: text("email"),
  passwordHash: orNull(text("password_hash")),
  emailVerifiedAt: orNull(int("email_verified_at")),
  createdAt: int("created_at")
})

const sessions = table("sessions", SessionRecord, {
  idHash: text("id_hash"),
  userId: text("user_id"),
  createdAt: int("created_at"),
  lastSeenAt: int("last_seen_at")
}, { key: ["id_hash"] })

const emailTokens = table("email_tokens", EmailTokenRecord, {
  hash: text("hash"),
  userId: text("user_id"),
  purpose: text("purpose"),
  email: text("email"),
  createdAt: int("created_at"),
  expiresAt: int("expires_at"),
  usedAt: orNull(int("used_at"))
}, { key: ["hash"] })

const oauthIdentities = table("oauth_identities", OAuthIdentityRecord, {
  provider: text("provider"),
  subject: text("subject"),
  userId: text("user_id"),
  email: orNull(text("email")),
  createdAt: int("created_at")
}, { key: ["provider", "subject"] })

const oauthStates = table("oauth_states", OAuthStateRecord, {
  hash: text("hash"),
  provider: text("provider"),
  codeVerifier: text("code_verifier"),
  acceptTerms: bool("accept_terms"),
  connectUserId: orNull(text("connect_user_id")),
  createdAt: int("created_at"),
  expiresAt: int("expires_at")
}, { key: ["hash"] })

/** `count(*) AS n` of a statement's only row. */
const countOf = (rows: ReadonlyArray<Row>) => toInt(rows[0]?.n ?? 0, "count")

// any unique violation (the address, case-insensitively; or the account) writes nothing
const USER_INSERT = `${users.insert} ON CONFLICT DO NOTHING RETURNING 1`
const USER_BY_ID = statement(["id"], (p) => `SELECT ${users.columns} FROM users WHERE id = ${p.id}`)
const USER_BY_EMAIL = statement(["email"], (p) => `SELECT ${users.columns} FROM users WHERE lower(email) = lower(btrim(${p.email}))`)
const USER_BY_ACCOUNT = statement(["accountId"], (p) => `SELECT ${users.columns} FROM users WHERE account_id = ${p.accountId}`)

export const layerPostgresUserRepo = Layer.effect(UserRepo, Effect.map(repositoryStatements, (q) => ({
  insert: (user) =>
    Effect.map(q.rows("UserRepo.insert", USER_INSERT, users.params(user)), (rows) => (rows.length === 1 ? "inserted" as const : "email_taken" as const)),
  get: (id) => q.first("UserRepo.get", USER_BY_ID, [id], users.decode),
  findByEmail: (email) => q.first("UserRepo.findByEmail", USER_BY_EMAIL, [email], users.decode),
  findByAccount: (accountId) => q.first("UserRepo.findByAccount", USER_BY_ACCOUNT, [accountId], users.decode),
  update: (user) => Effect.asVoid(q.rows("UserRepo.update", users.update, users.params(user)))
})))

const SESSION_BY_ID = statement(["idHash"], (p) => `SELECT ${sessions.columns} FROM sessions WHERE id_hash = ${p.idHash}`)
/** Never moves backwards: a slower request does not undo a later touch. */
const SESSION_TOUCH = statement(["idHash", "lastSeenAt"], (p) =>
  `UPDATE sessions SET last_seen_at = ${p.lastSeenAt} WHERE id_hash = ${p.idHash} AND last_seen_at < ${p.lastSeenAt}`)
const SESSION_DELETE = statement(["idHash"], (p) => `DELETE FROM sessions WHERE id_hash = ${p.idHash}`)
const SESSIONS_OF_USER_DELETE = statement(["userId", "except"], (p) =>
  `WITH gone AS (DELETE FROM sessions WHERE user_id = ${p.userId} AND id_hash <> ${p.except} RETURNING 1) SELECT count(*) AS n FROM gone`)
const SESSIONS_EXPIRED_DELETE = statement(["idleBefore", "createdBefore"], (p) =>
  `WITH gone AS (
    DELETE FROM sessions WHERE last_seen_at < ${p.idleBefore} OR created_at < ${p.createdBefore} RETURNING 1
  ) SELECT count(*) AS n FROM gone`)

export const layerPostgresSessionRepo = Layer.effect(SessionRepo, Effect.map(repositoryStatements, (q) => ({
  insert: (session) => Effect.asVoid(q.rows("SessionRepo.insert", sessions.insert, sessions.params(session))),
  get: (idHash) => q.first("SessionRepo.get", SESSION_BY_ID, [idHash], sessions.decode),
  touch: (idHash, lastSeenAt) => Effect.asVoid(q.rows("SessionRepo.touch", SESSION_TOUCH, [idHash, lastSeenAt])),
  delete: (idHash) => Effect.asVoid(q.rows("SessionRepo.delete", SESSION_DELETE, [idHash])),
  deleteByUser: (userId, except) => Effect.map(q.rows("SessionRepo.deleteByUser", SESSIONS_OF_USER_DELETE, [userId, except ?? ""]), countOf),
  deleteExpired: ({ idleBefore, createdBefore }) =>
    Effect.map(q.rows("SessionRepo.deleteExpired", SESSIONS_EXPIRED_DELETE, [idleBefore, createdBefore]), countOf)
})))

/** One statement: the row as it was (the CTE's snapshot), and marked used if it was not. */
const EMAIL_TOKEN_USE = statement(["hash", "purpose", "now"], (p) =>
  `WITH before AS (
    SELECT ${emailTokens.columns} FROM email_tokens WHERE hash = ${p.hash} AND purpose = ${p.purpose} FOR UPDATE
  ), marked AS (
    UPDATE email_tokens SET used_at = ${p.now} WHERE hash IN (SELECT hash FROM before) AND used_at IS NULL RETURNING hash
  )
  SELECT ${
    emailTokens.columnNames.map((c) => (c === "used_at" ? "CASE WHEN EXISTS (SELECT 1 FROM marked) THEN NULL ELSE b.used_at END AS used_at" : `b.${c}`))
      .join(", ")
  }
  FROM before b`)
const EMAIL_TOKENS_USE_ALL = statement(["userId", "purpose", "now"], (p) =>
  `UPDATE email_tokens SET used_at = ${p.now} WHERE user_id = ${p.userId} AND purpose = ${p.purpose} AND used_at IS NULL`)
const EMAIL_TOKENS_RECENT = statement(["userId", "purpose", "since"], (p) =>
  `SELECT count(*) AS n, min(created_at) AS earliest FROM email_tokens
    WHERE user_id = ${p.userId} AND purpose = ${p.purpose} AND created_at >= ${p.since}`)
const EMAIL_TOKENS_EXPIRED_DELETE = statement(["before"], (p) =>
  `WITH gone AS (DELETE FROM email_tokens WHERE expires_at < ${p.before} RETURNING 1) SELECT count(*) AS n FROM gone`)

export const layerPostgresEmailTokenRepo = Layer.effect(EmailTokenRepo, Effect.map(repositoryStatements, (q) => ({
  insert: (token) => Effect.asVoid(q.rows("EmailTokenRepo.insert", emailTokens.insert, emailTokens.params(token))),
  use: (hash, purpose, now) => q.first("EmailTokenRepo.use", EMAIL_TOKEN_USE, [hash, purpose, now], emailTokens.decode),
  useAll: (userId, purpose, now) => Effect.asVoid(q.rows("EmailTokenRepo.useAll", EMAIL_TOKENS_USE_ALL, [userId, purpose, now])),
  createdSince: (userId, purpose, since) =>
    Effect.map(q.rows("EmailTokenRepo.createdSince", EMAIL_TOKENS_RECENT, [userId, purpose, since]), (rows) => ({
      count: countOf(rows),
      earliest: toIntOrNull(rows[0]?.earliest ?? null, "min(created_at)")
    })),
  deleteExpired: (before) => Effect.map(q.rows("EmailTokenRepo.deleteExpired", EMAIL_TOKENS_EXPIRED_DELETE, [before]), countOf)
})))

const OAUTH_STATE_TAKE = statement(["hash"], (p) => `DELETE FROM oauth_states WHERE hash = ${p.hash} RETURNING ${oauthStates.columns}`)
const OAUTH_STATES_EXPIRED_DELETE = statement(["before"], (p) =>
  `WITH gone AS (DELETE FROM oauth_states WHERE expires_at < ${p.before} RETURNING 1) SELECT count(*) AS n FROM gone`)
const OAUTH_IDENTITY = statement(["provider", "subject"], (p) =>
  `SELECT ${oauthIdentities.columns} FROM oauth_identities WHERE provider = ${p.provider} AND subject = ${p.subject}`)
const OAUTH_IDENTITY_INSERT = `${oauthIdentities.insert} ON CONFLICT DO NOTHING RETURNING 1`
const OAUTH_IDENTITIES_OF = statement(["userId"], (p) =>
  `SELECT ${oauthIdentities.columns} FROM oauth_identities WHERE user_id = ${p.userId} ORDER BY created_at, provider`)
const OAUTH_IDENTITIES_DELETE = statement(["userId"], (p) =>
  `WITH gone AS (DELETE FROM oauth_identities WHERE user_id = ${p.userId} RETURNING 1) SELECT count(*) AS n FROM gone`)

export const layerPostgresOAuthRepo = Layer.effect(OAuthRepo, Effect.map(repositoryStatements, (q) => ({
  insertState: (state) => Effect.asVoid(q.rows("OAuthRepo.insertState", oauthStates.insert, oauthStates.params(state))),
  takeState: (hash) => q.first("OAuthRepo.takeState", OAUTH_STATE_TAKE, [hash], oauthStates.decode),
  deleteExpiredStates: (before) => Effect.map(q.rows("OAuthRepo.deleteExpiredStates", OAUTH_STATES_EXPIRED_DELETE, [before]), countOf),
  findIdentity: (provider, subject) => q.first("OAuthRepo.findIdentity", OAUTH_IDENTITY, [provider, subject], oauthIdentities.decode),
  insertIdentity: (identity) =>
    Effect.map(
      q.rows("OAuthRepo.insertIdentity", OAUTH_IDENTITY_INSERT, oauthIdentities.params(identity)),
      (rows) => (rows.length === 1 ? "inserted" as const : "taken" as const)
    ),
  deleteIdentitiesOf: (userId) => Effect.map(q.rows("OAuthRepo.deleteIdentitiesOf", OAUTH_IDENTITIES_DELETE, [userId]), countOf),
  identitiesOf: (userId) => q.many("OAuthRepo.identitiesOf", OAUTH_IDENTITIES_OF, [userId], oauthIdentities.decode)
})))

export const layerPostgresUserRepositories = Layer.mergeAll(layerPostgresUserRepo, layerPostgresSessionRepo, layerPostgresEmailTokenRepo, layerPostgresOAuthRepo)
