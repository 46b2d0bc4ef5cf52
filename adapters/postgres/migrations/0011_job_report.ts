/**
 * What a succeeded live job measured on its audio (decisions.md, Denoise options: Report):
 * four numbers, all present or all absent (jobs before this migration, test jobs, and jobs
 * that have not succeeded have none).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE jobs
  ADD COLUMN report_input_loudness_lufs   double precision,
  ADD COLUMN report_output_loudness_lufs  double precision,
  ADD COLUMN report_output_true_peak_dbtp double precision,
  ADD COLUMN report_noise_reduction_db    double precision,
  ADD CONSTRAINT jobs_report_whole CHECK (
    (report_input_loudness_lufs IS NULL) = (report_output_loudness_lufs IS NULL) AND
    (report_input_loudness_lufs IS NULL) = (report_output_true_peak_dbtp IS NULL) AND
    (report_input_loudness_lufs IS NULL) = (report_noise_reduction_db IS NULL) AND
    (report_input_loudness_lufs IS NULL OR output_storage_key IS NOT NULL)
  );
`))
