/**
 * Rows ↔ records. node-postgres returns `bigint` (and `count`, `sum`) as strings: every integer
 * goes through `int`, which refuses anything that is not a safe integer rather than rounding.
 * NULL becomes `null`, never `undefined`. Records come back as the record classes, built
 * without the constructor's validation pass (FROM_DATABASE): the columns' types, NOT NULLs and
 * CHECK constraints (migrations/) hold the schema's rules, `int` refuses what is not a safe
 * integer, and the pass cost a poll ~6 % of its CPU (README, bench:api).
 */
import { AudioReportRecord } from "../../core/domain/audio-report.js"
import {
  AccountRecord, FileErrorRecord, FileRecord, HoldDraw, HoldRecord, IdempotencyRecord, JobErrorRecord,
  JobOutputRecord, JobPricing, JobRecord, KeyRecord, LedgerEntryRecord, LotRecord, MultipartState
} from "../../core/domain/records.js"
import { JobOptionsRecord } from "../../core/domain/denoise-options.js"

export type Row = Readonly<Record<string, unknown>>

/** Rows were checked by PostgreSQL on the way in. */
const FROM_DATABASE = { disableValidation: true } as const

export const int = (value: unknown, column = "value"): number => {
  const n = typeof value === "number" ? value : typeof value === "string" || typeof value === "bigint" ? Number(value) : NaN
  if (!Number.isSafeInteger(n)) throw new TypeError(`column ${column}: expected a safe integer, got ${String(value)}`)
  return n
}

export const intOrNull = (value: unknown, column = "value"): number | null =>
  value === null || value === undefined ? null : int(value, column)

export const float = (value: unknown, column = "value"): number => {
  const n = typeof value === "number" ? value : Number(value)
  if (!Number.isFinite(n)) throw new TypeError(`column ${column}: expected a number, got ${String(value)}`)
  return n
}

const floatOrNull = (value: unknown, column: string): number | null =>
  value === null || value === undefined ? null : float(value, column)

const str = (value: unknown): string => value as string
const strOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : (value as string))
const bool = (value: unknown): boolean => value === true
/** jsonb arrives parsed; a driver configured without the jsonb parser hands text. */
const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

// ─────────────────────────────────────────────────────────────── accounts

export const ACCOUNT_COLUMNS = `id, name, status, has_purchased, terms_version, training_opt_in, created_at`

/** An account's row; `prefix` names its columns in a join (`a_id`, …). */
export const toAccount = (r: Row, prefix = "") =>
  new AccountRecord({
    id: str(r[`${prefix}id`]),
    name: str(r[`${prefix}name`]),
    status: r[`${prefix}status`] as AccountRecord["status"],
    hasPurchased: bool(r[`${prefix}has_purchased`]),
    termsVersion: str(r[`${prefix}terms_version`]),
    trainingOptIn: bool(r[`${prefix}training_opt_in`]),
    createdAt: int(r[`${prefix}created_at`], "created_at")
  }, FROM_DATABASE)

// ─────────────────────────────────────────────────────────────── keys

export const KEY_COLUMNS =
  `id, account_id, name, mode, hash, prefix_display, last_four, scopes, created_at, last_used_at, revoked_at`

export const toKey = (r: Row) =>
  new KeyRecord({
    id: str(r.id),
    accountId: str(r.account_id),
    name: str(r.name),
    mode: r.mode as KeyRecord["mode"],
    hash: str(r.hash),
    prefixDisplay: str(r.prefix_display),
    lastFour: str(r.last_four),
    scopes: json(r.scopes) as KeyRecord["scopes"],
    createdAt: int(r.created_at, "created_at"),
    lastUsedAt: intOrNull(r.last_used_at, "last_used_at"),
    revokedAt: intOrNull(r.revoked_at, "revoked_at")
  }, FROM_DATABASE)

// ─────────────────────────────────────────────────────────────── files

export const FILE_COLUMNS = `id, account_id, mode, filename, content_type, size_bytes, status, duration_seconds,
  error_code, error_message, storage_key, multipart_upload_id, multipart_part_size, multipart_part_count,
  created_at, upload_expires_at, completed_at, ready_at, rejected_at`

export const toFile = (r: Row) =>
  new FileRecord({
    id: str(r.id),
    accountId: str(r.account_id),
    mode: r.mode as FileRecord["mode"],
    filename: str(r.filename),
    contentType: str(r.content_type),
    sizeBytes: int(r.size_bytes, "size_bytes"),
    status: r.status as FileRecord["status"],
    durationSeconds: floatOrNull(r.duration_seconds, "duration_seconds"),
    error: r.error_code === null ? null : new FileErrorRecord({ code: str(r.error_code), message: str(r.error_message) }, FROM_DATABASE),
    storageKey: str(r.storage_key),
    multipart: r.multipart_upload_id === null ? null : new MultipartState({
      uploadId: str(r.multipart_upload_id),
      partSize: int(r.multipart_part_size, "multipart_part_size"),
      partCount: int(r.multipart_part_count, "multipart_part_count")
    }, FROM_DATABASE),
    createdAt: int(r.created_at, "created_at"),
    uploadExpiresAt: int(r.upload_expires_at, "upload_expires_at"),
    completedAt: intOrNull(r.completed_at, "completed_at"),
    readyAt: intOrNull(r.ready_at, "ready_at"),
    rejectedAt: intOrNull(r.rejected_at, "rejected_at")
  }, FROM_DATABASE)

