/**
 * The options a denoise job was asked for (decisions.md, Denoise options). Jobs created before
 * this migration ran with the defaults of that time: full strength, MP3, level unchanged.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE jobs
  ADD COLUMN option_strength double precision CHECK (option_strength >= 0 AND option_strength <= 1),
  ADD COLUMN option_format   text NOT NULL DEFAULT 'mp3' CHECK (option_format IN ('mp3', 'wav', 'flac', 'opus')),
  ADD COLUMN option_loudness double precision CHECK (option_loudness >= -31 AND option_loudness <= -9);
UPDATE jobs SET option_strength = 1;
`))
