/**
 * Usage aggregates in one statement per request, whatever the range: the jobs of an account and
 * mode in [from, to) through the `jobs_list` index (account_id, mode, created_at), grouped by UTC
 * day, model or key.
 */
import { Effect, Layer } from "effect"
import { UsageRepo } from "../../core/ports/usage.js"
import { DAY } from "../../core/time.js"
import { repositoryStatements } from "./statements.js"
import { statement, toInt } from "./table.js"

/** Buckets by `group`, an SQL expression. */
const usageBy = (group: string) =>
  statement(["accountId", "mode", "from", "to"], (p) =>
    `SELECT ${group} AS grp,
      count(*) AS jobs,
      count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
      count(*) FILTER (WHERE status = 'failed') AS failed,
      COALESCE(sum(billable_seconds) FILTER (WHERE status = 'succeeded'), 0) AS billable_seconds,
      COALESCE(sum(charged_micros) FILTER (WHERE status = 'succeeded'), 0) AS charged_micros
    FROM jobs
    WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND created_at >= ${p.from} AND created_at < ${p.to}
    GROUP BY 1`)

const USAGE = {
  // the UTC day's index since the epoch, as text (formatted below)
  day: usageBy(`(floor(created_at / ${DAY}))::bigint::text`),
  model: usageBy("model"),
  key: usageBy("key_id")
} as const

const dayOf = (index: number) => new Date(index * DAY).toISOString().slice(0, 10)

export const layerPostgresUsageRepo = Layer.effect(UsageRepo, Effect.map(repositoryStatements, (q) => ({
  usage: (query) =>
    Effect.map(q.rows("UsageRepo.usage", USAGE[query.group], [query.accountId, query.mode, query.from, query.to]), (rows) =>
      rows.map((r) => {
        const group = r.grp === null || r.grp === undefined ? null : String(r.grp)
        return {
          key: query.group === "day" && group !== null ? dayOf(Number(group)) : group,
          jobs: toInt(r.jobs, "jobs"),
          succeeded: toInt(r.succeeded, "succeeded"),
          failed: toInt(r.failed, "failed"),
          billableSeconds: toInt(r.billable_seconds, "billable_seconds"),
          chargedMicros: toInt(r.charged_micros, "charged_micros")
        }
      }))
})))