/** Positional parameters of a file, in FILE_COLUMNS order. */
export const fileParams = (f: FileRecord): ReadonlyArray<unknown> => [
  f.id, f.accountId, f.mode, f.filename, f.contentType, f.sizeBytes, f.status, f.durationSeconds,
  f.error?.code ?? null, f.error?.message ?? null, f.storageKey,
  f.multipart?.uploadId ?? null, f.multipart?.partSize ?? null, f.multipart?.partCount ?? null,
  f.createdAt, f.uploadExpiresAt, f.completedAt, f.readyAt, f.rejectedAt
]

// ─────────────────────────────────────────────────────────────── jobs

export const JOB_COLUMNS = `id, account_id, mode, key_id, task, model, status, progress, file_id, input_filename,
  input_storage_key, duration_seconds, billable_seconds, minimum_applied, unit_price_micros, pricing_version,
  estimated_micros, charged_micros, ledger_txn_id, output_format, output_bitrate_kbps, output_size_bytes,
  output_storage_key, output_deleted_at, error_code, error_message, attempts, lease_owner, lease_expires_at,
  created_at, started_at, finished_at, option_strength, option_format, option_loudness, report_input_loudness_lufs,
  report_output_loudness_lufs, report_output_true_peak_dbtp, report_noise_reduction_db`

export const toJob = (r: Row) =>
  new JobRecord({
    id: str(r.id),
    accountId: str(r.account_id),
    mode: r.mode as JobRecord["mode"],
    keyId: strOrNull(r.key_id),
    task: r.task as JobRecord["task"],
    model: str(r.model),
    status: r.status as JobRecord["status"],
    progress: float(r.progress, "progress"),
    fileId: str(r.file_id),
    inputFilename: str(r.input_filename),
    inputStorageKey: str(r.input_storage_key),
    durationSeconds: float(r.duration_seconds, "duration_seconds"),
    options: new JobOptionsRecord({
      strength: floatOrNull(r.option_strength, "option_strength"),
      format: str(r.option_format) as JobOptionsRecord["format"],
      loudness: floatOrNull(r.option_loudness, "option_loudness")
    }, FROM_DATABASE),
    pricing: new JobPricing({
      billableSeconds: int(r.billable_seconds, "billable_seconds"),
      minimumApplied: bool(r.minimum_applied),
      unitPriceMicros: int(r.unit_price_micros, "unit_price_micros"),
      pricingVersion: int(r.pricing_version, "pricing_version"),
      estimatedMicros: int(r.estimated_micros, "estimated_micros")
    }, FROM_DATABASE),
    chargedMicros: intOrNull(r.charged_micros, "charged_micros"),
    ledgerTxnId: strOrNull(r.ledger_txn_id),
    output: r.output_storage_key === null ? null : new JobOutputRecord({
      format: str(r.output_format),
      bitrateKbps: int(r.output_bitrate_kbps, "output_bitrate_kbps"),
      sizeBytes: int(r.output_size_bytes, "output_size_bytes"),
      storageKey: str(r.output_storage_key),
      deletedAt: intOrNull(r.output_deleted_at, "output_deleted_at"),
      report: r.report_input_loudness_lufs === null ? null : new AudioReportRecord({
        inputLoudnessLufs: float(r.report_input_loudness_lufs, "report_input_loudness_lufs"),
        outputLoudnessLufs: float(r.report_output_loudness_lufs, "report_output_loudness_lufs"),
        outputTruePeakDbtp: float(r.report_output_true_peak_dbtp, "report_output_true_peak_dbtp"),
        noiseReductionDb: float(r.report_noise_reduction_db, "report_noise_reduction_db")
      }, FROM_DATABASE)
    }, FROM_DATABASE),
    error: r.error_code === null
      ? null
      : new JobErrorRecord({ code: r.error_code as JobErrorRecord["code"], message: str(r.error_message) }, FROM_DATABASE),
    attempts: int(r.attempts, "attempts"),
    leaseOwner: strOrNull(r.lease_owner),
    leaseExpiresAt: intOrNull(r.lease_expires_at, "lease_expires_at"),
    createdAt: int(r.created_at, "created_at"),
    startedAt: intOrNull(r.started_at, "started_at"),
    finishedAt: intOrNull(r.finished_at, "finished_at")
  }, FROM_DATABASE)

