/**
 * The core repositories' tables, each described once (table.ts): a field per record property,
 * in the record's order, naming its column. A new column is one line here (and its migration).
 */
import { AudioReportRecord } from "../../core/domain/audio-report.js"
import {
  AccountRecord, FileErrorRecord, FileRecord, HoldDraw, HoldRecord, IdempotencyRecord, JobErrorRecord,
  JobOutputRecord, JobPricing, JobRecord, KeyRecord, LedgerEntryRecord, LotRecord, MultipartState
} from "../../core/domain/records.js"
import { JobOptionsRecord } from "../../core/domain/denoise-options.js"
import { bool, float, group, int, json, orNull, table, text, toInt } from "./table.js"

export const accounts = table("accounts", AccountRecord, {
  id: text("id"),
  name: text("name"),
  status: text("status"),
  hasPurchased: bool("has_purchased"),
  termsVersion: text("terms_version"),
  trainingOptIn: bool("training_opt_in"),
  createdAt: int("created_at")
})

export const apiKeys = table("api_keys", KeyRecord, {
  id: text("id"),
  accountId: text("account_id"),
  name: text("name"),
  mode: text("mode"),
  hash: text("hash"),
  prefixDisplay: text("prefix_display"),
  lastFour: text("last_four"),
  scopes: json("scopes"),
  createdAt: int("created_at"),
  lastUsedAt: orNull(int("last_used_at")),
  revokedAt: orNull(int("revoked_at"))
})

export const files = table("files", FileRecord, {
  id: text("id"),
  accountId: text("account_id"),
  mode: text("mode"),
  filename: text("filename"),
  contentType: text("content_type"),
  sizeBytes: int("size_bytes"),
  status: text("status"),
  durationSeconds: orNull(float("duration_seconds")),
  error: group(FileErrorRecord, { code: text("error_code"), message: text("error_message") }, "error_code"),
  storageKey: text("storage_key"),
  multipart: group(MultipartState, {
    uploadId: text("multipart_upload_id"),
    partSize: int("multipart_part_size"),
    partCount: int("multipart_part_count")
  }, "multipart_upload_id"),
  createdAt: int("created_at"),
  uploadExpiresAt: int("upload_expires_at"),
  completedAt: orNull(int("completed_at")),
  readyAt: orNull(int("ready_at")),
  rejectedAt: orNull(int("rejected_at"))
})

export const jobs = table("jobs", JobRecord, {
  id: text("id"),
  accountId: text("account_id"),
  mode: text("mode"),
  keyId: orNull(text("key_id")),
  task: text("task"),
  model: text("model"),
  status: text("status"),
  progress: float("progress"),
  fileId: text("file_id"),
  inputFilename: text("input_filename"),
  inputStorageKey: text("input_storage_key"),
  durationSeconds: float("duration_seconds"),
  options: group(JobOptionsRecord, {
    strength: orNull(float("option_strength")),
    format: text("option_format"),
    loudness: orNull(float("option_loudness"))
  }),
  pricing: group(JobPricing, {
    billableSeconds: int("billable_seconds"),
    minimumApplied: bool("minimum_applied"),
    unitPriceMicros: int("unit_price_micros"),
    pricingVersion: int("pricing_version"),
    estimatedMicros: int("estimated_micros")
  }),
  chargedMicros: orNull(int("charged_micros")),
  ledgerTxnId: orNull(text("ledger_txn_id")),
  output: group(JobOutputRecord, {
    format: text("output_format"),
    bitrateKbps: int("output_bitrate_kbps"),
    sizeBytes: int("output_size_bytes"),
    storageKey: text("output_storage_key"),
    deletedAt: orNull(int("output_deleted_at")),
    report: group(AudioReportRecord, {
      inputLoudnessLufs: float("report_input_loudness_lufs"),
      outputLoudnessLufs: float("report_output_loudness_lufs"),
      outputTruePeakDbtp: float("report_output_true_peak_dbtp"),
      noiseReductionDb: float("report_noise_reduction_db")
    }, "report_input_loudness_lufs")
  }, "output_storage_key"),
  error: group(JobErrorRecord, { code: text("error_code"), message: text("error_message") }, "error_code"),
  attempts: int("attempts"),
  leaseOwner: orNull(text("lease_owner")),
  leaseExpiresAt: orNull(int("lease_expires_at")),
  createdAt: int("created_at"),
  startedAt: orNull(int("started_at")),
  finishedAt: orNull(int("finished_at"))
})

export const creditLots = table("credit_lots", LotRecord, {
  id: text("id"),
  accountId: text("account_id"),
  source: text("source"),
  amountMicros: int("amount_micros"),
  remainingMicros: int("remaining_micros"),
  purchasedAt: int("purchased_at"),
  expiresAt: int("expires_at"),
  expired: bool("expired"),
  checkoutId: orNull(text("checkout_id"))
})

/** A hold's draws, in the order they were drawn in. */
const draws = json<ReadonlyArray<HoldDraw>>("draws", {
  read: (parsed) =>
    (parsed as ReadonlyArray<{ readonly lotId: string; readonly micros: unknown }>).map((d) =>
      new HoldDraw({ lotId: d.lotId, micros: toInt(d.micros, "draws.micros") }, { disableValidation: true })
    ),
  write: (value) => value.map((d) => ({ lotId: d.lotId, micros: d.micros }))
})

export const creditHolds = table("credit_holds", HoldRecord, {
  id: text("id"),
  accountId: text("account_id"),
  jobId: text("job_id"),
  amountMicros: int("amount_micros"),
  draws,
  status: text("status"),
  createdAt: int("created_at"),
  resolvedAt: orNull(int("resolved_at"))
})

export const ledgerEntries = table("ledger_entries", LedgerEntryRecord, {
  id: text("id"),
  accountId: text("account_id"),
  seq: int("seq"),
  kind: text("kind"),
  reason: text("reason"),
  balanceDelta: int("balance_delta"),
  reservedDelta: int("reserved_delta"),
  balanceAfter: int("balance_after"),
  reservedAfter: int("reserved_after"),
  jobId: orNull(text("job_id")),
  lotId: orNull(text("lot_id")),
  checkoutId: orNull(text("checkout_id")),
  createdAt: int("created_at")
})

export const idempotencyKeys = table("idempotency_keys", IdempotencyRecord, {
  accountId: text("account_id"),
  mode: text("mode"),
  key: text("key"),
  method: text("method"),
  path: text("path"),
  fingerprint: text("fingerprint"),
  state: text("state"),
  responseStatus: orNull(int("response_status")),
  responseBody: orNull(text("response_body")),
  responseHeaders: orNull(json("response_headers")),
  createdAt: int("created_at"),
  expiresAt: int("expires_at")
}, { key: ["account_id", "mode", "key"] })
