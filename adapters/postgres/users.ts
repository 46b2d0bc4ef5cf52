/**
 * Users, sessions, e-mail tokens and OAuth identities and states over PostgreSQL (and PGlite):
 * rows decoded with SqlSchema and the row schemas below, statements built from `sql`
 * fragments. The atomic operations of core/ports/users.ts are single statements here.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import {
  EmailTokenPurpose, EmailTokenRecord, OAuthIdentityRecord, OAuthProviderName, OAuthStateRecord, SessionRecord, UserRecord
} from "../../core/domain/users.js"
import { EmailTokenRepo, OAuthRepo, SessionRepo, UserRepo } from "../../core/ports/users.js"
import { PgInt, PgIntOrNull, run } from "./columns.js"

/** A row schema whose decoded side is the record and whose encoded side is the row to write. */
const rowOf = <R extends Schema.Struct.Fields, A>(
  row: R,
  record: Schema.Schema<A>,
  mapping: { readonly decode: (row: Schema.Struct.Type<R>) => A; readonly encode: (record: A) => Schema.Struct.Type<R> }
) =>
  Schema.transform(Schema.Struct(row), Schema.typeSchema(record), {
    strict: false,
    decode: (r) => mapping.decode(r as Schema.Struct.Type<R>),
    encode: (a) => mapping.encode(a as A)
  })

const UserRow = rowOf({
  id: Schema.String,
  account_id: Schema.String,
  email: Schema.String,
  password_hash: Schema.NullOr(Schema.String),
  email_verified_at: PgIntOrNull,
  created_at: PgInt
}, UserRecord, {
  decode: (r) => new UserRecord({
    id: r.id, accountId: r.account_id, email: r.email, passwordHash: r.password_hash,
    emailVerifiedAt: r.email_verified_at, createdAt: r.created_at
  }),
  encode: (u) => ({
    id: u.id, account_id: u.accountId, email: u.email, password_hash: u.passwordHash,
    email_verified_at: u.emailVerifiedAt, created_at: u.createdAt
  })
})

const SessionRow = rowOf({
  id_hash: Schema.String, user_id: Schema.String, created_at: PgInt, last_seen_at: PgInt
}, SessionRecord, {
  decode: (r) => new SessionRecord({ idHash: r.id_hash, userId: r.user_id, createdAt: r.created_at, lastSeenAt: r.last_seen_at }),
  encode: (s) => ({ id_hash: s.idHash, user_id: s.userId, created_at: s.createdAt, last_seen_at: s.lastSeenAt })
})

const EmailTokenRow = rowOf({
  hash: Schema.String,
  user_id: Schema.String,
  purpose: EmailTokenPurpose,
  email: Schema.String,
  created_at: PgInt,
  expires_at: PgInt,
  used_at: PgIntOrNull
}, EmailTokenRecord, {
  decode: (r) => new EmailTokenRecord({
    hash: r.hash, userId: r.user_id, purpose: r.purpose, email: r.email, createdAt: r.created_at,
    expiresAt: r.expires_at, usedAt: r.used_at
  }),
  encode: (t) => ({
    hash: t.hash, user_id: t.userId, purpose: t.purpose, email: t.email, created_at: t.createdAt,
    expires_at: t.expiresAt, used_at: t.usedAt
  })
})

const IdentityRow = rowOf({
  provider: OAuthProviderName, subject: Schema.String, user_id: Schema.String, email: Schema.NullOr(Schema.String), created_at: PgInt
}, OAuthIdentityRecord, {
  decode: (r) => new OAuthIdentityRecord({ provider: r.provider, subject: r.subject, userId: r.user_id, email: r.email, createdAt: r.created_at }),
  encode: (i) => ({ provider: i.provider, subject: i.subject, user_id: i.userId, email: i.email, created_at: i.createdAt })
})

const StateRow = rowOf({
  hash: Schema.String,
  provider: OAuthProviderName,
  code_verifier: Schema.String,
  accept_terms: Schema.Boolean,
  connect_user_id: Schema.NullOr(Schema.String),
  created_at: PgInt,
  expires_at: PgInt
}, OAuthStateRecord, {
  decode: (r) => new OAuthStateRecord({
    hash: r.hash, provider: r.provider, codeVerifier: r.code_verifier, acceptTerms: r.accept_terms,
    connectUserId: r.connect_user_id, createdAt: r.created_at, expiresAt: r.expires_at
  }),
  encode: (s) => ({
    hash: s.hash, provider: s.provider, code_verifier: s.codeVerifier, accept_terms: s.acceptTerms,
    connect_user_id: s.connectUserId, created_at: s.createdAt, expires_at: s.expiresAt
  })
})

const Count = Schema.Struct({ n: PgInt })
const Inserted = Schema.Struct({ inserted: Schema.Literal(1) })
const Recent = Schema.Struct({ n: PgInt, earliest: PgIntOrNull })

