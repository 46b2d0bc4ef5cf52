/**
 * Completion times of deleted files: the validations-per-hour quota keeps counting them, so
 * deleting files does not buy more validations. FileRepo.delete writes and prunes them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE TABLE deleted_file_validations (
  account_id   text COLLATE "C" NOT NULL,
  mode         text NOT NULL CHECK (mode IN ('live', 'test')),
  completed_at bigint NOT NULL
);
CREATE INDEX deleted_file_validations_account ON deleted_file_validations (account_id, mode, completed_at);
CREATE INDEX deleted_file_validations_age ON deleted_file_validations (completed_at);
`))
