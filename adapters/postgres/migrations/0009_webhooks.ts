/**
 * Outbound webhooks: endpoints (at most 16 per account and mode, checked by the service) and
 * the delivery queue, claimed with leases like jobs. `webhook_deliveries_due` serves the
 * claimers' `lockDue`. No foreign key, as elsewhere (docs/persistence.md): deleting an
 * endpoint deletes its deliveries in the same statement (adapters/postgres/webhooks.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE webhook_endpoints (
  id            text COLLATE "C" PRIMARY KEY,
  account_id    text COLLATE "C" NOT NULL,
  mode          text NOT NULL CHECK (mode IN ('live', 'test')),
  url           text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
  events        jsonb NOT NULL CHECK (jsonb_typeof(events) = 'array' AND jsonb_array_length(events) > 0),
  description   text,
  secret        text NOT NULL CHECK (secret LIKE 'whsec\\_%'),
  status        text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  created_at    bigint NOT NULL,
  failing_since bigint,
  disabled_at   bigint,
  CONSTRAINT webhook_endpoints_disabled CHECK ((status = 'disabled') = (disabled_at IS NOT NULL))
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, mode, created_at, id);

CREATE TABLE webhook_deliveries (
  id               text COLLATE "C" PRIMARY KEY,
  endpoint_id      text COLLATE "C" NOT NULL,
  account_id       text COLLATE "C" NOT NULL,
  mode             text NOT NULL CHECK (mode IN ('live', 'test')),
  event_id         text COLLATE "C" NOT NULL,
  event_type       text NOT NULL,
  body             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(attempts) = 'array'),
  next_attempt_at  bigint,
  lease_owner      text,
  lease_expires_at bigint,
  created_at       bigint NOT NULL,
  finished_at      bigint,
  CONSTRAINT webhook_deliveries_pending_is_scheduled CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
  CONSTRAINT webhook_deliveries_lease CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
`))
