/**
 * Buying credit: checkouts (one per `POST /v1/dashboard/checkout`) and the provider's event ids
 * already applied, whose primary key makes a redelivered event, even a concurrent one, a no-op.
 * A paid checkout has one purchase lot: the unique index on `credit_lots.checkout_id` guards it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE checkouts (
  id                  text COLLATE "C" PRIMARY KEY,
  account_id          text COLLATE "C" NOT NULL,
  amount_micros       bigint NOT NULL CHECK (amount_micros > 0 AND amount_micros % 10000 = 0),
  status              text NOT NULL CHECK (status IN ('open', 'paid', 'canceled')),
  provider            text NOT NULL,
  url                 text NOT NULL,
  provider_session_id text COLLATE "C",
  payment_ref         text COLLATE "C",
  refunded_micros     bigint NOT NULL CHECK (refunded_micros >= 0 AND refunded_micros <= amount_micros),
  dispute             text CHECK (dispute IN ('open', 'won', 'lost')),
  created_at          bigint NOT NULL,
  paid_at             bigint,
  CONSTRAINT checkouts_paid_at CHECK ((status = 'paid') = (paid_at IS NOT NULL))
);
CREATE INDEX checkouts_account ON checkouts (account_id, created_at);
CREATE UNIQUE INDEX checkouts_payment_ref ON checkouts (payment_ref) WHERE payment_ref IS NOT NULL;
CREATE INDEX checkouts_open_disputes ON checkouts (account_id) WHERE dispute = 'open';

CREATE TABLE payment_events (
  id          text COLLATE "C" PRIMARY KEY,
  type        text NOT NULL,
  received_at bigint NOT NULL
);

DROP INDEX credit_lots_checkout;
CREATE UNIQUE INDEX credit_lots_checkout ON credit_lots (checkout_id) WHERE checkout_id IS NOT NULL;
`))
