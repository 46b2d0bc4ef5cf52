/**
 * Every repository port over a PostgreSQL `SqlClient` (@effect/sql-pg, node-postgres). The same
 * code serves a server at DATABASE_URL and the embedded one (adapters/embedded-postgres).
 * Inside `Transactor.withTransaction` all statements run on the transaction's connection;
 * outside, each statement is its own autocommit transaction.
 *
 * Wallet transactions: `lock` upserts the account's `wallets` row and takes its row lock
 * (`FOR UPDATE`) before reading lots, holds and the last seq, so under READ COMMITTED every read
 * after it sees what the previous holder of the lock committed. `apply` is atomic by itself
 * (a savepoint inside a transaction) and refuses a change to a resolved hold, an entry out of
 * sequence or an overdraft, both here and in the database (see migrations/0001_initial.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { VALIDATION_WINDOW_MS } from "../../core/domain/limits.js"
import { AccountRecord, type HoldRecord, type KeyRecord, type LotRecord } from "../../core/domain/records.js"
import {
  AccountRepo, FileRepo, IdempotencyRepo, JobRepo, KeyRepo, WalletRepo, type IdempotencyBegin
} from "../../core/ports/repositories.js"
import { LifecycleRepo } from "../../core/ports/lifecycle.js"
import { PostgresUsageRepo } from "./usage.js"
import { PostgresUserRepositories } from "./users.js"
import { PostgresPaymentRepositories } from "./payments.js"
import { PostgresWebhookRepo } from "./webhooks.js"
import { PostgresKeyCache, PostgresKeyCacheLive } from "./key-cache.js"
import { run } from "./columns.js"
import { PostgresPool } from "./pool.js"
import { runStatement } from "./statements.js"
import { orFault, refuse } from "./errors.js"
import {
  ACCOUNT_COLUMNS, drawsJson, ENTRY_COLUMNS, FILE_COLUMNS, fileParams, HOLD_COLUMNS, IDEMPOTENCY_COLUMNS, int,
  intOrNull, JOB_COLUMNS, jobParams, KEY_COLUMNS, LOT_COLUMNS, type Row, toAccount, toEntry, toFile, toHold,
  toIdempotency, toJob, toKey, toLot
} from "./rows.js"

/** `$1, $2, …, $n` */
const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(", ")
const columnList = (columns: string) => columns.split(",").map((c) => c.trim())

/** The statements every repository needs, bound to one client. */
const makeSql = Effect.map(Effect.all([SqlClient.SqlClient, PostgresPool]), ([sql, pool]) => {
  /**
   * Rows of a statement, without the client's name transforms (the mappers read snake_case).
   * Uninterruptible: an interrupted fiber stops after the statement, not during it. (Interrupted
   * mid-statement, node-postgres sends pg_cancel_backend over another pooled connection, which
   * waits for a free one when the pool is busy.) Every statement here is a short, indexed one.
   */
  const rows = (operation: string, text: string, params: ReadonlyArray<unknown> = []) =>
    runStatement<Row>(pool, text, params, () => sql.unsafe<Row>(text, params).withoutTransform).pipe(orFault(operation), Effect.uninterruptible)
  const first = <A>(operation: string, text: string, params: ReadonlyArray<unknown>, to: (r: Row) => A) =>
    Effect.map(rows(operation, text, params), (rs) => Option.map(Option.fromNullable(rs[0]), to))
  const many = <A>(operation: string, text: string, params: ReadonlyArray<unknown>, to: (r: Row) => A) =>
    Effect.map(rows(operation, text, params), (rs) => rs.map(to))
  /** A statement that must touch exactly one row (… RETURNING 1). */
  const one = (operation: string, text: string, params: ReadonlyArray<unknown>, what: string) =>
    Effect.flatMap(rows(operation, text, params), (rs) => (rs.length === 1 ? Effect.void : refuse(operation, what)))
  return { sql, rows, first, many, one }
})

// ──────────────────────────────────────────────────────────────── accounts

/** The record's columns, for INSERT and UPDATE. */
const accountRow = (a: AccountRecord) => ({
  id: a.id, name: a.name, status: a.status, has_purchased: a.hasPurchased, terms_version: a.termsVersion,
  training_opt_in: a.trainingOptIn, created_at: a.createdAt
})