const encodeRow = <A, I>(schema: Schema.Schema<A, I>) => (record: A) => Schema.encodeSync(schema)(record) as Record<string, unknown>

const USER_COLUMNS = "id, account_id, email, password_hash, email_verified_at, created_at"

export const PostgresUserRepo = Layer.effect(UserRepo, Effect.map(SqlClient.SqlClient, (sql) => {
  const toRow = encodeRow(UserRow)
  const findOne = (execute: (value: string) => Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    SqlSchema.findOne({ Request: Schema.String, Result: UserRow, execute })
  const byId = findOne((id) => sql`SELECT ${sql.literal(USER_COLUMNS)} FROM users WHERE id = ${id}`)
  const byEmail = findOne((email) => sql`SELECT ${sql.literal(USER_COLUMNS)} FROM users WHERE lower(email) = lower(btrim(${email}))`)
  const byAccount = findOne((accountId) => sql`SELECT ${sql.literal(USER_COLUMNS)} FROM users WHERE account_id = ${accountId}`)
  const insert = SqlSchema.findAll({
    Request: UserRow,
    Result: Inserted,
    // any unique violation (the address, case-insensitively; or the account) writes nothing
    execute: (row) => sql`INSERT INTO users ${sql.insert(row)} ON CONFLICT DO NOTHING RETURNING 1 AS inserted`
  })
  return {
    insert: (user) => Effect.map(insert(user), (rows) => (rows.length === 1 ? "inserted" as const : "email_taken" as const)).pipe(run("UserRepo.insert")),
    get: (id) => byId(id).pipe(run("UserRepo.get")),
    findByEmail: (email) => byEmail(email).pipe(run("UserRepo.findByEmail")),
    findByAccount: (accountId) => byAccount(accountId).pipe(run("UserRepo.findByAccount")),
    update: (user) => {
      const row = toRow(user)
      return sql`UPDATE users SET ${sql.update(row, ["id"])} WHERE id = ${user.id}`.pipe(Effect.asVoid, run("UserRepo.update"))
    }
  }
}))

export const PostgresSessionRepo = Layer.effect(SessionRepo, Effect.map(SqlClient.SqlClient, (sql) => {
  const toRow = encodeRow(SessionRow)
  const get = SqlSchema.findOne({
    Request: Schema.String,
    Result: SessionRow,
    execute: (idHash) => sql`SELECT id_hash, user_id, created_at, last_seen_at FROM sessions WHERE id_hash = ${idHash}`
  })
  const count = (operation: string, statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    Effect.flatMap(statement, Schema.decodeUnknown(Schema.Array(Count))).pipe(Effect.map((rows) => rows[0]?.n ?? 0), run(operation))
  return {
    insert: (session) => sql`INSERT INTO sessions ${sql.insert(toRow(session))}`.pipe(Effect.asVoid, run("SessionRepo.insert")),
    get: (idHash) => get(idHash).pipe(run("SessionRepo.get")),
    // never moves backwards: a slower request does not undo a later touch
    touch: (idHash, lastSeenAt) =>
      sql`UPDATE sessions SET last_seen_at = ${lastSeenAt} WHERE id_hash = ${idHash} AND last_seen_at < ${lastSeenAt}`
        .pipe(Effect.asVoid, run("SessionRepo.touch")),
    delete: (idHash) => sql`DELETE FROM sessions WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, run("SessionRepo.delete")),
    deleteByUser: (userId, except) =>
      count("SessionRepo.deleteByUser", sql`WITH gone AS (
          DELETE FROM sessions WHERE user_id = ${userId} AND id_hash <> ${except ?? ""} RETURNING 1
        ) SELECT count(*) AS n FROM gone`),
    deleteExpired: ({ idleBefore, createdBefore }) =>
      count("SessionRepo.deleteExpired", sql`WITH gone AS (
          DELETE FROM sessions WHERE last_seen_at < ${idleBefore} OR created_at < ${createdBefore} RETURNING 1
        ) SELECT count(*) AS n FROM gone`)
  }
}))

const TOKEN_COLUMNS = "hash, user_id, purpose, email, created_at, expires_at, used_at"

export const PostgresEmailTokenRepo = Layer.effect(EmailTokenRepo, Effect.map(SqlClient.SqlClient, (sql) => {
  const toRow = encodeRow(EmailTokenRow)
  const use = SqlSchema.findOne({
    Request: Schema.Struct({ hash: Schema.String, purpose: EmailTokenPurpose, now: Schema.Number }),
    Result: EmailTokenRow,
    // one statement: the row as it was (the CTE's snapshot), and marked used if it was not
    execute: ({ hash, purpose, now }) => sql`WITH before AS (
        SELECT ${sql.literal(TOKEN_COLUMNS)} FROM email_tokens WHERE hash = ${hash} AND purpose = ${purpose} FOR UPDATE
      ), marked AS (
        UPDATE email_tokens SET used_at = ${now} WHERE hash IN (SELECT hash FROM before) AND used_at IS NULL RETURNING hash
      )
      SELECT b.hash, b.user_id, b.purpose, b.email, b.created_at, b.expires_at,
        CASE WHEN EXISTS (SELECT 1 FROM marked) THEN NULL ELSE b.used_at END AS used_at
      FROM before b`
  })
  const recent = SqlSchema.single({
    Request: Schema.Struct({ userId: Schema.String, purpose: EmailTokenPurpose, since: Schema.Number }),
    Result: Recent,
    execute: ({ userId, purpose, since }) => sql`SELECT count(*) AS n, min(created_at) AS earliest FROM email_tokens
      WHERE user_id = ${userId} AND purpose = ${purpose} AND created_at >= ${since}`
  })
  return {
    insert: (token) => sql`INSERT INTO email_tokens ${sql.insert(toRow(token))}`.pipe(Effect.asVoid, run("EmailTokenRepo.insert")),
    use: (hash, purpose, now) => use({ hash, purpose, now }).pipe(run("EmailTokenRepo.use")),
    useAll: (userId, purpose, now) =>
      sql`UPDATE email_tokens SET used_at = ${now} WHERE user_id = ${userId} AND purpose = ${purpose} AND used_at IS NULL`
        .pipe(Effect.asVoid, run("EmailTokenRepo.useAll")),
    createdSince: (userId, purpose, since) =>
      Effect.map(recent({ userId, purpose, since }), (r) => ({ count: r.n, earliest: r.earliest })).pipe(run("EmailTokenRepo.createdSince")),
    deleteExpired: (before) =>
      sql`WITH gone AS (DELETE FROM email_tokens WHERE expires_at < ${before} RETURNING 1) SELECT count(*) AS n FROM gone`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Count))),
        Effect.map((rows) => rows[0]?.n ?? 0),
        run("EmailTokenRepo.deleteExpired")
      )
  }
}))

const STATE_COLUMNS = "hash, provider, code_verifier, accept_terms, connect_user_id, created_at, expires_at"
const IDENTITY_COLUMNS = "provider, subject, user_id, email, created_at"

export const PostgresOAuthRepo = Layer.effect(OAuthRepo, Effect.map(SqlClient.SqlClient, (sql) => {
  const stateRow = encodeRow(StateRow)
  const identityRow = encodeRow(IdentityRow)
  const take = SqlSchema.findOne({
    Request: Schema.String,
    Result: StateRow,
    execute: (hash) => sql`DELETE FROM oauth_states WHERE hash = ${hash} RETURNING ${sql.literal(STATE_COLUMNS)}`
  })
  const find = SqlSchema.findOne({
    Request: Schema.Struct({ provider: OAuthProviderName, subject: Schema.String }),
    Result: IdentityRow,
    execute: ({ provider, subject }) =>
      sql`SELECT ${sql.literal(IDENTITY_COLUMNS)} FROM oauth_identities WHERE provider = ${provider} AND subject = ${subject}`
  })
  const insertIdentity = SqlSchema.findAll({
    Request: IdentityRow,
    Result: Inserted,
    execute: (row) => sql`INSERT INTO oauth_identities ${sql.insert(row)} ON CONFLICT DO NOTHING RETURNING 1 AS inserted`
  })
  const identitiesOf = SqlSchema.findAll({
    Request: Schema.String,
    Result: IdentityRow,
    execute: (userId) =>
      sql`SELECT ${sql.literal(IDENTITY_COLUMNS)} FROM oauth_identities WHERE user_id = ${userId} ORDER BY created_at, provider`
  })
  return {
    insertState: (state) => sql`INSERT INTO oauth_states ${sql.insert(stateRow(state))}`.pipe(Effect.asVoid, run("OAuthRepo.insertState")),
    takeState: (hash) => take(hash).pipe(run("OAuthRepo.takeState")),
    deleteExpiredStates: (before) =>
      sql`WITH gone AS (DELETE FROM oauth_states WHERE expires_at < ${before} RETURNING 1) SELECT count(*) AS n FROM gone`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Count))),
        Effect.map((rows) => rows[0]?.n ?? 0),
        run("OAuthRepo.deleteExpiredStates")
      ),
    findIdentity: (provider, subject) => find({ provider, subject }).pipe(run("OAuthRepo.findIdentity")),
    insertIdentity: (identity) =>
      Effect.map(insertIdentity(identity), (rows) => (rows.length === 1 ? "inserted" as const : "taken" as const))
        .pipe(run("OAuthRepo.insertIdentity")),
    identitiesOf: (userId) => identitiesOf(userId).pipe(run("OAuthRepo.identitiesOf"))
  }
}))

export const PostgresUserRepositories = Layer.mergeAll(PostgresUserRepo, PostgresSessionRepo, PostgresEmailTokenRepo, PostgresOAuthRepo)
