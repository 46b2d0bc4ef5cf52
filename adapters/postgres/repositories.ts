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
import { Effect, Layer, Option } from "effect"
import { VALIDATION_WINDOW_MS } from "../../core/domain/limits.js"
import {
  AccountRepo, FileRepo, IdempotencyRepo, JobRepo, KeyRepo, WalletRepo, type IdempotencyBegin
} from "../../core/ports/repositories.js"
import { LifecycleRepo } from "../../core/ports/lifecycle.js"
import { layerPostgresUsageRepo } from "./usage.js"
import { layerPostgresUserRepositories } from "./users.js"
import { layerPostgresPaymentRepositories } from "./payments.js"
import { layerPostgresWebhookRepo } from "./webhooks.js"
import { PostgresKeyCache, layerPostgresKeyCache } from "./key-cache.js"
import { repositoryStatements } from "./statements.js"
import { orFault, refuse } from "./errors.js"
import { accounts, apiKeys, creditHolds, creditLots, files, idempotencyKeys, jobs, ledgerEntries } from "./rows.js"
import { statement, toInt, toIntOrNull } from "./table.js"

// ──────────────────────────────────────────────────────────────── accounts

const ACCOUNT_BY_ID = statement(["id"], (p) => `SELECT ${accounts.columns} FROM accounts WHERE id = ${p.id}`)

export const layerPostgresAccountRepo = Layer.effect(AccountRepo, Effect.gen(function*() {
  const q = yield* repositoryStatements
  const keyCache = yield* PostgresKeyCache
  return {
    insert: (account) => Effect.asVoid(q.rows("AccountRepo.insert", accounts.insert, accounts.params(account))),
    update: (account) =>
      q.one("AccountRepo.update", accounts.update, accounts.params(account), `no account '${account.id}' to update`).pipe(
        Effect.ensuring(keyCache.changedHere)
      ),
    get: (id) => q.first("AccountRepo.get", ACCOUNT_BY_ID, [id], accounts.decode)
  }
}))

// ──────────────────────────────────────────────────────────────── keys

const accountOfKey = accounts.joined("a")
/** Every keyed request: the key and its account in one round trip. */
const KEY_WITH_ACCOUNT = statement(["hash"], (p) =>
  `SELECT ${apiKeys.columnsOf("k")}, ${accountOfKey.columns}
  FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id WHERE k.hash = ${p.hash}`)
const KEY_BY_ID = statement(["id"], (p) => `SELECT ${apiKeys.columns} FROM api_keys WHERE id = ${p.id}`)
const KEY_BY_HASH = statement(["hash"], (p) => `SELECT ${apiKeys.columns} FROM api_keys WHERE hash = ${p.hash}`)
const KEYS_OF_ACCOUNT = statement(["accountId"], (p) =>
  `SELECT ${apiKeys.columns} FROM api_keys WHERE account_id = ${p.accountId} ORDER BY created_at, id`)
const KEY_MARK_USED = statement(["id", "lastUsedAt"], (p) => `UPDATE api_keys SET last_used_at = ${p.lastUsedAt} WHERE id = ${p.id} RETURNING 1`)

export const layerPostgresKeyRepo = Layer.effect(KeyRepo, Effect.gen(function*() {
  const q = yield* repositoryStatements
  const keyCache = yield* PostgresKeyCache
  return {
    insert: (key) => Effect.asVoid(q.rows("KeyRepo.insert", apiKeys.insert, apiKeys.params(key))),
    update: (key) =>
      q.one("KeyRepo.update", apiKeys.update, apiKeys.params(key), `no key '${key.id}' to update`).pipe(Effect.ensuring(keyCache.changedHere)),
    markUsed: (key) =>
      q.one("KeyRepo.markUsed", KEY_MARK_USED, [key.id, key.lastUsedAt], `no key '${key.id}' to mark used`).pipe(
        Effect.tap(() => keyCache.noteUsed(key))
      ),
    get: (id) => q.first("KeyRepo.get", KEY_BY_ID, [id], apiKeys.decode),
    findByHash: (hash) => q.first("KeyRepo.findByHash", KEY_BY_HASH, [hash], apiKeys.decode),
    // every keyed request: the key cache, or one round trip for the key and its account
    findByHashWithAccount: (hash) =>
      keyCache.lookup(
        hash,
        q.first("KeyRepo.findByHashWithAccount", KEY_WITH_ACCOUNT, [hash], (r) => ({
          key: apiKeys.decode(r),
          account: r.a_id === null || r.a_id === undefined ? Option.none() : Option.some(accountOfKey.decode(r))
        }))
      ),
    listByAccount: (accountId) => q.many("KeyRepo.listByAccount", KEYS_OF_ACCOUNT, [accountId], apiKeys.decode)
  }
}))