export const PostgresAccountRepo = Layer.effect(AccountRepo, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const keyCache = yield* PostgresKeyCache
  const row = accountRow
  return {
    insert: (account) => sql`INSERT INTO accounts ${sql.insert(row(account))}`.pipe(Effect.asVoid, run("AccountRepo.insert")),
    update: (account) =>
      sql<{ readonly updated: number }>`UPDATE accounts SET ${sql.update(row(account), ["id"])} WHERE id = ${account.id} RETURNING 1 AS updated`.pipe(
        Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : refuse("AccountRepo.update", `no account '${account.id}' to update`))),
        run("AccountRepo.update"),
        Effect.ensuring(keyCache.changedHere)
      ),
    get: (id) =>
      sql.unsafe<Row>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]).withoutTransform.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => toAccount(r))),
        run("AccountRepo.get")
      )
  }
}))

// ──────────────────────────────────────────────────────────────── keys

const KEY_INSERT = `INSERT INTO api_keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11)`
const KEY_UPDATE = `UPDATE api_keys SET account_id = $2, name = $3, mode = $4, hash = $5, prefix_display = $6,
  last_four = $7, scopes = $8::jsonb, created_at = $9, last_used_at = $10, revoked_at = $11 WHERE id = $1 RETURNING 1`

const ACCOUNT_FIELDS = ACCOUNT_COLUMNS.split(",").map((c) => c.trim())
const KEY_WITH_ACCOUNT = `SELECT ${KEY_COLUMNS.split(",").map((c) => `k.${c.trim()}`).join(", ")}, ${
  ACCOUNT_FIELDS.map((c) => `a.${c} AS a_${c}`).join(", ")
} FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1`

const KEY_MARK_USED = `UPDATE api_keys SET last_used_at = $2 WHERE id = $1 RETURNING 1`

