/**
 * Repository ports. Operations fail only with defects (infrastructure faults); domain rules
 * live in core/rules and core/wallet, never here. Every adapter passes test/contracts.
 */
import { Context, Effect, Option } from "effect"
import type {
  AccountRecord, FileRecord, HoldRecord, IdempotencyRecord, JobRecord, KeyRecord,
  LedgerEntryRecord, LotRecord
} from "../domain/records.js"
import type { JobStatus, Mode, WebhookEventType } from "../domain/enums.js"

export class AccountRepo extends Context.Tag("hush/AccountRepo")<AccountRepo, {
  readonly insert: (account: AccountRecord) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Option.Option<AccountRecord>>
  readonly update: (account: AccountRecord) => Effect.Effect<void>
}>() {}

export class KeyRepo extends Context.Tag("hush/KeyRepo")<KeyRepo, {
  readonly insert: (key: KeyRecord) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Option.Option<KeyRecord>>
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<KeyRecord>>
  /** The key with that hash and its account (None when the account is gone), in one round trip. */
  readonly findByHashWithAccount: (hash: string) =>
    Effect.Effect<Option.Option<{ readonly key: KeyRecord; readonly account: Option.Option<AccountRecord> }>>
  /** Oldest first. */
  readonly listByAccount: (accountId: string) => Effect.Effect<ReadonlyArray<KeyRecord>>
  readonly update: (key: KeyRecord) => Effect.Effect<void>
  /** Records that the key was used at `key.lastUsedAt` (nothing else of it changes). */
  readonly markUsed: (key: KeyRecord) => Effect.Effect<void>
}>() {}

export class FileRepo extends Context.Tag("hush/FileRepo")<FileRepo, {
  readonly insert: (file: FileRecord) => Effect.Effect<void>
  /** Inserts the file unless one with its id exists: false, and nothing written, then (as JobRepo.insertNew). */
  readonly insertNew: (file: FileRecord) => Effect.Effect<boolean>
  readonly get: (id: string) => Effect.Effect<Option.Option<FileRecord>>
  readonly update: (file: FileRecord) => Effect.Effect<void>
  readonly delete: (id: string) => Effect.Effect<void>
  /** Files still `uploading` whose window is open at `now`. */
  readonly countOpenUploads: (accountId: string, mode: Mode, now: number) => Effect.Effect<number>
  /** Declared bytes of every stored file that is not rejected. */
  readonly retainedBytes: (accountId: string, mode: Mode) => Effect.Effect<number>
  /**
   * Completes accepted (validations started) at or after `since`, and the earliest of them.
   * Deleting a file does not give its validation back: a deleted file's completion keeps
   * counting for at least VALIDATION_WINDOW_MS after it.
   */
  readonly validationsSince: (accountId: string, mode: Mode, since: number) =>
    Effect.Effect<{ readonly count: number; readonly earliest: number | null }>
}>() {}

export interface JobListQuery {
  readonly accountId: string
  readonly mode: Mode
  readonly status?: JobStatus | undefined
  readonly model?: string | undefined
  readonly limit: number
  /** Keyset position: return jobs strictly older than this (createdAt desc, id desc). */
  readonly after?: { readonly createdAt: number; readonly id: string } | undefined
}

export class JobRepo extends Context.Tag("hush/JobRepo")<JobRepo, {
  readonly insert: (job: JobRecord) => Effect.Effect<void>
  /**
   * Inserts the job unless one with its id exists: false, and nothing written, then. A create's
   * id derived from its Idempotency-Key finds its earlier attempt this way, with no read first.
   */
  readonly insertNew: (job: JobRecord) => Effect.Effect<boolean>
  /**
   * Inserts the job only while no enabled webhook endpoint of its account and mode subscribes
   * to `event` and no job has its id, in one statement; false, and nothing written, otherwise (a
   * job whose event must be written with it is not inserted here).
   */
  readonly insertUnlessSubscribed: (job: JobRecord, event: WebhookEventType) => Effect.Effect<boolean>
  readonly get: (id: string) => Effect.Effect<Option.Option<JobRecord>>
  readonly update: (job: JobRecord) => Effect.Effect<void>
  /** Newest first: createdAt descending, then id descending. */
  readonly list: (query: JobListQuery) => Effect.Effect<ReadonlyArray<JobRecord>>
  /** Jobs `queued` or `processing` that use the file. */
  readonly countActiveForFile: (fileId: string) => Effect.Effect<number>
  /**
   * The oldest `queued` job of the mode, locked for the current transaction so no other
   * claimer gets it (SKIP LOCKED on Postgres). None when the queue is empty.
   */
  readonly lockNextQueued: (mode: Mode) => Effect.Effect<Option.Option<JobRecord>>
  /** The job locked for the current transaction. */
  readonly lockById: (id: string) => Effect.Effect<Option.Option<JobRecord>>
  /** `processing` jobs whose lease ended before `now`. */
  readonly lapsedLeases: (now: number, limit: number) => Effect.Effect<ReadonlyArray<JobRecord>>
}>() {}