// ──────────────────────────────────────────────────────────────── files

const FILE_INSERT_NEW = `${files.insert}
  ON CONFLICT (id) DO NOTHING
  RETURNING 1`
const FILE_BY_ID = statement(["id"], (p) => `SELECT ${files.columns} FROM files WHERE id = ${p.id}`)
/** The deleted file's completion keeps counting against the validations quota (older ones go). */
const FILE_DELETE = statement(["id", "window"], (p) =>
  `WITH gone AS (DELETE FROM files WHERE id = ${p.id} RETURNING account_id, mode, completed_at),
    pruned AS (DELETE FROM deleted_file_validations
      WHERE completed_at < (SELECT completed_at FROM gone) - ${p.window})
  INSERT INTO deleted_file_validations (account_id, mode, completed_at)
    SELECT account_id, mode, completed_at FROM gone WHERE completed_at IS NOT NULL`)
const FILES_OPEN_UPLOADS = statement(["accountId", "mode", "now"], (p) =>
  `SELECT count(*) AS n FROM files
    WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND status = 'uploading' AND upload_expires_at > ${p.now}`)
const FILES_RETAINED_BYTES = statement(["accountId", "mode"], (p) =>
  `SELECT COALESCE(sum(size_bytes), 0) AS bytes FROM files
    WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND status <> 'rejected'`)
const FILES_VALIDATED_SINCE = statement(["accountId", "mode", "since"], (p) =>
  `SELECT count(*) AS n, min(completed_at) AS earliest FROM (
      SELECT completed_at FROM files
        WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND completed_at IS NOT NULL AND completed_at >= ${p.since}
      UNION ALL
      SELECT completed_at FROM deleted_file_validations
        WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND completed_at >= ${p.since}
    ) AS validations`)

export const layerPostgresFileRepo = Layer.effect(FileRepo, Effect.map(repositoryStatements, (q) => ({
  insert: (file) => Effect.asVoid(q.rows("FileRepo.insert", files.insert, files.params(file))),
  insertNew: (file) => Effect.map(q.rows("FileRepo.insertNew", FILE_INSERT_NEW, files.params(file)), (rs) => rs.length === 1),
  update: (file) => q.one("FileRepo.update", files.update, files.params(file), `no file '${file.id}' to update`),
  get: (id) => q.first("FileRepo.get", FILE_BY_ID, [id], files.decode),
  delete: (id) => Effect.asVoid(q.rows("FileRepo.delete", FILE_DELETE, [id, VALIDATION_WINDOW_MS])),
  countOpenUploads: (accountId, mode, now) =>
    Effect.map(q.rows("FileRepo.countOpenUploads", FILES_OPEN_UPLOADS, [accountId, mode, now]), (rs) => toInt(rs[0]?.n ?? 0, "count")),
  retainedBytes: (accountId, mode) =>
    Effect.map(
      q.rows("FileRepo.retainedBytes", FILES_RETAINED_BYTES, [accountId, mode]),
      (rs) => toInt(rs[0]?.bytes ?? 0, "sum(size_bytes)")
    ),
  validationsSince: (accountId, mode, since) =>
    Effect.map(
      q.rows("FileRepo.validationsSince", FILES_VALIDATED_SINCE, [accountId, mode, since]),
      (rs) => ({ count: toInt(rs[0]?.n ?? 0, "count"), earliest: toIntOrNull(rs[0]?.earliest ?? null, "min(completed_at)") })
    )
})))

// ──────────────────────────────────────────────────────────────── jobs

/**
 * …while no enabled endpoint of the job's account and mode subscribes to the event
 * (core/rules/webhooks.ts `subscribes`). The SELECT's parameters take the columns' types.
 */
