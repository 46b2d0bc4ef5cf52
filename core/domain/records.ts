/**
 * What the repositories store. Timestamps are epoch milliseconds; money is integer micros.
 * These are internal records: the wire shapes of the spec live in core/schema and are
 * produced from records by core/services/present.ts.
 */
import { Schema } from "effect"
import { AudioReportRecord } from "./audio-report.js"
import { JobOptionsRecord } from "./denoise-options.js"
import { RecordClass } from "./record-class.js"
import {
  AccountStatus, DeliveryEventType, FileStatus, JobErrorCode, JobStatus, LedgerKind, LotSource, Mode, Scope, Task,
  WebhookDeliveryStatus, WebhookEndpointStatus, WebhookEventType
} from "./enums.js"

const Millis = Schema.Int
const Micros = Schema.Int

/** The billing entity; the person who signs in is its user (core/domain/users.ts). */
export class AccountRecord extends Schema.Class<AccountRecord>("AccountRecord")({
  id: Schema.String,
  name: Schema.String,
  status: AccountStatus,
  hasPurchased: Schema.Boolean,
  /** The terms of service the owner accepted; empty when none. */
  termsVersion: Schema.String,
  trainingOptIn: Schema.Boolean,
  createdAt: Millis
}) {}

export class KeyRecord extends Schema.Class<KeyRecord>("KeyRecord")({
  id: Schema.String,
  accountId: Schema.String,
  name: Schema.String,
  mode: Mode,
  /** Lowercase hex SHA-256 of the whole key; the only form of the secret kept. */
  hash: Schema.String,
  prefixDisplay: Schema.String,
  lastFour: Schema.String,
  scopes: Schema.Array(Scope),
  createdAt: Millis,
  lastUsedAt: Schema.NullOr(Millis),
  revokedAt: Schema.NullOr(Millis)
}) {}

export class FileErrorRecord extends Schema.Class<FileErrorRecord>("FileErrorRecord")({
  code: Schema.String,
  message: Schema.String
}) {}

export class MultipartState extends Schema.Class<MultipartState>("MultipartState")({
  uploadId: Schema.String,
  partSize: Schema.Int,
  partCount: Schema.Int
}) {}

export class FileRecord extends RecordClass<FileRecord>("FileRecord")({
  id: Schema.String,
  accountId: Schema.String,
  mode: Mode,
  filename: Schema.String,
  contentType: Schema.String,
  sizeBytes: Schema.Int,
  status: FileStatus,
  durationSeconds: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(FileErrorRecord),
  /** Where the bytes live in the blob store. */
  storageKey: Schema.String,
  multipart: Schema.NullOr(MultipartState),
  createdAt: Millis,
  uploadExpiresAt: Millis,
  completedAt: Schema.NullOr(Millis),
  readyAt: Schema.NullOr(Millis),
  rejectedAt: Schema.NullOr(Millis)
}) {}

export class JobPricing extends Schema.Class<JobPricing>("JobPricing")({
  billableSeconds: Schema.Int,
  minimumApplied: Schema.Boolean,
  unitPriceMicros: Micros,
  pricingVersion: Schema.Int,
  /** The exact cost; held at creation in live mode, shown but never held in test mode. */
  estimatedMicros: Micros
}) {}

export class JobOutputRecord extends Schema.Class<JobOutputRecord>("JobOutputRecord")({
  format: Schema.String,
  bitrateKbps: Schema.Int,
  sizeBytes: Schema.Int,
  storageKey: Schema.String,
  /** Set once the sweeper deleted the bytes. */
  deletedAt: Schema.NullOr(Millis),
  /** What the worker measured (live jobs of the built-in runner); null otherwise. */
  report: Schema.optionalWith(Schema.NullOr(AudioReportRecord), { default: () => null })
}) {}

export class JobErrorRecord extends Schema.Class<JobErrorRecord>("JobErrorRecord")({
  code: JobErrorCode,
  message: Schema.String
}) {}

export class JobRecord extends RecordClass<JobRecord>("JobRecord")({
  id: Schema.String,
  accountId: Schema.String,
  mode: Mode,
  keyId: Schema.NullOr(Schema.String),
  task: Task,
  model: Schema.String,
  status: JobStatus,
  progress: Schema.Number,
  fileId: Schema.String,
  inputFilename: Schema.String,
  inputStorageKey: Schema.String,
  durationSeconds: Schema.Number,
  /** What the job was asked for (strength, output format, loudness); never part of its price. */
  options: JobOptionsRecord,
  pricing: JobPricing,
  chargedMicros: Schema.NullOr(Micros),
  /** The capture's ledger entry, once charged. */
  ledgerTxnId: Schema.NullOr(Schema.String),
  output: Schema.NullOr(JobOutputRecord),
  error: Schema.NullOr(JobErrorRecord),
  /** Claims so far (a lapsed lease counts); at most MAX_JOB_ATTEMPTS. */
  attempts: Schema.Int,
  leaseOwner: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Millis),
  createdAt: Millis,
  startedAt: Schema.NullOr(Millis),
  finishedAt: Schema.NullOr(Millis)
}) {}

