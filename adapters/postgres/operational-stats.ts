/**
 * OperationalStats over PostgreSQL: active jobs grouped (the partial index on queued jobs
 * serves the oldest), and pg_stat_activity for the connections to this database.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { JobStatus, Mode } from "../../core/domain/enums.js"
import { OperationalStats } from "../../core/ports/operational-stats.js"
import { orFault } from "./errors.js"

type Row = Record<string, unknown>

export const layerPostgresOperationalStats = Layer.effect(OperationalStats, Effect.map(SqlClient.SqlClient, (sql) => {
  const rows = (operation: string, text: string) => sql.unsafe<Row>(text).withoutTransform.pipe(orFault(operation))
  return {
    queue: Effect.map(
      Effect.all([
        rows("OperationalStats.active", `SELECT status, model, mode, count(*)::int AS n FROM jobs
          WHERE status IN ('queued', 'processing') GROUP BY status, model, mode`),
        rows("OperationalStats.oldestQueued", `SELECT min(created_at) AS oldest FROM jobs WHERE status = 'queued' AND mode = 'live'`)
      ]),
      ([active, oldest]) => ({
        active: active.map((r) => ({ state: r.status as JobStatus, model: String(r.model), mode: r.mode as Mode, count: Number(r.n) })),
        oldestQueuedAt: oldest[0]?.oldest == null ? null : Number(oldest[0].oldest)
      })
    ),
    connections: Effect.map(
      Effect.all([
        rows("OperationalStats.connections", `SELECT coalesce(state, 'unknown') AS state, count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND backend_type = 'client backend' GROUP BY 1`),
        rows("OperationalStats.maxConnections", `SELECT current_setting('max_connections')::int AS max`)
      ]),
      ([byState, max]) => Option.some({
        byState: byState.map((r) => ({ state: String(r.state), count: Number(r.n) })),
        maxConnections: Number(max[0]?.max ?? 0)
      })
    )
  }
}))