/** What a wallet transaction starts from: the account's live lots and open holds. */
export interface WalletSnapshot {
  readonly accountId: string
  /** Lots with remaining micros (expired lots only while they still carry held micros). */
  readonly lots: ReadonlyArray<LotRecord>
  readonly openHolds: ReadonlyArray<HoldRecord>
  /** The latest ledger entry's seq, balance_after and reserved_after (0s when none). */
  readonly lastSeq: number
  readonly balance: number
  readonly reserved: number
}

/** The writes of one wallet operation, produced by core/wallet. */
export interface WalletChange {
  readonly lots: ReadonlyArray<LotRecord>
  readonly holds: ReadonlyArray<HoldRecord>
  readonly entries: ReadonlyArray<LedgerEntryRecord>
}

export interface LedgerPageQuery {
  readonly accountId: string
  readonly limit: number
  /** Return entries with seq below this (newest first). */
  readonly beforeSeq?: number | undefined
}

export class WalletRepo extends Context.Tag("hush/WalletRepo")<WalletRepo, {
  /** Loads the wallet and locks it for the current transaction. */
  readonly lock: (accountId: string) => Effect.Effect<WalletSnapshot>
  readonly apply: (change: WalletChange) => Effect.Effect<void>
  readonly holdForJob: (jobId: string) => Effect.Effect<Option.Option<HoldRecord>>
  /** Newest purchase first; every lot ever created. */
  readonly listLots: (accountId: string, limit: number) => Effect.Effect<ReadonlyArray<LotRecord>>
  /** Lots not expired at `now` (used up or not), earliest expiry first (then id). */
  readonly unexpiredLots: (accountId: string, now: number, limit: number) => Effect.Effect<ReadonlyArray<LotRecord>>
  /** Newest first. */
  readonly ledgerPage: (query: LedgerPageQuery) => Effect.Effect<ReadonlyArray<LedgerEntryRecord>>
  /** Oldest first. */
  readonly ledgerForJob: (jobId: string) => Effect.Effect<ReadonlyArray<LedgerEntryRecord>>
}>() {}

export type IdempotencyBegin =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Existing"; readonly record: IdempotencyRecord }

export class IdempotencyRepo extends Context.Tag("hush/IdempotencyRepo")<IdempotencyRepo, {
  /**
   * Records a running request unless an unexpired record for (account, mode, key) exists. Atomic.
   * With `takeOverRunningBefore`, a record still running that began before that instant is
   * replaced too: its request ended without settling it (its process was killed, or the
   * database was unreachable when it tried), so its key would otherwise stay blocked.
   */
  readonly begin: (record: IdempotencyRecord, options?: { readonly takeOverRunningBefore?: number | undefined }) => Effect.Effect<IdempotencyBegin>
  readonly finish: (
    accountId: string, mode: Mode, key: string,
    response: { readonly status: number; readonly body: string; readonly headers: Record<string, string> }
  ) => Effect.Effect<void>
  /** Forgets a running record (its result is not to be kept: 429, 5xx). */
  readonly abandon: (accountId: string, mode: Mode, key: string) => Effect.Effect<void>
  /** The record for (account, mode, key), expired or not. */
  readonly get: (accountId: string, mode: Mode, key: string) => Effect.Effect<Option.Option<IdempotencyRecord>>
  /** Deletes up to `limit` records that expired at or before `now`; returns how many. */
  readonly purgeExpired: (now: number, limit: number) => Effect.Effect<number>
}>() {}
