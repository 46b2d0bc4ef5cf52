/** In-memory implementations of every repository port, over one MemoryDb. */
import { Effect, HashMap, Layer, Option } from "effect"
import { VALIDATION_WINDOW_MS } from "../../core/domain/limits.js"
import type { JobRecord } from "../../core/domain/records.js"
import { IdempotencyRecord, KeyRecord } from "../../core/domain/records.js"
import {
  AccountRepo, FileRepo, IdempotencyRepo, JobRepo, KeyRepo, WalletRepo, type IdempotencyBegin, type JobListQuery
} from "../../core/ports/repositories.js"
import { LifecycleRepo } from "../../core/ports/lifecycle.js"
import { JobRules } from "../../core/rules/index.js"
import * as WebhookRules from "../../core/rules/webhooks.js"
import type { WebhookEventType } from "../../core/domain/enums.js"
import { MemoryDb, type MemoryState } from "./store.js"

const values = <V>(map: HashMap.HashMap<string, V>): Array<V> => [...HashMap.values(map)]

const newestFirst = (a: JobRecord, b: JobRecord) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

const put = <K extends keyof MemoryState>(table: K, id: string, value: unknown) => (state: MemoryState) =>
  [undefined, { ...state, [table]: HashMap.set(state[table] as HashMap.HashMap<string, unknown>, id, value) }] as const

/** Whether an enabled endpoint of the job's account and mode subscribes to the event (core/rules/webhooks.ts). */
const subscribed = (s: MemoryState, job: JobRecord, event: WebhookEventType) =>
  values(s.webhookEndpoints).some((e) => e.accountId === job.accountId && e.mode === job.mode && WebhookRules.subscribes(e, event))

export const layerMemoryAccountRepo = Layer.effect(AccountRepo, Effect.map(MemoryDb, (db) => ({
  insert: (account) => db.modify(put("accounts", account.id, account)),
  update: (account) => db.modify(put("accounts", account.id, account)),
  get: (id) => db.read((s) => HashMap.get(s.accounts, id))
})))

export const layerMemoryKeyRepo = Layer.effect(KeyRepo, Effect.map(MemoryDb, (db) => ({
  insert: (key) => db.modify(put("keys", key.id, key)),
  update: (key) => db.modify(put("keys", key.id, key)),
  markUsed: (key) =>
    db.modify((s) => {
      const stored = HashMap.get(s.keys, key.id)
      if (Option.isNone(stored)) return [undefined, s] as const
      return put("keys", key.id, new KeyRecord({ ...stored.value, lastUsedAt: key.lastUsedAt }))(s)
    }),
  get: (id) => db.read((s) => HashMap.get(s.keys, id)),
  findByHash: (hash) => db.read((s) => Option.fromNullable(values(s.keys).find((k) => k.hash === hash))),
  findByHashWithAccount: (hash) =>
    db.read((s) =>
      Option.map(Option.fromNullable(values(s.keys).find((k) => k.hash === hash)), (key) => ({ key, account: HashMap.get(s.accounts, key.accountId) }))),
  listByAccount: (accountId) =>
    db.read((s) => values(s.keys).filter((k) => k.accountId === accountId).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)))
})))

export const layerMemoryFileRepo = Layer.effect(FileRepo, Effect.map(MemoryDb, (db) => {
  const ofAccount = (s: MemoryState, accountId: string, mode: string) =>
    values(s.files).filter((f) => f.accountId === accountId && f.mode === mode)
  return {
    insert: (file) => db.modify(put("files", file.id, file)),
    insertNew: (file) => db.modify((s) => (HashMap.has(s.files, file.id) ? [false, s] : [true, put("files", file.id, file)(s)[1]])),
    update: (file) => db.modify(put("files", file.id, file)),
    get: (id) => db.read((s) => HashMap.get(s.files, id)),
    delete: (id) => db.modify((s) => {
      const gone = Option.getOrNull(HashMap.get(s.files, id))
      const completedAt = gone?.completedAt ?? null
      const deletedValidations = gone === null || completedAt === null ? s.deletedValidations : [
        ...s.deletedValidations.filter((v) => v.completedAt >= completedAt - VALIDATION_WINDOW_MS),
        { accountId: gone.accountId, mode: gone.mode, completedAt }
      ]
      return [undefined, { ...s, files: HashMap.remove(s.files, id), deletedValidations }] as const
    }),
    countOpenUploads: (accountId, mode, now) =>
      db.read((s) => ofAccount(s, accountId, mode).filter((f) => f.status === "uploading" && f.uploadExpiresAt > now).length),
    retainedBytes: (accountId, mode) =>
      db.read((s) => ofAccount(s, accountId, mode).filter((f) => f.status !== "rejected").reduce((n, f) => n + f.sizeBytes, 0)),
    validationsSince: (accountId, mode, since) =>
      db.read((s) => {
        const deleted = s.deletedValidations.filter((v) => v.accountId === accountId && v.mode === mode).map((v) => v.completedAt)
        const times = [...ofAccount(s, accountId, mode).map((f) => f.completedAt), ...deleted]
          .filter((t): t is number => t !== null && t >= since)
        return { count: times.length, earliest: times.length === 0 ? null : Math.min(...times) }
      })
  }
}))

