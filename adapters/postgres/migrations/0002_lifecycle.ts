/** Indexes for the lifecycle sweeper's queries (LifecycleRepo). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE INDEX files_sweep_ready ON files (ready_at) WHERE status = 'ready';
CREATE INDEX files_sweep_rejected ON files (rejected_at) WHERE status = 'rejected';
CREATE INDEX files_sweep_uploading ON files (upload_expires_at) WHERE status = 'uploading';
CREATE INDEX jobs_sweep_outputs ON jobs (finished_at)
  WHERE status = 'succeeded' AND output_storage_key IS NOT NULL AND output_deleted_at IS NULL;
`))