const JOB_INSERT_UNLESS_SUBSCRIBED = statement(["event"], (p) =>
  `INSERT INTO jobs (${jobs.columns}) SELECT ${jobs.values}
  WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.account_id = ${jobs.placeholder("account_id")}
    AND w.mode = ${jobs.placeholder("mode")} AND w.status = 'enabled' AND w.events ? ${p.event})
  ON CONFLICT (id) DO NOTHING
  RETURNING 1`, jobs)
const JOB_INSERT_NEW = `${jobs.insert}
  ON CONFLICT (id) DO NOTHING
  RETURNING 1`
const JOB_BY_ID = statement(["id"], (p) => `SELECT ${jobs.columns} FROM jobs WHERE id = ${p.id}`)
const JOB_LOCK_BY_ID = statement(["id"], (p) => `SELECT ${jobs.columns} FROM jobs WHERE id = ${p.id} FOR UPDATE`)
const JOBS_ACTIVE_FOR_FILE = statement(["fileId"], (p) =>
  `SELECT count(*) AS n FROM jobs WHERE file_id = ${p.fileId} AND status IN ('queued', 'processing')`)
const JOB_NEXT_QUEUED = statement(["mode"], (p) =>
  `SELECT ${jobs.columns} FROM jobs WHERE status = 'queued' AND mode = ${p.mode}
    ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`)
const JOBS_LAPSED_LEASES = statement(["now", "limit"], (p) =>
  `SELECT ${jobs.columns} FROM jobs WHERE status = 'processing' AND lease_expires_at < ${p.now}
    ORDER BY lease_expires_at, id LIMIT ${p.limit}`)

/**
 * A page of an account's jobs, one text per combination of filters (by status, by model, after
 * a cursor), each with its parameters in the order `list` pushes them.
 */
const jobListText = (status: boolean, model: boolean, after: boolean) => {
  const names = ["accountId", "mode", ...(status ? ["status"] : []), ...(model ? ["model"] : []), ...(after ? ["afterCreatedAt", "afterId"] : []), "limit"]
  return statement(names, (p) => {
    const where = [`account_id = ${p.accountId}`, `mode = ${p.mode}`]
    if (status) where.push(`status = ${p.status}`)
    if (model) where.push(`model = ${p.model}`)
    // ids are COLLATE "C": the tie-break is byte order, as in JavaScript
    if (after) where.push(`(created_at, id) < (${p.afterCreatedAt}::bigint, ${p.afterId}::text COLLATE "C")`)
    return `SELECT ${jobs.columns} FROM jobs WHERE ${where.join(" AND ")}
    ORDER BY created_at DESC, id DESC LIMIT ${p.limit}`
  })
}
/** Indexed by status + 2 × model + 4 × after (1 when that filter is there). */
const JOB_LISTS = Array.from({ length: 8 }, (_, i) => jobListText((i & 1) !== 0, (i & 2) !== 0, (i & 4) !== 0))

export const layerPostgresJobRepo = Layer.effect(JobRepo, Effect.map(repositoryStatements, (q) => ({
  insert: (job) => Effect.asVoid(q.rows("JobRepo.insert", jobs.insert, jobs.params(job))),
  insertNew: (job) => Effect.map(q.rows("JobRepo.insertNew", JOB_INSERT_NEW, jobs.params(job)), (rs) => rs.length === 1),
  insertUnlessSubscribed: (job, event) => {
    const params = jobs.params(job)
    params.push(event)
    return Effect.map(q.rows("JobRepo.insertUnlessSubscribed", JOB_INSERT_UNLESS_SUBSCRIBED, params), (rs) => rs.length === 1)
  },
  update: (job) => q.one("JobRepo.update", jobs.update, jobs.params(job), `no job '${job.id}' to update`),
  get: (id) => q.first("JobRepo.get", JOB_BY_ID, [id], jobs.decode),
  lockById: (id) => q.first("JobRepo.lockById", JOB_LOCK_BY_ID, [id], jobs.decode),
  list: (query) => {
    const params: Array<unknown> = [query.accountId, query.mode]
    if (query.status !== undefined) params.push(query.status)
    if (query.model !== undefined) params.push(query.model)
    if (query.after !== undefined) params.push(query.after.createdAt, query.after.id)
    params.push(query.limit)
    const text = JOB_LISTS[(query.status !== undefined ? 1 : 0) + (query.model !== undefined ? 2 : 0) + (query.after !== undefined ? 4 : 0)]!
    return q.many("JobRepo.list", text, params, jobs.decode)
  },
  countActiveForFile: (fileId) =>
    Effect.map(q.rows("JobRepo.countActiveForFile", JOBS_ACTIVE_FOR_FILE, [fileId]), (rs) => toInt(rs[0]?.n ?? 0, "count")),
  lockNextQueued: (mode) => q.first("JobRepo.lockNextQueued", JOB_NEXT_QUEUED, [mode], jobs.decode),
  lapsedLeases: (now, limit) => q.many("JobRepo.lapsedLeases", JOBS_LAPSED_LEASES, [now, limit], jobs.decode)
})))