const matches = (query: JobListQuery) => (job: JobRecord) =>
  job.accountId === query.accountId && job.mode === query.mode &&
  (query.status === undefined || job.status === query.status) &&
  (query.model === undefined || job.model === query.model) &&
  (query.after === undefined || job.createdAt < query.after.createdAt ||
    (job.createdAt === query.after.createdAt && job.id < query.after.id))

export const layerMemoryJobRepo = Layer.effect(JobRepo, Effect.map(MemoryDb, (db) => ({
  insert: (job) => db.modify(put("jobs", job.id, job)),
  insertNew: (job) => db.modify((s) => (HashMap.has(s.jobs, job.id) ? [false, s] : [true, put("jobs", job.id, job)(s)[1]])),
  insertUnlessSubscribed: (job, event) =>
    db.modify((s) => (subscribed(s, job, event) || HashMap.has(s.jobs, job.id) ? [false, s] : [true, put("jobs", job.id, job)(s)[1]])),
  update: (job) => db.modify(put("jobs", job.id, job)),
  get: (id) => db.read((s) => HashMap.get(s.jobs, id)),
  // the store's single lock already makes the holder of a transaction the only writer
  lockById: (id) => db.read((s) => HashMap.get(s.jobs, id)),
  list: (query) => db.read((s) => values(s.jobs).filter(matches(query)).sort(newestFirst).slice(0, query.limit)),
  countActiveForFile: (fileId) =>
    db.read((s) => values(s.jobs).filter((j) => j.fileId === fileId && JobRules.isActive(j.status)).length),
  lockNextQueued: (mode) =>
    db.read((s) =>
      Option.fromNullable(
        values(s.jobs)
          .filter((j) => j.status === "queued" && j.mode === mode)
          .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))[0]
      )),
  lapsedLeases: (now, limit) =>
    db.read((s) =>
      values(s.jobs)
        .filter((j) => j.status === "processing" && j.leaseExpiresAt !== null && j.leaseExpiresAt < now)
        .sort((a, b) => a.leaseExpiresAt! - b.leaseExpiresAt!)
        .slice(0, limit))
})))

export const layerMemoryWalletRepo = Layer.effect(WalletRepo, Effect.map(MemoryDb, (db) => ({
  lock: (accountId) =>
    db.read((s) => {
      const ledger = Option.getOrElse(HashMap.get(s.ledger, accountId), () => [])
      const last = ledger[ledger.length - 1]
      return {
        accountId,
        lots: values(s.lots).filter((l) => l.accountId === accountId && l.remainingMicros > 0),
        openHolds: values(s.holds).filter((h) => h.accountId === accountId && h.status === "open"),
        lastSeq: last?.seq ?? 0,
        balance: last?.balanceAfter ?? 0,
        reserved: last?.reservedAfter ?? 0
      }
    }),
  apply: (change) =>
    db.modify((s) => {
      let lots = s.lots
      for (const lot of change.lots) lots = HashMap.set(lots, lot.id, lot)
      let holds = s.holds
      for (const hold of change.holds) {
        const existing = HashMap.get(holds, hold.id)
        // a resolved hold never changes again: the database's CHECK does the same in Postgres
        if (Option.isSome(existing) && existing.value.status !== "open") {
          throw new Error(`hold ${hold.id} is already ${existing.value.status}`)
        }
        holds = HashMap.set(holds, hold.id, hold)
      }
      let ledger = s.ledger
      for (const entry of change.entries) {
        const list = Option.getOrElse(HashMap.get(ledger, entry.accountId), () => [])
        const last = list[list.length - 1]
        if (entry.seq !== (last?.seq ?? 0) + 1) throw new Error(`ledger entry ${entry.id} out of sequence`)
        ledger = HashMap.set(ledger, entry.accountId, [...list, entry])
      }
      return [undefined, { ...s, lots, holds, ledger }] as const
    }),
  holdForJob: (jobId) => db.read((s) => Option.fromNullable(values(s.holds).find((h) => h.jobId === jobId))),
  unexpiredLots: (accountId, now, limit) =>
    db.read((s) =>
      values(s.lots)
        .filter((l) => l.accountId === accountId && !l.expired && l.expiresAt > now)
        .sort((a, b) => a.expiresAt - b.expiresAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit)),
  listLots: (accountId, limit) =>
    db.read((s) =>
      values(s.lots)
        .filter((l) => l.accountId === accountId)
        .sort((a, b) => b.purchasedAt - a.purchasedAt || b.id.localeCompare(a.id))
        .slice(0, limit)),
  ledgerPage: (query) =>
    db.read((s) =>
      [...Option.getOrElse(HashMap.get(s.ledger, query.accountId), () => [])]
        .filter((e) => query.beforeSeq === undefined || e.seq < query.beforeSeq)
        .reverse()
        .slice(0, query.limit)),
  ledgerForJob: (jobId) =>
    db.read((s) => values(s.ledger).flat().filter((e) => e.jobId === jobId).sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq))
})))