export class LotRecord extends Schema.Class<LotRecord>("LotRecord")({
  id: Schema.String,
  accountId: Schema.String,
  source: LotSource,
  amountMicros: Micros,
  /** Not yet captured or expired; includes what open holds reserve on this lot. */
  remainingMicros: Micros,
  purchasedAt: Millis,
  expiresAt: Millis,
  /** True once its expiry entry was written; only held micros may remain. */
  expired: Schema.Boolean,
  checkoutId: Schema.NullOr(Schema.String)
}) {}

export class HoldDraw extends Schema.Class<HoldDraw>("HoldDraw")({
  lotId: Schema.String,
  micros: Micros
}) {}

export const HoldStatus = Schema.Literal("open", "captured", "released")
export type HoldStatus = typeof HoldStatus.Type

export class HoldRecord extends RecordClass<HoldRecord>("HoldRecord")({
  id: Schema.String,
  accountId: Schema.String,
  jobId: Schema.String,
  amountMicros: Micros,
  draws: Schema.Array(HoldDraw),
  status: HoldStatus,
  createdAt: Millis,
  resolvedAt: Schema.NullOr(Millis)
}) {}

export class LedgerEntryRecord extends Schema.Class<LedgerEntryRecord>("LedgerEntryRecord")({
  id: Schema.String,
  accountId: Schema.String,
  /** Position in the account's ledger, 1-based, gap-free. */
  seq: Schema.Int,
  kind: LedgerKind,
  reason: Schema.String,
  balanceDelta: Micros,
  reservedDelta: Micros,
  balanceAfter: Micros,
  reservedAfter: Micros,
  jobId: Schema.NullOr(Schema.String),
  lotId: Schema.NullOr(Schema.String),
  checkoutId: Schema.NullOr(Schema.String),
  createdAt: Millis
}) {}

export const IdempotencyState = Schema.Literal("running", "done")

export class IdempotencyRecord extends Schema.Class<IdempotencyRecord>("IdempotencyRecord")({
  accountId: Schema.String,
  mode: Mode,
  key: Schema.String,
  method: Schema.String,
  path: Schema.String,
  /** Hash of the request body, so a reuse with another body is detected. */
  fingerprint: Schema.String,
  state: IdempotencyState,
  responseStatus: Schema.NullOr(Schema.Int),
  responseBody: Schema.NullOr(Schema.String),
  responseHeaders: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })),
  createdAt: Millis,
  expiresAt: Millis
}) {}

/** An account's webhook endpoint, in one mode. The secret signs its deliveries, so it is kept. */
export class WebhookEndpointRecord extends Schema.Class<WebhookEndpointRecord>("WebhookEndpointRecord")({
  id: Schema.String,
  accountId: Schema.String,
  mode: Mode,
  url: Schema.String,
  events: Schema.Array(WebhookEventType),
  description: Schema.NullOr(Schema.String),
  /** `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
  secret: Schema.String,
  status: WebhookEndpointStatus,
  createdAt: Millis,
  /** The first failed attempt since the last delivered one; null while deliveries succeed. */
  failingSince: Schema.NullOr(Millis),
  disabledAt: Schema.NullOr(Millis)
}) {}

/** One attempt of a delivery, as the deliveries log shows it. */
export class WebhookAttemptRecord extends Schema.Class<WebhookAttemptRecord>("WebhookAttemptRecord")({
  at: Millis,
  /** The HTTP status answered; null when none came (refused, timed out, connection failed). */
  statusCode: Schema.NullOr(Schema.Int),
  durationMs: Schema.Int,
  error: Schema.NullOr(Schema.String)
}) {}

/**
 * One event for one endpoint: the outbox row written with the state change, then the queue
 * entry a worker claims under a lease (like a job) until it is delivered or failed.
 */
export class WebhookDeliveryRecord extends RecordClass<WebhookDeliveryRecord>("WebhookDeliveryRecord")({
  id: Schema.String,
  endpointId: Schema.String,
  accountId: Schema.String,
  mode: Mode,
  eventId: Schema.String,
  eventType: DeliveryEventType,
  /** The exact body sent (and signed) on every attempt. */
  body: Schema.String,
  status: WebhookDeliveryStatus,
  attempts: Schema.Array(WebhookAttemptRecord),
  /** When it may be claimed next (pending only). */
  nextAttemptAt: Schema.NullOr(Millis),
  leaseOwner: Schema.NullOr(Schema.String),
  leaseExpiresAt: Schema.NullOr(Millis),
  createdAt: Millis,
  finishedAt: Schema.NullOr(Millis)
}) {}
