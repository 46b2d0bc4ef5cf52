/**
 * The first schema. Forward-only: a later change is a new migration (0002_…), never an edit here.
 *
 * Conventions: ids are `text COLLATE "C"` (byte order, the same as JavaScript's string order, so
 * keyset pages tie-break like the memory adapter); instants are epoch milliseconds and money is
 * integer micros, both `bigint`; fractional seconds and progress are `double precision`.
 * No foreign keys: records reference each other by id only, as the ports allow (a ledger may
 * exist for an account id before its account row, in tests and during imports).
 *
 * Money is guarded by the database as well as by core/wallet:
 *  - `wallets` holds each account's last ledger seq, balance and reserved; it is maintained by a
 *    trigger on every ledger insert, which refuses an entry whose seq is not last+1 or whose
 *    *_after are not the previous values plus its deltas; its CHECK makes a negative available
 *    balance (balance − reserved) or a negative reservation impossible;
 *  - ledger entries are append-only (UNIQUE (account_id, seq); updates and deletes refused);
 *  - a hold's status moves only from `open`, once (trigger), and its draws add up to its amount;
 *  - a lot's remaining micros stay within 0…amount, and an expired lot never becomes unexpired.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const schema = `
CREATE TABLE accounts (
  id              text COLLATE "C" PRIMARY KEY,
  name            text NOT NULL,
  email           text NOT NULL,
  status          text NOT NULL CHECK (status IN ('active', 'suspended', 'frozen')),
  has_purchased   boolean NOT NULL,
  terms_version   text NOT NULL,
  training_opt_in boolean NOT NULL,
  email_verified  boolean NOT NULL,
  created_at      bigint NOT NULL
);
CREATE INDEX accounts_email ON accounts (email);

CREATE TABLE api_keys (
  id             text COLLATE "C" PRIMARY KEY,
  account_id     text COLLATE "C" NOT NULL,
  name           text NOT NULL,
  mode           text NOT NULL CHECK (mode IN ('live', 'test')),
  hash           text NOT NULL,
  prefix_display text NOT NULL,
  last_four      text NOT NULL,
  scopes         jsonb NOT NULL CHECK (jsonb_typeof(scopes) = 'array'),
  created_at     bigint NOT NULL,
  last_used_at   bigint,
  revoked_at     bigint
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at, id);

CREATE TABLE files (
  id                   text COLLATE "C" PRIMARY KEY,
  account_id           text COLLATE "C" NOT NULL,
  mode                 text NOT NULL CHECK (mode IN ('live', 'test')),
  filename             text NOT NULL,
  content_type         text NOT NULL,
  size_bytes           bigint NOT NULL CHECK (size_bytes >= 0),
  status               text NOT NULL CHECK (status IN ('uploading', 'validating', 'ready', 'rejected')),
  duration_seconds     double precision,
  error_code           text,
  error_message        text,
  storage_key          text NOT NULL,
  multipart_upload_id  text,
  multipart_part_size  bigint,
  multipart_part_count integer,
  created_at           bigint NOT NULL,
  upload_expires_at    bigint NOT NULL,
  completed_at         bigint,
  ready_at             bigint,
  rejected_at          bigint,
  CONSTRAINT files_error_whole CHECK ((error_code IS NULL) = (error_message IS NULL)),
  CONSTRAINT files_multipart_whole CHECK (
    (multipart_upload_id IS NULL) = (multipart_part_size IS NULL) AND
    (multipart_upload_id IS NULL) = (multipart_part_count IS NULL))
);
-- open uploads and retained bytes per account+mode (by status), validations per hour (by completed_at)
CREATE INDEX files_account_status ON files (account_id, mode, status, upload_expires_at);
CREATE INDEX files_account_completed ON files (account_id, mode, completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE jobs (
  id                  text COLLATE "C" PRIMARY KEY,
  account_id          text COLLATE "C" NOT NULL,
  mode                text NOT NULL CHECK (mode IN ('live', 'test')),
  key_id              text COLLATE "C",
  task                text NOT NULL,
  model               text NOT NULL,
  status              text NOT NULL CHECK (status IN ('queued', 'processing', 'succeeded', 'failed', 'canceled')),
  progress            double precision NOT NULL CHECK (progress >= 0 AND progress <= 1),
  file_id             text COLLATE "C" NOT NULL,
  input_filename      text NOT NULL,
  input_storage_key   text NOT NULL,
  duration_seconds    double precision NOT NULL CHECK (duration_seconds >= 0),
  billable_seconds    integer NOT NULL CHECK (billable_seconds >= 0),
  minimum_applied     boolean NOT NULL,
  unit_price_micros   bigint NOT NULL CHECK (unit_price_micros >= 0),
  pricing_version     integer NOT NULL,
  estimated_micros    bigint NOT NULL CHECK (estimated_micros >= 0),
  charged_micros      bigint CHECK (charged_micros >= 0),
  ledger_txn_id       text COLLATE "C",
  output_format       text,
  output_bitrate_kbps integer,
  output_size_bytes   bigint,
  output_storage_key  text,
  output_deleted_at   bigint,
  error_code          text CHECK (error_code IN ('internal_error', 'provider_error')),
  error_message       text,
  attempts            integer NOT NULL CHECK (attempts >= 0),
  lease_owner         text,
  lease_expires_at    bigint,
  created_at          bigint NOT NULL,
  started_at          bigint,
  finished_at         bigint,
  CONSTRAINT jobs_error_whole CHECK ((error_code IS NULL) = (error_message IS NULL)),
  CONSTRAINT jobs_output_whole CHECK (
    (output_storage_key IS NULL) = (output_format IS NULL) AND
    (output_storage_key IS NULL) = (output_bitrate_kbps IS NULL) AND
    (output_storage_key IS NULL) = (output_size_bytes IS NULL) AND
    (output_storage_key IS NOT NULL OR output_deleted_at IS NULL))
);
-- GET /v1/jobs (and the dashboard's list): newest first per account+mode, optionally by status or model
CREATE INDEX jobs_list ON jobs (account_id, mode, created_at DESC, id DESC);
CREATE INDEX jobs_list_status ON jobs (account_id, mode, status, created_at DESC, id DESC);
CREATE INDEX jobs_list_model ON jobs (account_id, mode, model, created_at DESC, id DESC);
-- the queue (oldest first, claimed with SKIP LOCKED), leases to recover, jobs using a file
CREATE INDEX jobs_queue ON jobs (mode, created_at, id) WHERE status = 'queued';
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE status = 'processing';
CREATE INDEX jobs_active_file ON jobs (file_id) WHERE status IN ('queued', 'processing');

CREATE TABLE wallets (
  account_id text COLLATE "C" PRIMARY KEY,
  last_seq   bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
  balance    bigint NOT NULL DEFAULT 0,
  reserved   bigint NOT NULL DEFAULT 0,
  CONSTRAINT wallets_reserved_not_negative CHECK (reserved >= 0),
  CONSTRAINT wallets_available_not_negative CHECK (balance - reserved >= 0)
);

CREATE TABLE credit_lots (
  id               text COLLATE "C" PRIMARY KEY,
  account_id       text COLLATE "C" NOT NULL,
  source           text NOT NULL CHECK (source IN ('purchase', 'grant')),
  amount_micros    bigint NOT NULL CHECK (amount_micros > 0),
  remaining_micros bigint NOT NULL,
  purchased_at     bigint NOT NULL,
  expires_at       bigint NOT NULL,
  expired          boolean NOT NULL,
  checkout_id      text COLLATE "C",
  CONSTRAINT credit_lots_remaining_within_amount CHECK (remaining_micros >= 0 AND remaining_micros <= amount_micros)
);
CREATE INDEX credit_lots_account ON credit_lots (account_id, purchased_at DESC, id DESC);
CREATE INDEX credit_lots_live ON credit_lots (account_id) WHERE remaining_micros > 0;
CREATE INDEX credit_lots_checkout ON credit_lots (checkout_id) WHERE checkout_id IS NOT NULL;

CREATE TABLE credit_holds (
  id            text COLLATE "C" PRIMARY KEY,
  account_id    text COLLATE "C" NOT NULL,
  job_id        text COLLATE "C" NOT NULL,
  amount_micros bigint NOT NULL CHECK (amount_micros > 0),
  draws         jsonb NOT NULL CHECK (jsonb_typeof(draws) = 'array'),
  status        text NOT NULL CHECK (status IN ('open', 'captured', 'released')),
  created_at    bigint NOT NULL,
  resolved_at   bigint,
  CONSTRAINT credit_holds_resolved_at CHECK ((status = 'open') = (resolved_at IS NULL))
);
-- a job holds at most once
CREATE UNIQUE INDEX credit_holds_job ON credit_holds (job_id);
CREATE INDEX credit_holds_open ON credit_holds (account_id) WHERE status = 'open';

CREATE TABLE ledger_entries (
  id             text COLLATE "C" PRIMARY KEY,
  account_id     text COLLATE "C" NOT NULL,
  seq            bigint NOT NULL CHECK (seq >= 1),
  kind           text NOT NULL CHECK (kind IN ('purchase', 'grant', 'hold', 'capture', 'release', 'expiry', 'refund', 'adjustment')),
  reason         text NOT NULL,
  balance_delta  bigint NOT NULL,
  reserved_delta bigint NOT NULL,
  balance_after  bigint NOT NULL,
  reserved_after bigint NOT NULL,
  job_id         text COLLATE "C",
  lot_id         text COLLATE "C",
  checkout_id    text COLLATE "C",
  created_at     bigint NOT NULL,
  CONSTRAINT ledger_entries_seq UNIQUE (account_id, seq),
  CONSTRAINT ledger_entries_available_not_negative CHECK (reserved_after >= 0 AND balance_after - reserved_after >= 0)
);
CREATE INDEX ledger_entries_job ON ledger_entries (job_id, created_at, seq) WHERE job_id IS NOT NULL;

CREATE TABLE idempotency_keys (
  account_id       text COLLATE "C" NOT NULL,
  mode             text NOT NULL CHECK (mode IN ('live', 'test')),
  key              text COLLATE "C" NOT NULL,
  method           text NOT NULL,
  path             text NOT NULL,
  fingerprint      text NOT NULL,
  state            text NOT NULL CHECK (state IN ('running', 'done')),
  response_status  integer,
  response_body    text,
  response_headers jsonb,
  created_at       bigint NOT NULL,
  expires_at       bigint NOT NULL,
  PRIMARY KEY (account_id, mode, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- Every ledger append moves the account's wallet row, and only in sequence.
CREATE FUNCTION hush_ledger_append() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  w wallets%ROWTYPE;
BEGIN
  INSERT INTO wallets (account_id) VALUES (NEW.account_id) ON CONFLICT (account_id) DO NOTHING;
  SELECT * INTO w FROM wallets WHERE account_id = NEW.account_id FOR UPDATE;
  IF NEW.seq <> w.last_seq + 1 THEN
    RAISE EXCEPTION 'ledger entry % of account % has seq %, expected %', NEW.id, NEW.account_id, NEW.seq, w.last_seq + 1
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entries_in_sequence';
  END IF;
  IF NEW.balance_after <> w.balance + NEW.balance_delta OR NEW.reserved_after <> w.reserved + NEW.reserved_delta THEN
    RAISE EXCEPTION 'ledger entry % of account % does not add up: balance % % → %, reserved % % → %',
      NEW.id, NEW.account_id, w.balance, NEW.balance_delta, NEW.balance_after, w.reserved, NEW.reserved_delta, NEW.reserved_after
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entries_chain';
  END IF;
  UPDATE wallets SET last_seq = NEW.seq, balance = NEW.balance_after, reserved = NEW.reserved_after
    WHERE account_id = NEW.account_id;
  RETURN NEW;
END
$$;
CREATE TRIGGER ledger_entries_append BEFORE INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION hush_ledger_append();

CREATE FUNCTION hush_ledger_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only (% of entry %)', TG_OP, OLD.id
    USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entries_append_only';
END
$$;
CREATE TRIGGER ledger_entries_immutable BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION hush_ledger_immutable();

-- A hold is resolved once; its account, job, amount and draws never change; draws add up to the amount.
CREATE FUNCTION hush_hold_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'hold % cannot be deleted', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_holds_resolved_once';
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF OLD.status <> 'open' THEN
      RAISE EXCEPTION 'hold % of job % is already %', OLD.id, OLD.job_id, OLD.status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_holds_resolved_once';
    END IF;
    IF NEW.account_id <> OLD.account_id OR NEW.job_id <> OLD.job_id OR NEW.amount_micros <> OLD.amount_micros
       OR NEW.draws <> OLD.draws OR NEW.created_at <> OLD.created_at THEN
      RAISE EXCEPTION 'hold % may change only its status', OLD.id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_holds_resolved_once';
    END IF;
  END IF;
  IF (SELECT coalesce(sum((d ->> 'micros')::bigint), 0) FROM jsonb_array_elements(NEW.draws) AS d) <> NEW.amount_micros THEN
    RAISE EXCEPTION 'hold % draws do not add up to %', NEW.id, NEW.amount_micros
      USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_holds_draws_sum';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER credit_holds_guard BEFORE INSERT OR UPDATE OR DELETE ON credit_holds
  FOR EACH ROW EXECUTE FUNCTION hush_hold_guard();

-- An expired lot stays expired.
CREATE FUNCTION hush_lot_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.expired AND NOT NEW.expired THEN
    RAISE EXCEPTION 'lot % is expired and cannot become live again', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_lots_expiry_final';
  END IF;
  IF NEW.account_id <> OLD.account_id OR NEW.amount_micros <> OLD.amount_micros OR NEW.source <> OLD.source
     OR NEW.purchased_at <> OLD.purchased_at OR NEW.expires_at <> OLD.expires_at THEN
    RAISE EXCEPTION 'lot % may change only its remaining micros and expiry flag', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'credit_lots_immutable';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER credit_lots_guard BEFORE UPDATE ON credit_lots
  FOR EACH ROW EXECUTE FUNCTION hush_lot_guard();
`

export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(schema))