const idempotencyId = (accountId: string, mode: string, key: string) => `${accountId}\u0000${mode}\u0000${key}`

export const layerMemoryIdempotencyRepo = Layer.effect(IdempotencyRepo, Effect.map(MemoryDb, (db) => ({
  begin: (record, options) =>
    db.modify((s): readonly [IdempotencyBegin, MemoryState] => {
      const id = idempotencyId(record.accountId, record.mode, record.key)
      const existing = HashMap.get(s.idempotency, id)
      const stale = (r: IdempotencyRecord) =>
        r.state === "running" && options?.takeOverRunningBefore !== undefined && r.createdAt < options.takeOverRunningBefore
      if (Option.isSome(existing) && existing.value.expiresAt > record.createdAt && !stale(existing.value)) {
        return [{ _tag: "Existing", record: existing.value }, s] as const
      }
      return [{ _tag: "Started" }, { ...s, idempotency: HashMap.set(s.idempotency, id, record) }] as const
    }),
  finish: (accountId, mode, key, response) =>
    db.modify((s) => {
      const id = idempotencyId(accountId, mode, key)
      const existing = HashMap.get(s.idempotency, id)
      if (Option.isNone(existing)) return [undefined, s] as const
      const done = new IdempotencyRecord({
        ...existing.value,
        state: "done",
        responseStatus: response.status,
        responseBody: response.body,
        responseHeaders: response.headers
      })
      return [undefined, { ...s, idempotency: HashMap.set(s.idempotency, id, done) }] as const
    }),
  abandon: (accountId, mode, key) =>
    db.modify((s) => [undefined, { ...s, idempotency: HashMap.remove(s.idempotency, idempotencyId(accountId, mode, key)) }] as const),
  get: (accountId, mode, key) => db.read((s) => HashMap.get(s.idempotency, idempotencyId(accountId, mode, key))),
  purgeExpired: (now, limit) =>
    db.modify((s) => {
      const expired = [...HashMap.entries(s.idempotency)].filter(([, record]) => record.expiresAt <= now).slice(0, limit)
      let idempotency = s.idempotency
      for (const [id] of expired) idempotency = HashMap.remove(idempotency, id)
      return [expired.length, { ...s, idempotency }] as const
    })
})))

/** Every repository port and the transactor over one fresh in-memory database. */
export const layerMemoryRepositories = Layer.mergeAll(
  layerMemoryAccountRepo, layerMemoryKeyRepo, layerMemoryFileRepo, layerMemoryJobRepo, layerMemoryWalletRepo, layerMemoryIdempotencyRepo
)

export const layerMemoryLifecycleRepo = Layer.effect(LifecycleRepo, Effect.map(MemoryDb, (db) => ({
  sweepableFiles: (query) =>
    db.read((s) =>
      values(s.files)
        .filter((f) =>
          (f.status === "uploading" && f.uploadExpiresAt < query.uploadClosedBefore) ||
          (f.status === "ready" && f.readyAt !== null && f.readyAt < query.readyBefore) ||
          (f.status === "rejected" && f.rejectedAt !== null && f.rejectedAt < query.rejectedBefore))
        .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
        .slice(0, query.limit)),
  validatingFiles: (limit) =>
    db.read((s) =>
      values(s.files)
        .filter((f) => f.status === "validating")
        .sort((a, b) => (a.completedAt ?? 0) - (b.completedAt ?? 0) || a.id.localeCompare(b.id))
        .slice(0, limit)),
  expiredOutputs: (query) =>
    db.read((s) =>
      values(s.jobs)
        .filter((j) => j.status === "succeeded" && j.output !== null && j.output.deletedAt === null &&
          j.finishedAt !== null && j.finishedAt < query.finishedBefore)
        .sort((a, b) => a.finishedAt! - b.finishedAt! || a.id.localeCompare(b.id))
        .slice(0, query.limit))
})))