export const PostgresKeyRepo = Layer.effect(KeyRepo, Effect.gen(function*() {
  const q = yield* makeSql
  const keyCache = yield* PostgresKeyCache
  const params = (k: KeyRecord) => [
    k.id, k.accountId, k.name, k.mode, k.hash, k.prefixDisplay, k.lastFour, JSON.stringify(k.scopes), k.createdAt,
    k.lastUsedAt, k.revokedAt
  ]
  return {
    insert: (key) => Effect.asVoid(q.rows("KeyRepo.insert", KEY_INSERT, params(key))),
    update: (key) => q.one("KeyRepo.update", KEY_UPDATE, params(key), `no key '${key.id}' to update`).pipe(Effect.ensuring(keyCache.changedHere)),
    markUsed: (key) =>
      q.one("KeyRepo.markUsed", KEY_MARK_USED, [key.id, key.lastUsedAt], `no key '${key.id}' to mark used`).pipe(
        Effect.tap(() => keyCache.noteUsed(key))
      ),
    get: (id) => q.first("KeyRepo.get", `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id], toKey),
    findByHash: (hash) => q.first("KeyRepo.findByHash", `SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = $1`, [hash], toKey),
    // every keyed request: the key cache, or one round trip for the key and its account
    findByHashWithAccount: (hash) =>
      keyCache.lookup(
        hash,
        q.first("KeyRepo.findByHashWithAccount", KEY_WITH_ACCOUNT, [hash], (r) => ({
          key: toKey(r),
          account: r.a_id === null || r.a_id === undefined
            ? Option.none()
            : Option.some(toAccount(r, "a_"))
        }))
      ),
    listByAccount: (accountId) =>
      q.many(
        "KeyRepo.listByAccount",
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
        [accountId],
        toKey
      )
  }
}))

// ──────────────────────────────────────────────────────────────── files

const FILE_INSERT = `INSERT INTO files (${FILE_COLUMNS.replace(/\s+/g, " ")}) VALUES (${placeholders(19)})`
const FILE_UPDATE = `UPDATE files SET ${
  columnList(FILE_COLUMNS).slice(1).map((c, i) => `${c} = $${i + 2}`).join(", ")
} WHERE id = $1 RETURNING 1`

export const PostgresFileRepo = Layer.effect(FileRepo, Effect.map(makeSql, (q) => ({
  insert: (file) => Effect.asVoid(q.rows("FileRepo.insert", FILE_INSERT, fileParams(file))),
  update: (file) => q.one("FileRepo.update", FILE_UPDATE, fileParams(file), `no file '${file.id}' to update`),
  get: (id) => q.first("FileRepo.get", `SELECT ${FILE_COLUMNS} FROM files WHERE id = $1`, [id], toFile),
  // the deleted file's completion keeps counting against the validations quota (older ones go)
  delete: (id) =>
    Effect.asVoid(q.rows(
      "FileRepo.delete",
      `WITH gone AS (DELETE FROM files WHERE id = $1 RETURNING account_id, mode, completed_at),
        pruned AS (DELETE FROM deleted_file_validations
          WHERE completed_at < (SELECT completed_at FROM gone) - $2)
      INSERT INTO deleted_file_validations (account_id, mode, completed_at)
        SELECT account_id, mode, completed_at FROM gone WHERE completed_at IS NOT NULL`,
      [id, VALIDATION_WINDOW_MS]
    )),
  countOpenUploads: (accountId, mode, now) =>
    Effect.map(
      q.rows(
        "FileRepo.countOpenUploads",
        `SELECT count(*) AS n FROM files
          WHERE account_id = $1 AND mode = $2 AND status = 'uploading' AND upload_expires_at > $3`,
        [accountId, mode, now]
      ),
      (rs) => int(rs[0]?.n ?? 0, "count")
    ),
  retainedBytes: (accountId, mode) =>
    Effect.map(
      q.rows(
        "FileRepo.retainedBytes",
        `SELECT COALESCE(sum(size_bytes), 0) AS bytes FROM files
          WHERE account_id = $1 AND mode = $2 AND status <> 'rejected'`,
        [accountId, mode]
      ),
      (rs) => int(rs[0]?.bytes ?? 0, "sum(size_bytes)")
    ),
  validationsSince: (accountId, mode, since) =>
    Effect.map(
      q.rows(
        "FileRepo.validationsSince",
        `SELECT count(*) AS n, min(completed_at) AS earliest FROM (
            SELECT completed_at FROM files
              WHERE account_id = $1 AND mode = $2 AND completed_at IS NOT NULL AND completed_at >= $3
            UNION ALL
            SELECT completed_at FROM deleted_file_validations
              WHERE account_id = $1 AND mode = $2 AND completed_at >= $3
          ) AS validations`,
        [accountId, mode, since]
      ),
      (rs) => ({ count: int(rs[0]?.n ?? 0, "count"), earliest: intOrNull(rs[0]?.earliest ?? null, "min(completed_at)") })
    )
})))

// ──────────────────────────────────────────────────────────────── jobs

const JOB_COLUMN_COUNT = columnList(JOB_COLUMNS).length
const JOB_INSERT = `INSERT INTO jobs (${JOB_COLUMNS.replace(/\s+/g, " ")}) VALUES (${placeholders(JOB_COLUMN_COUNT)})`
const JOB_UPDATE = `UPDATE jobs SET ${
  columnList(JOB_COLUMNS).slice(1).map((c, i) => `${c} = $${i + 2}`).join(", ")
} WHERE id = $1 RETURNING 1`
/**
 * …while no enabled endpoint of the job's account ($2) and mode ($3) subscribes to the event
 * (the parameter after the columns; core/rules/webhooks.ts `subscribes`). The SELECT's parameters take the columns' types.
 */
const JOB_INSERT_UNLESS_SUBSCRIBED = `INSERT INTO jobs (${JOB_COLUMNS.replace(/\s+/g, " ")}) SELECT ${placeholders(JOB_COLUMN_COUNT)}
  WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.account_id = $2 AND w.mode = $3 AND w.status = 'enabled' AND w.events ? $${JOB_COLUMN_COUNT + 1})
  RETURNING 1`

export const PostgresJobRepo = Layer.effect(JobRepo, Effect.map(makeSql, (q) => ({
  insert: (job) => Effect.asVoid(q.rows("JobRepo.insert", JOB_INSERT, jobParams(job))),
  insertUnlessSubscribed: (job, event) =>
    Effect.map(q.rows("JobRepo.insertUnlessSubscribed", JOB_INSERT_UNLESS_SUBSCRIBED, [...jobParams(job), event]), (rs) => rs.length === 1),
  update: (job) => q.one("JobRepo.update", JOB_UPDATE, jobParams(job), `no job '${job.id}' to update`),
  get: (id) => q.first("JobRepo.get", `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id], toJob),
  lockById: (id) => q.first("JobRepo.lockById", `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [id], toJob),
  list: (query) => {
    const params: Array<unknown> = [query.accountId, query.mode]
    const where = ["account_id = $1", "mode = $2"]
    if (query.status !== undefined) {
      params.push(query.status)
      where.push(`status = $${params.length}`)
    }
    if (query.model !== undefined) {
      params.push(query.model)
      where.push(`model = $${params.length}`)
    }
    if (query.after !== undefined) {
      params.push(query.after.createdAt, query.after.id)
      // ids are COLLATE "C": the tie-break is byte order, as in JavaScript
      where.push(`(created_at, id) < ($${params.length - 1}::bigint, $${params.length}::text COLLATE "C")`)
    }
    params.push(query.limit)
    return q.many(
      "JobRepo.list",
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE ${where.join(" AND ")}
        ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
      toJob
    )
  },
  countActiveForFile: (fileId) =>
    Effect.map(
      q.rows(
        "JobRepo.countActiveForFile",
        `SELECT count(*) AS n FROM jobs WHERE file_id = $1 AND status IN ('queued', 'processing')`,
        [fileId]
      ),
      (rs) => int(rs[0]?.n ?? 0, "count")
    ),
  lockNextQueued: (mode) =>
    q.first(
      "JobRepo.lockNextQueued",
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE status = 'queued' AND mode = $1
        ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [mode],
      toJob
    ),
  lapsedLeases: (now, limit) =>
    q.many(
      "JobRepo.lapsedLeases",
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE status = 'processing' AND lease_expires_at < $1
        ORDER BY lease_expires_at, id LIMIT $2`,
      [now, limit],
      toJob
    )
})))