/** Positional parameters of a job, in JOB_COLUMNS order. */
export const jobParams = (j: JobRecord): ReadonlyArray<unknown> => [
  j.id, j.accountId, j.mode, j.keyId, j.task, j.model, j.status, j.progress, j.fileId, j.inputFilename,
  j.inputStorageKey, j.durationSeconds, j.pricing.billableSeconds, j.pricing.minimumApplied,
  j.pricing.unitPriceMicros, j.pricing.pricingVersion, j.pricing.estimatedMicros, j.chargedMicros, j.ledgerTxnId,
  j.output?.format ?? null, j.output?.bitrateKbps ?? null, j.output?.sizeBytes ?? null, j.output?.storageKey ?? null,
  j.output?.deletedAt ?? null, j.error?.code ?? null, j.error?.message ?? null, j.attempts, j.leaseOwner,
  j.leaseExpiresAt, j.createdAt, j.startedAt, j.finishedAt, j.options.strength, j.options.format, j.options.loudness,
  j.output?.report?.inputLoudnessLufs ?? null, j.output?.report?.outputLoudnessLufs ?? null,
  j.output?.report?.outputTruePeakDbtp ?? null, j.output?.report?.noiseReductionDb ?? null
]

// ─────────────────────────────────────────────────────────────── wallet

export const LOT_COLUMNS =
  `id, account_id, source, amount_micros, remaining_micros, purchased_at, expires_at, expired, checkout_id`

export const toLot = (r: Row) =>
  new LotRecord({
    id: str(r.id),
    accountId: str(r.account_id),
    source: r.source as LotRecord["source"],
    amountMicros: int(r.amount_micros, "amount_micros"),
    remainingMicros: int(r.remaining_micros, "remaining_micros"),
    purchasedAt: int(r.purchased_at, "purchased_at"),
    expiresAt: int(r.expires_at, "expires_at"),
    expired: bool(r.expired),
    checkoutId: strOrNull(r.checkout_id)
  }, FROM_DATABASE)

export const HOLD_COLUMNS = `id, account_id, job_id, amount_micros, draws, status, created_at, resolved_at`

export const toHold = (r: Row) =>
  new HoldRecord({
    id: str(r.id),
    accountId: str(r.account_id),
    jobId: str(r.job_id),
    amountMicros: int(r.amount_micros, "amount_micros"),
    draws: (json(r.draws) as ReadonlyArray<{ lotId: string; micros: unknown }>).map((d) =>
      new HoldDraw({ lotId: d.lotId, micros: int(d.micros, "draws.micros") }, FROM_DATABASE)
    ),
    status: r.status as HoldRecord["status"],
    createdAt: int(r.created_at, "created_at"),
    resolvedAt: intOrNull(r.resolved_at, "resolved_at")
  }, FROM_DATABASE)

/** Draws as jsonb text, in their order (the order they were drawn in). */
export const drawsJson = (h: HoldRecord): string => JSON.stringify(h.draws.map((d) => ({ lotId: d.lotId, micros: d.micros })))

export const ENTRY_COLUMNS = `id, account_id, seq, kind, reason, balance_delta, reserved_delta, balance_after,
  reserved_after, job_id, lot_id, checkout_id, created_at`

export const toEntry = (r: Row) =>
  new LedgerEntryRecord({
    id: str(r.id),
    accountId: str(r.account_id),
    seq: int(r.seq, "seq"),
    kind: r.kind as LedgerEntryRecord["kind"],
    reason: str(r.reason),
    balanceDelta: int(r.balance_delta, "balance_delta"),
    reservedDelta: int(r.reserved_delta, "reserved_delta"),
    balanceAfter: int(r.balance_after, "balance_after"),
    reservedAfter: int(r.reserved_after, "reserved_after"),
    jobId: strOrNull(r.job_id),
    lotId: strOrNull(r.lot_id),
    checkoutId: strOrNull(r.checkout_id),
    createdAt: int(r.created_at, "created_at")
  }, FROM_DATABASE)

// ─────────────────────────────────────────────────────────────── idempotency

export const IDEMPOTENCY_COLUMNS = `account_id, mode, key, method, path, fingerprint, state, response_status,
  response_body, response_headers, created_at, expires_at`

export const toIdempotency = (r: Row) =>
  new IdempotencyRecord({
    accountId: str(r.account_id),
    mode: r.mode as IdempotencyRecord["mode"],
    key: str(r.key),
    method: str(r.method),
    path: str(r.path),
    fingerprint: str(r.fingerprint),
    state: r.state as IdempotencyRecord["state"],
    responseStatus: intOrNull(r.response_status, "response_status"),
    responseBody: strOrNull(r.response_body),
    responseHeaders: r.response_headers === null ? null : (json(r.response_headers) as Record<string, string>),
    createdAt: int(r.created_at, "created_at"),
    expiresAt: int(r.expires_at, "expires_at")
  }, FROM_DATABASE)
