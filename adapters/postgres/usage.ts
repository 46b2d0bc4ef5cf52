/**
 * Usage aggregates in one statement per request, whatever the range: the jobs of an account and
 * mode in [from, to) through the `jobs_list` index (account_id, mode, created_at), grouped by UTC
 * day, model or key.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import { UsageRepo } from "../../core/ports/usage.js"
import { DAY } from "../../core/time.js"
import { PgInt, run } from "./columns.js"

const Bucket = Schema.Struct({
  grp: Schema.NullOr(Schema.String),
  jobs: PgInt,
  succeeded: PgInt,
  failed: PgInt,
  billable_seconds: PgInt,
  charged_micros: PgInt
})

const dayOf = (index: number) => new Date(index * DAY).toISOString().slice(0, 10)

export const PostgresUsageRepo = Layer.effect(UsageRepo, Effect.map(SqlClient.SqlClient, (sql) => {
  const GROUPS = {
    // the UTC day's index since the epoch, as text (formatted below)
    day: sql.literal(`(floor(created_at / ${DAY}))::bigint::text`),
    model: sql.literal("model"),
    key: sql.literal("key_id")
  } as const
  const usage = SqlSchema.findAll({
    Request: Schema.Struct({
      accountId: Schema.String, mode: Schema.String, from: Schema.Number, to: Schema.Number, group: Schema.Literal("day", "model", "key")
    }),
    Result: Bucket,
    execute: (q) => sql`SELECT ${GROUPS[q.group]} AS grp,
        count(*) AS jobs,
        count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
        count(*) FILTER (WHERE status = 'failed') AS failed,
        COALESCE(sum(billable_seconds) FILTER (WHERE status = 'succeeded'), 0) AS billable_seconds,
        COALESCE(sum(charged_micros) FILTER (WHERE status = 'succeeded'), 0) AS charged_micros
      FROM jobs
      WHERE account_id = ${q.accountId} AND mode = ${q.mode} AND created_at >= ${q.from} AND created_at < ${q.to}
      GROUP BY 1`
  })
  return {
    usage: (query) =>
      Effect.map(usage(query), (rows) =>
        rows.map((r) => ({
          key: query.group === "day" && r.grp !== null ? dayOf(Number(r.grp)) : r.grp,
          jobs: r.jobs,
          succeeded: r.succeeded,
          failed: r.failed,
          billableSeconds: r.billable_seconds,
          chargedMicros: r.charged_micros
        }))).pipe(run("UsageRepo.usage"))
  }
}))