// ──────────────────────────────────────────────────────────────── wallet

const LOT_UPSERT = `INSERT INTO credit_lots (${LOT_COLUMNS}) VALUES (${placeholders(9)})
  ON CONFLICT (id) DO UPDATE SET remaining_micros = EXCLUDED.remaining_micros, expired = EXCLUDED.expired
  WHERE credit_lots.account_id = EXCLUDED.account_id
  RETURNING 1`

const HOLD_UPSERT = `INSERT INTO credit_holds (${HOLD_COLUMNS}) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)
  ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, resolved_at = EXCLUDED.resolved_at
  WHERE credit_holds.status = 'open' AND credit_holds.account_id = EXCLUDED.account_id
  RETURNING 1`

const ENTRY_INSERT = `INSERT INTO ledger_entries (${ENTRY_COLUMNS.replace(/\s+/g, " ")}) VALUES (${placeholders(13)})`

export const PostgresWalletRepo = Layer.effect(WalletRepo, Effect.map(makeSql, (q) => {
  const lotParams = (l: LotRecord) => [
    l.id, l.accountId, l.source, l.amountMicros, l.remainingMicros, l.purchasedAt, l.expiresAt, l.expired, l.checkoutId
  ]
  const holdParams = (h: HoldRecord) => [
    h.id, h.accountId, h.jobId, h.amountMicros, drawsJson(h), h.status, h.createdAt, h.resolvedAt
  ]
  return {
    lock: (accountId) =>
      Effect.gen(function*() {
        // the row exists for every account that ever locked, so there is always something to lock
        yield* q.rows(
          "WalletRepo.lock",
          `INSERT INTO wallets (account_id) VALUES ($1) ON CONFLICT (account_id) DO NOTHING`,
          [accountId]
        )
        const wallet = yield* q.rows(
          "WalletRepo.lock",
          `SELECT last_seq, balance, reserved FROM wallets WHERE account_id = $1 FOR UPDATE`,
          [accountId]
        )
        const w = wallet[0]
        if (w === undefined) return yield* refuse("WalletRepo.lock", `the wallet row of '${accountId}' vanished`)
        // read after the lock: each statement sees what the previous holder committed
        const lots = yield* q.many(
          "WalletRepo.lock",
          `SELECT ${LOT_COLUMNS} FROM credit_lots WHERE account_id = $1 AND remaining_micros > 0`,
          [accountId],
          toLot
        )
        const openHolds = yield* q.many(
          "WalletRepo.lock",
          `SELECT ${HOLD_COLUMNS} FROM credit_holds WHERE account_id = $1 AND status = 'open'`,
          [accountId],
          toHold
        )
        return {
          accountId,
          lots,
          openHolds,
          lastSeq: int(w.last_seq, "last_seq"),
          balance: int(w.balance, "balance"),
          reserved: int(w.reserved, "reserved")
        }
      }),
    apply: (change) =>
      q.sql.withTransaction(Effect.gen(function*() {
        for (const lot of change.lots) {
          yield* q.one("WalletRepo.apply", LOT_UPSERT, lotParams(lot), `lot '${lot.id}' belongs to another account`)
        }
        for (const hold of change.holds) {
          yield* q.one(
            "WalletRepo.apply",
            HOLD_UPSERT,
            holdParams(hold),
            `hold '${hold.id}' of job '${hold.jobId}' is no longer open (resolved already, or another account's)`
          )
        }
        for (const entry of change.entries) {
          yield* q.rows("WalletRepo.apply", ENTRY_INSERT, [
            entry.id, entry.accountId, entry.seq, entry.kind, entry.reason, entry.balanceDelta, entry.reservedDelta,
            entry.balanceAfter, entry.reservedAfter, entry.jobId, entry.lotId, entry.checkoutId, entry.createdAt
          ])
        }
      })).pipe(orFault("WalletRepo.apply")),
    holdForJob: (jobId) =>
      q.first("WalletRepo.holdForJob", `SELECT ${HOLD_COLUMNS} FROM credit_holds WHERE job_id = $1`, [jobId], toHold),
    unexpiredLots: (accountId, now, limit) =>
      q.sql`SELECT ${q.sql.literal(LOT_COLUMNS)} FROM credit_lots
        WHERE account_id = ${accountId} AND NOT expired AND expires_at > ${now}
        ORDER BY expires_at, id LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(toLot)), run("WalletRepo.unexpiredLots")),
    listLots: (accountId, limit) =>
      q.many(
        "WalletRepo.listLots",
        `SELECT ${LOT_COLUMNS} FROM credit_lots WHERE account_id = $1 ORDER BY purchased_at DESC, id DESC LIMIT $2`,
        [accountId, limit],
        toLot
      ),
    ledgerPage: (query) =>
      query.beforeSeq === undefined
        ? q.many(
          "WalletRepo.ledgerPage",
          `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE account_id = $1 ORDER BY seq DESC LIMIT $2`,
          [query.accountId, query.limit],
          toEntry
        )
        : q.many(
          "WalletRepo.ledgerPage",
          `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE account_id = $1 AND seq < $3 ORDER BY seq DESC LIMIT $2`,
          [query.accountId, query.limit, query.beforeSeq],
          toEntry
        ),
    ledgerForJob: (jobId) =>
      q.many(
        "WalletRepo.ledgerForJob",
        `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE job_id = $1 ORDER BY created_at, seq`,
        [jobId],
        toEntry
      )
  }
}))

// ──────────────────────────────────────────────────────────────── idempotency

/**
 * One statement: insert the running record, or take over an expired one; when neither happens,
 * return the record that is there. If that record was committed after the statement's snapshot
 * (a concurrent begin won) or abandoned meanwhile, the statement sees neither and is retried.
 */
const IDEMPOTENCY_BEGIN = `WITH started AS (
    INSERT INTO idempotency_keys (${IDEMPOTENCY_COLUMNS.replace(/\s+/g, " ")})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12)
    ON CONFLICT (account_id, mode, key) DO UPDATE SET
      method = EXCLUDED.method, path = EXCLUDED.path, fingerprint = EXCLUDED.fingerprint, state = EXCLUDED.state,
      response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body,
      response_headers = EXCLUDED.response_headers, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
    RETURNING 1
  )
  SELECT EXISTS (SELECT 1 FROM started) AS started, ${
  columnList(IDEMPOTENCY_COLUMNS).map((c) => `k.${c}`).join(", ")
}
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN idempotency_keys k
    ON NOT EXISTS (SELECT 1 FROM started) AND k.account_id = $1 AND k.mode = $2 AND k.key = $3`

const BEGIN_ATTEMPTS = 20

export const PostgresIdempotencyRepo = Layer.effect(IdempotencyRepo, Effect.map(makeSql, (q) => ({
  begin: (record) => {
    const params = [
      record.accountId, record.mode, record.key, record.method, record.path, record.fingerprint, record.state,
      record.responseStatus, record.responseBody,
      record.responseHeaders === null ? null : JSON.stringify(record.responseHeaders), record.createdAt, record.expiresAt
    ]
    const attempt = (n: number): Effect.Effect<IdempotencyBegin> =>
      Effect.flatMap(q.rows("IdempotencyRepo.begin", IDEMPOTENCY_BEGIN, params), (rs) => {
        const r = rs[0]
        if (r?.started === true) return Effect.succeed({ _tag: "Started" } as const)
        if (r !== undefined && r.account_id !== null) {
          return Effect.succeed({ _tag: "Existing", record: toIdempotency(r) } as const)
        }
        return n < BEGIN_ATTEMPTS
          ? attempt(n + 1)
          : refuse("IdempotencyRepo.begin", `no stable outcome for key '${record.key}' after ${n} attempts`)
      })
    return attempt(1)
  },
  finish: (accountId, mode, key, response) =>
    Effect.asVoid(q.rows(
      "IdempotencyRepo.finish",
      `UPDATE idempotency_keys SET state = 'done', response_status = $4, response_body = $5, response_headers = $6::jsonb
        WHERE account_id = $1 AND mode = $2 AND key = $3`,
      [accountId, mode, key, response.status, response.body, JSON.stringify(response.headers)]
    )),
  abandon: (accountId, mode, key) =>
    Effect.asVoid(q.rows(
      "IdempotencyRepo.abandon",
      `DELETE FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3`,
      [accountId, mode, key]
    )),
  get: (accountId, mode, key) =>
    Effect.map(
      q.rows(
        "IdempotencyRepo.get",
        `SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency_keys WHERE account_id = $1 AND mode = $2 AND key = $3`,
        [accountId, mode, key]
      ),
      (rs) => Option.map(Option.fromNullable(rs[0]), toIdempotency)
    ),
  // batches through the expires_at index
  purgeExpired: (now, limit) =>
    Effect.map(
      q.rows(
        "IdempotencyRepo.purgeExpired",
        `DELETE FROM idempotency_keys WHERE (account_id, mode, key) IN (
          SELECT account_id, mode, key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2
        ) RETURNING 1`,
        [now, limit]
      ),
      (rs) => rs.length
    )
})))

// ──────────────────────────────────────────────────────────────── lifecycle

export const PostgresLifecycleRepo = Layer.effect(LifecycleRepo, Effect.map(makeSql, (q) => ({
  sweepableFiles: (query) =>
    q.many(
      "LifecycleRepo.sweepableFiles",
      `SELECT ${FILE_COLUMNS} FROM files
        WHERE (status = 'uploading' AND upload_expires_at < $1)
           OR (status = 'ready' AND ready_at < $2)
           OR (status = 'rejected' AND rejected_at < $3)
        ORDER BY created_at, id LIMIT $4`,
      [query.uploadClosedBefore, query.readyBefore, query.rejectedBefore, query.limit],
      toFile
    ),
  validatingFiles: (limit) =>
    q.many(
      "LifecycleRepo.validatingFiles",
      `SELECT ${FILE_COLUMNS} FROM files WHERE status = 'validating' ORDER BY completed_at, id LIMIT $1`,
      [limit],
      toFile
    ),
  expiredOutputs: (query) =>
    q.many(
      "LifecycleRepo.expiredOutputs",
      `SELECT ${JOB_COLUMNS} FROM jobs
        WHERE status = 'succeeded' AND output_storage_key IS NOT NULL AND output_deleted_at IS NULL AND finished_at < $1
        ORDER BY finished_at, id LIMIT $2`,
      [query.finishedBefore, query.limit],
      toJob
    )
})))

/** Every repository port over the SqlClient in context. */
export const PostgresRepositories = Layer.mergeAll(
  Layer.provideMerge(Layer.merge(PostgresAccountRepo, PostgresKeyRepo), PostgresKeyCacheLive), PostgresFileRepo, PostgresJobRepo, PostgresWalletRepo, PostgresIdempotencyRepo,
  PostgresLifecycleRepo, PostgresUserRepositories, PostgresUsageRepo, PostgresPaymentRepositories, PostgresWebhookRepo
)