// ──────────────────────────────────────────────────────────────── wallet

const LOT_UPSERT = `${creditLots.insert}
  ON CONFLICT (id) DO UPDATE SET remaining_micros = EXCLUDED.remaining_micros, expired = EXCLUDED.expired
  WHERE credit_lots.account_id = EXCLUDED.account_id
  RETURNING 1`
const HOLD_UPSERT = `${creditHolds.insert}
  ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, resolved_at = EXCLUDED.resolved_at
  WHERE credit_holds.status = 'open' AND credit_holds.account_id = EXCLUDED.account_id
  RETURNING 1`
/** The row exists for every account that ever locked, so there is always something to lock. */
const WALLET_ENSURE = statement(["accountId"], (p) => `INSERT INTO wallets (account_id) VALUES (${p.accountId}) ON CONFLICT (account_id) DO NOTHING`)
const WALLET_LOCK = statement(["accountId"], (p) => `SELECT last_seq, balance, reserved FROM wallets WHERE account_id = ${p.accountId} FOR UPDATE`)
const LOTS_WITH_CREDIT = statement(["accountId"], (p) =>
  `SELECT ${creditLots.columns} FROM credit_lots WHERE account_id = ${p.accountId} AND remaining_micros > 0`)
const HOLDS_OPEN = statement(["accountId"], (p) =>
  `SELECT ${creditHolds.columns} FROM credit_holds WHERE account_id = ${p.accountId} AND status = 'open'`)
const HOLD_OF_JOB = statement(["jobId"], (p) => `SELECT ${creditHolds.columns} FROM credit_holds WHERE job_id = ${p.jobId}`)
const LOTS_UNEXPIRED = statement(["accountId", "now", "limit"], (p) =>
  `SELECT ${creditLots.columns} FROM credit_lots
    WHERE account_id = ${p.accountId} AND NOT expired AND expires_at > ${p.now}
    ORDER BY expires_at, id LIMIT ${p.limit}`)
const LOTS_NEWEST_FIRST = statement(["accountId", "limit"], (p) =>
  `SELECT ${creditLots.columns} FROM credit_lots WHERE account_id = ${p.accountId} ORDER BY purchased_at DESC, id DESC LIMIT ${p.limit}`)
const LEDGER_PAGE = statement(["accountId", "limit"], (p) =>
  `SELECT ${ledgerEntries.columns} FROM ledger_entries WHERE account_id = ${p.accountId} ORDER BY seq DESC LIMIT ${p.limit}`)
const LEDGER_PAGE_BEFORE = statement(["accountId", "limit", "beforeSeq"], (p) =>
  `SELECT ${ledgerEntries.columns} FROM ledger_entries WHERE account_id = ${p.accountId} AND seq < ${p.beforeSeq}
    ORDER BY seq DESC LIMIT ${p.limit}`)
const LEDGER_OF_JOB = statement(["jobId"], (p) =>
  `SELECT ${ledgerEntries.columns} FROM ledger_entries WHERE job_id = ${p.jobId} ORDER BY created_at, seq`)

