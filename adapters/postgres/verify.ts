/**
 * Read-only checks that the money adds up, for operators (after a restore, on a schedule) and
 * tests. Each query returns the offending rows; an empty result means the check holds.
 * docs/operations.md shows the same SQL.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { orFault } from "./errors.js"

export const LEDGER_CHECKS = {
  /** Every account's ledger is 1, 2, 3, … and each entry's *_after are the previous ones plus its deltas. */
  chain: `
    WITH chain AS (
      SELECT account_id, seq, balance_delta, reserved_delta, balance_after, reserved_after,
             lag(seq) OVER w AS prev_seq,
             COALESCE(lag(balance_after) OVER w, 0) AS prev_balance,
             COALESCE(lag(reserved_after) OVER w, 0) AS prev_reserved
      FROM ledger_entries
      WINDOW w AS (PARTITION BY account_id ORDER BY seq)
    )
    SELECT account_id, seq FROM chain
    WHERE seq <> COALESCE(prev_seq, 0) + 1
       OR balance_after <> prev_balance + balance_delta
       OR reserved_after <> prev_reserved + reserved_delta
       OR reserved_after < 0 OR balance_after < reserved_after`,
  /** Each wallet row is its account's last entry (seq, balance, reserved). */
  wallets: `
    SELECT w.account_id FROM wallets w
    LEFT JOIN LATERAL (
      SELECT seq, balance_after, reserved_after FROM ledger_entries e
      WHERE e.account_id = w.account_id ORDER BY seq DESC LIMIT 1
    ) last ON true
    WHERE (w.last_seq, w.balance, w.reserved)
      IS DISTINCT FROM (COALESCE(last.seq, 0), COALESCE(last.balance_after, 0), COALESCE(last.reserved_after, 0))`,
  /** balance = Σ lots' remaining micros; reserved = Σ open holds. */
  lotsAndHolds: `
    SELECT w.account_id, w.balance, lots.remaining, w.reserved, holds.held FROM wallets w
    LEFT JOIN (SELECT account_id, sum(remaining_micros) AS remaining FROM credit_lots GROUP BY account_id) lots
      USING (account_id)
    LEFT JOIN (SELECT account_id, sum(amount_micros) AS held FROM credit_holds WHERE status = 'open' GROUP BY account_id) holds
      USING (account_id)
    WHERE w.balance <> COALESCE(lots.remaining, 0) OR w.reserved <> COALESCE(holds.held, 0)`,
  /**
   * Each charged live job: a queued or processing job holds, a succeeded one was captured for
   * exactly its hold, a failed or canceled one was released.
   */
  jobs: `
    SELECT j.id, j.status, h.status AS hold_status FROM jobs j
    LEFT JOIN credit_holds h ON h.job_id = j.id
    WHERE j.mode = 'live' AND j.estimated_micros > 0 AND NOT COALESCE(
      (j.status IN ('queued', 'processing') AND h.status = 'open') OR
      (j.status = 'succeeded' AND h.status = 'captured' AND j.charged_micros = h.amount_micros) OR
      (j.status IN ('failed', 'canceled') AND h.status = 'released'), false)`
} as const

export type LedgerCheck = keyof typeof LEDGER_CHECKS

/** Runs every check; the rows each one found (all empty when the money adds up). */
export const verifyLedger = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const found: Partial<Record<LedgerCheck, ReadonlyArray<Record<string, unknown>>>> = {}
  for (const [name, query] of Object.entries(LEDGER_CHECKS)) {
    found[name as LedgerCheck] = yield* sql.unsafe<Record<string, unknown>>(query).withoutTransform.pipe(
      orFault(`verifyLedger.${name}`)
    )
  }
  return found as Record<LedgerCheck, ReadonlyArray<Record<string, unknown>>>
})
