/**
 * Every change to a key or an account that authentication reads is announced on the
 * `hush_auth_changed` channel when it commits, so each node's key cache (adapters/postgres/
 * key-cache.ts) forgets what it held. Triggers, not the repositories, announce it: a change by
 * another node, the operator CLI or a hand-written UPDATE is announced too. The refresh of
 * `last_used_at` alone (once a minute per key) is not a change worth announcing. The triggers
 * fire ALWAYS, so a session with `session_replication_role = replica` (a bulk reset) announces too.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE FUNCTION hush_announce_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('hush_auth_changed', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
CREATE TRIGGER api_keys_auth_changed AFTER UPDATE ON api_keys
  FOR EACH ROW WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
  EXECUTE FUNCTION hush_announce_auth_change();
CREATE TRIGGER api_keys_auth_deleted AFTER DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION hush_announce_auth_change();
CREATE TRIGGER accounts_auth_changed AFTER UPDATE OR DELETE ON accounts
  FOR EACH ROW EXECUTE FUNCTION hush_announce_auth_change();
CREATE TRIGGER api_keys_auth_truncated AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION hush_announce_auth_change();
CREATE TRIGGER accounts_auth_truncated AFTER TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION hush_announce_auth_change();
ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_auth_changed;
ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_auth_deleted;
ALTER TABLE accounts ENABLE ALWAYS TRIGGER accounts_auth_changed;
ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_auth_truncated;
ALTER TABLE accounts ENABLE ALWAYS TRIGGER accounts_auth_truncated;
`))