export const layerPostgresWalletRepo = Layer.effect(WalletRepo, Effect.map(repositoryStatements, (q) => ({
  lock: (accountId) =>
    Effect.gen(function*() {
      yield* q.rows("WalletRepo.lock", WALLET_ENSURE, [accountId])
      const wallet = yield* q.rows("WalletRepo.lock", WALLET_LOCK, [accountId])
      const w = wallet[0]
      if (w === undefined) return yield* refuse("WalletRepo.lock", `the wallet row of '${accountId}' vanished`)
      // read after the lock: each statement sees what the previous holder committed
      const lots = yield* q.many("WalletRepo.lock", LOTS_WITH_CREDIT, [accountId], creditLots.decode)
      const openHolds = yield* q.many("WalletRepo.lock", HOLDS_OPEN, [accountId], creditHolds.decode)
      return {
        accountId,
        lots,
        openHolds,
        lastSeq: toInt(w.last_seq, "last_seq"),
        balance: toInt(w.balance, "balance"),
        reserved: toInt(w.reserved, "reserved")
      }
    }),
  apply: (change) =>
    q.sql.withTransaction(Effect.gen(function*() {
      for (const lot of change.lots) {
        yield* q.one("WalletRepo.apply", LOT_UPSERT, creditLots.params(lot), `lot '${lot.id}' belongs to another account`)
      }
      for (const hold of change.holds) {
        yield* q.one(
          "WalletRepo.apply",
          HOLD_UPSERT,
          creditHolds.params(hold),
          `hold '${hold.id}' of job '${hold.jobId}' is no longer open (resolved already, or another account's)`
        )
      }
      for (const entry of change.entries) {
        yield* q.rows("WalletRepo.apply", ledgerEntries.insert, ledgerEntries.params(entry))
      }
    })).pipe(orFault("WalletRepo.apply")),
  holdForJob: (jobId) => q.first("WalletRepo.holdForJob", HOLD_OF_JOB, [jobId], creditHolds.decode),
  unexpiredLots: (accountId, now, limit) => q.many("WalletRepo.unexpiredLots", LOTS_UNEXPIRED, [accountId, now, limit], creditLots.decode),
  listLots: (accountId, limit) => q.many("WalletRepo.listLots", LOTS_NEWEST_FIRST, [accountId, limit], creditLots.decode),
  ledgerPage: (query) =>
    query.beforeSeq === undefined
      ? q.many("WalletRepo.ledgerPage", LEDGER_PAGE, [query.accountId, query.limit], ledgerEntries.decode)
      : q.many("WalletRepo.ledgerPage", LEDGER_PAGE_BEFORE, [query.accountId, query.limit, query.beforeSeq], ledgerEntries.decode),
  ledgerForJob: (jobId) => q.many("WalletRepo.ledgerForJob", LEDGER_OF_JOB, [jobId], ledgerEntries.decode)
})))

// ──────────────────────────────────────────────────────────────── idempotency

/**
 * One statement: insert the running record, or take over an expired one (or a running one begun
 * before the takeover instant, the statement's own last parameter); when neither happens,
 * return the record that is there. If that record was committed after the statement's snapshot
 * (a concurrent begin won) or abandoned meanwhile, the statement sees neither and is retried.
 */
const IDEMPOTENCY_BEGIN = `WITH started AS (
    ${idempotencyKeys.insert}
    ON CONFLICT (account_id, mode, key) DO UPDATE SET ${idempotencyKeys.setExcluded}
    WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
       OR (idempotency_keys.state = 'running' AND idempotency_keys.created_at < $${idempotencyKeys.width + 1})
    RETURNING 1
  )
  SELECT EXISTS (SELECT 1 FROM started) AS started, ${idempotencyKeys.columnsOf("k")}
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN idempotency_keys k
    ON NOT EXISTS (SELECT 1 FROM started) AND k.account_id = ${idempotencyKeys.placeholder("account_id")}
    AND k.mode = ${idempotencyKeys.placeholder("mode")} AND k.key = ${idempotencyKeys.placeholder("key")}`
const IDEMPOTENCY_FINISH = statement(["accountId", "mode", "key", "status", "body", "headers"], (p) =>
  `UPDATE idempotency_keys SET state = 'done', response_status = ${p.status}, response_body = ${p.body}, response_headers = ${p.headers}::jsonb
    WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND key = ${p.key}`)
const IDEMPOTENCY_ABANDON = statement(["accountId", "mode", "key"], (p) =>
  `DELETE FROM idempotency_keys WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND key = ${p.key}`)
const IDEMPOTENCY_GET = statement(["accountId", "mode", "key"], (p) =>
  `SELECT ${idempotencyKeys.columns} FROM idempotency_keys WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND key = ${p.key}`)
