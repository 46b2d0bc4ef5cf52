/**
 * Self-serve accounts: users (one per account, e-mail unique case-insensitively), sessions,
 * e-mail tokens, OAuth identities and states; indexes for the dashboard's unexpired lots.
 * Secrets are kept as their SHA-256 only (64 lowercase hex characters, checked here).
 *
 * The address and its verification move from `accounts` to `users`: every existing account
 * gets a user without a password (the owner sets one through "forgot password"). Where
 * several accounts shared an address (the operator CLI allowed it), the oldest keeps it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE users (
  id                text COLLATE "C" PRIMARY KEY,
  account_id        text COLLATE "C" NOT NULL,
  email             text NOT NULL,
  password_hash     text,
  email_verified_at bigint,
  created_at        bigint NOT NULL,
  CONSTRAINT users_email_shape CHECK (
    email = btrim(email) AND char_length(email) BETWEEN 3 AND 254 AND email ~ '^[^[:space:]@]+@[^[:space:]@]+$'),
  CONSTRAINT users_password_hash_present CHECK (password_hash IS NULL OR char_length(password_hash) > 0)
);
CREATE UNIQUE INDEX users_email ON users (lower(email));
CREATE UNIQUE INDEX users_account ON users (account_id);

INSERT INTO users (id, account_id, email, password_hash, email_verified_at, created_at)
  SELECT DISTINCT ON (lower(btrim(email)))
    'user_' || substr(id, 6), id, btrim(email), NULL, CASE WHEN email_verified THEN created_at END, created_at
  FROM accounts
  WHERE char_length(btrim(email)) BETWEEN 3 AND 254 AND btrim(email) ~ '^[^[:space:]@]+@[^[:space:]@]+$'
  ORDER BY lower(btrim(email)), created_at, id;

ALTER TABLE accounts DROP COLUMN email, DROP COLUMN email_verified;

CREATE TABLE sessions (
  id_hash      text COLLATE "C" PRIMARY KEY CHECK (id_hash ~ '^[0-9a-f]{64}$'),
  user_id      text COLLATE "C" NOT NULL,
  created_at   bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  CONSTRAINT sessions_seen_after_start CHECK (last_seen_at >= created_at)
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);
CREATE INDEX sessions_created ON sessions (created_at);

CREATE TABLE email_tokens (
  hash       text COLLATE "C" PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
  user_id    text COLLATE "C" NOT NULL,
  purpose    text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  email      text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  used_at    bigint,
  CONSTRAINT email_tokens_lifetime CHECK (expires_at > created_at),
  CONSTRAINT email_tokens_used_after_creation CHECK (used_at IS NULL OR used_at >= created_at)
);
CREATE INDEX email_tokens_user ON email_tokens (user_id, purpose, created_at);
CREATE INDEX email_tokens_expires ON email_tokens (expires_at);

CREATE TABLE oauth_identities (
  provider   text NOT NULL CHECK (provider IN ('github', 'google', 'oidc')),
  subject    text COLLATE "C" NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 255),
  user_id    text COLLATE "C" NOT NULL,
  email      text,
  created_at bigint NOT NULL,
  PRIMARY KEY (provider, subject)
);
-- one identity per provider and user
CREATE UNIQUE INDEX oauth_identities_user ON oauth_identities (user_id, provider);

CREATE TABLE oauth_states (
  hash            text COLLATE "C" PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
  provider        text NOT NULL CHECK (provider IN ('github', 'google', 'oidc')),
  code_verifier   text NOT NULL CHECK (char_length(code_verifier) BETWEEN 43 AND 128),
  accept_terms    boolean NOT NULL,
  connect_user_id text COLLATE "C",
  created_at      bigint NOT NULL,
  expires_at      bigint NOT NULL,
  CONSTRAINT oauth_states_lifetime CHECK (expires_at > created_at)
);
CREATE INDEX oauth_states_expires ON oauth_states (expires_at);

-- the dashboard's credit: unexpired lots, earliest expiry first
CREATE INDEX credit_lots_unexpired ON credit_lots (account_id, expires_at, id) WHERE NOT expired;
`))