/** Batches through the expires_at index. */
const IDEMPOTENCY_PURGE = statement(["now", "limit"], (p) =>
  `DELETE FROM idempotency_keys WHERE (account_id, mode, key) IN (
    SELECT account_id, mode, key FROM idempotency_keys WHERE expires_at <= ${p.now} LIMIT ${p.limit}
  ) RETURNING 1`)

const BEGIN_ATTEMPTS = 20

export const layerPostgresIdempotencyRepo = Layer.effect(IdempotencyRepo, Effect.map(repositoryStatements, (q) => ({
  begin: (record, options) => {
    // no takeover unless asked: an instant before every record
    const params = [...idempotencyKeys.params(record), options?.takeOverRunningBefore ?? Number.MIN_SAFE_INTEGER]
    const attempt = (n: number): Effect.Effect<IdempotencyBegin> =>
      Effect.flatMap(q.rows("IdempotencyRepo.begin", IDEMPOTENCY_BEGIN, params), (rs) => {
        const r = rs[0]
        if (r?.started === true) return Effect.succeed({ _tag: "Started" } as const)
        if (r !== undefined && r.account_id !== null) {
          return Effect.succeed({ _tag: "Existing", record: idempotencyKeys.decode(r) } as const)
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
      IDEMPOTENCY_FINISH,
      [accountId, mode, key, response.status, response.body, JSON.stringify(response.headers)]
    )),
  abandon: (accountId, mode, key) => Effect.asVoid(q.rows("IdempotencyRepo.abandon", IDEMPOTENCY_ABANDON, [accountId, mode, key])),
  get: (accountId, mode, key) => q.first("IdempotencyRepo.get", IDEMPOTENCY_GET, [accountId, mode, key], idempotencyKeys.decode),
  purgeExpired: (now, limit) => Effect.map(q.rows("IdempotencyRepo.purgeExpired", IDEMPOTENCY_PURGE, [now, limit]), (rs) => rs.length)
})))

// ──────────────────────────────────────────────────────────────── lifecycle

const FILES_SWEEPABLE = statement(["uploadClosedBefore", "readyBefore", "rejectedBefore", "limit"], (p) =>
  `SELECT ${files.columns} FROM files
    WHERE (status = 'uploading' AND upload_expires_at < ${p.uploadClosedBefore})
       OR (status = 'ready' AND ready_at < ${p.readyBefore})
       OR (status = 'rejected' AND rejected_at < ${p.rejectedBefore})
    ORDER BY created_at, id LIMIT ${p.limit}`)
const FILES_VALIDATING = statement(["limit"], (p) =>
  `SELECT ${files.columns} FROM files WHERE status = 'validating' ORDER BY completed_at, id LIMIT ${p.limit}`)
const JOBS_EXPIRED_OUTPUTS = statement(["finishedBefore", "limit"], (p) =>
  `SELECT ${jobs.columns} FROM jobs
    WHERE status = 'succeeded' AND output_storage_key IS NOT NULL AND output_deleted_at IS NULL AND finished_at < ${p.finishedBefore}
    ORDER BY finished_at, id LIMIT ${p.limit}`)

export const layerPostgresLifecycleRepo = Layer.effect(LifecycleRepo, Effect.map(repositoryStatements, (q) => ({
  sweepableFiles: (query) =>
    q.many(
      "LifecycleRepo.sweepableFiles",
      FILES_SWEEPABLE,
      [query.uploadClosedBefore, query.readyBefore, query.rejectedBefore, query.limit],
      files.decode
    ),
  validatingFiles: (limit) => q.many("LifecycleRepo.validatingFiles", FILES_VALIDATING, [limit], files.decode),
  expiredOutputs: (query) => q.many("LifecycleRepo.expiredOutputs", JOBS_EXPIRED_OUTPUTS, [query.finishedBefore, query.limit], jobs.decode)
})))

/** Every repository port over the SqlClient in context. */
export const layerPostgresRepositories = Layer.mergeAll(
  Layer.provideMerge(Layer.merge(layerPostgresAccountRepo, layerPostgresKeyRepo), layerPostgresKeyCache), layerPostgresFileRepo, layerPostgresJobRepo, layerPostgresWalletRepo, layerPostgresIdempotencyRepo,
  layerPostgresLifecycleRepo, layerPostgresUserRepositories, layerPostgresUsageRepo, layerPostgresPaymentRepositories, layerPostgresWebhookRepo
)
