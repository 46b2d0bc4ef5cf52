/**
 * Valid records for the repository contracts, each with overridable fields. Defaults use
 * values that catch lossy storage: millis and micros above 2^31 (an `int4` column truncates or
 * overflows), fractional seconds (an integer column rounds), nested objects and arrays.
 */
import { createHash } from "node:crypto"
import type { Schema } from "effect"
import {
  AccountRecord, FileErrorRecord, FileRecord, HoldDraw, HoldRecord, IdempotencyRecord, JobErrorRecord,
  JobOutputRecord, JobPricing, JobRecord, KeyRecord, LedgerEntryRecord, LotRecord, MultipartState
} from "../../core/domain/records.js"
import { JobOptionsRecord } from "../../core/domain/denoise-options.js"

/** A fixed instant (2023-11-14T22:13:20Z): the contracts pass time explicitly, never read a clock. */
export const T0 = 1_700_000_000_000
export const SECOND = 1_000
export const HOUR = 3_600_000
export const DAY = 24 * HOUR
export const YEAR = 365 * DAY

/** Fields of a record class, all optional: what a builder accepts. */
export type Overrides<C extends { readonly fields: Schema.Struct.Fields }> = Partial<Schema.Struct.Type<C["fields"]>>

/** Lowercase hex SHA-256, the form KeyRecord.hash takes. */
export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex")

let counter = 0
/** A fresh id, unique within the test run, in the `<prefix>_<base32>` shape. */
export const fixtureId = (prefix: string): string => `${prefix}_fx${(++counter).toString(32).padStart(10, "0")}`

export const makeAccount = (o: Overrides<typeof AccountRecord> = {}): AccountRecord => {
  const id = o.id ?? fixtureId("acct")
  return new AccountRecord({
    id,
    name: "Ada Lovelace",
    status: "active",
    hasPurchased: true,
    termsVersion: "2024-06-01",
    trainingOptIn: false,
    createdAt: T0,
    ...o
  })
}

export const makeKey = (o: Overrides<typeof KeyRecord> = {}): KeyRecord => {
  const id = o.id ?? fixtureId("key")
  return new KeyRecord({
    id,
    accountId: "acct_fixture",
    name: "Production",
    mode: "live",
    hash: sha256Hex(`hush_live_${id}`),
    prefixDisplay: "hush_live_abcd",
    lastFour: "wxyz",
    scopes: ["files:write", "jobs:write", "jobs:read", "credits:read"],
    createdAt: T0,
    lastUsedAt: null,
    revokedAt: null,
    ...o
  })
}

export const makeFile = (o: Overrides<typeof FileRecord> = {}): FileRecord => {
  const id = o.id ?? fixtureId("file")
  return new FileRecord({
    id,
    accountId: "acct_fixture",
    mode: "live",
    filename: "interview.wav",
    contentType: "audio/wav",
    sizeBytes: 1_048_576,
    status: "uploading",
    durationSeconds: null,
    error: null,
    storageKey: `inputs/${id}`,
    multipart: null,
    createdAt: T0,
    uploadExpiresAt: T0 + 6 * HOUR,
    completedAt: null,
    readyAt: null,
    rejectedAt: null,
    ...o
  })
}

export const fileError = (o: Partial<Schema.Struct.Type<typeof FileErrorRecord.fields>> = {}) =>
  new FileErrorRecord({ code: "invalid_audio", message: "no audio stream could be decoded", ...o })

export const multipart = (o: Partial<Schema.Struct.Type<typeof MultipartState.fields>> = {}) =>
  new MultipartState({ uploadId: "upload-7f3a/ü", partSize: 67_108_864, partCount: 80, ...o })

export const pricing = (o: Partial<Schema.Struct.Type<typeof JobPricing.fields>> = {}) =>
  new JobPricing({
    billableSeconds: 124,
    minimumApplied: false,
    unitPriceMicros: 100,
    pricingVersion: 1,
    estimatedMicros: 12_400,
    ...o
  })

export const jobOutput = (o: Partial<Schema.Struct.Type<typeof JobOutputRecord.fields>> = {}) =>
  new JobOutputRecord({
    format: "mp3",
    bitrateKbps: 192,
    sizeBytes: 2_976_000,
    storageKey: "outputs/job_fixture.mp3",
    deletedAt: null,
    ...o
  })

export const jobError = (o: Partial<Schema.Struct.Type<typeof JobErrorRecord.fields>> = {}) =>
  new JobErrorRecord({ code: "provider_error", message: "the provider timed out", ...o })

export const makeJob = (o: Overrides<typeof JobRecord> = {}): JobRecord => {
  const id = o.id ?? fixtureId("job")
  return new JobRecord({
    id,
    accountId: "acct_fixture",
    mode: "live",
    keyId: "key_fixture",
    task: "denoise",
    model: "xiph/rnnoise",
    status: "queued",
    progress: 0,
    fileId: "file_fixture",
    inputFilename: "interview.wav",
    inputStorageKey: "inputs/file_fixture",
    durationSeconds: 123.456,
    options: new JobOptionsRecord({ strength: 0.8, format: "flac", loudness: -16 }),
    pricing: pricing(),
    chargedMicros: null,
    ledgerTxnId: null,
    output: null,
    error: null,
    attempts: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    createdAt: T0,
    startedAt: null,
    finishedAt: null,
    ...o
  })
}

export const makeLot = (o: Overrides<typeof LotRecord> = {}): LotRecord =>
  new LotRecord({
    id: o.id ?? fixtureId("lot"),
    accountId: "acct_fixture",
    source: "grant",
    amountMicros: 10_000_000,
    remainingMicros: 10_000_000,
    purchasedAt: T0,
    expiresAt: T0 + YEAR,
    expired: false,
    checkoutId: null,
    ...o
  })

export const makeHold = (o: Overrides<typeof HoldRecord> = {}): HoldRecord =>
  new HoldRecord({
    id: o.id ?? fixtureId("hold"),
    accountId: "acct_fixture",
    jobId: "job_fixture",
    amountMicros: 1_000,
    draws: [new HoldDraw({ lotId: "lot_fixture", micros: 1_000 })],
    status: "open",
    createdAt: T0,
    resolvedAt: null,
    ...o
  })

export const makeLedgerEntry = (o: Overrides<typeof LedgerEntryRecord> = {}): LedgerEntryRecord =>
  new LedgerEntryRecord({
    id: o.id ?? fixtureId("txn"),
    accountId: "acct_fixture",
    seq: 1,
    kind: "grant",
    reason: "welcome credit",
    balanceDelta: 10_000_000,
    reservedDelta: 0,
    balanceAfter: 10_000_000,
    reservedAfter: 0,
    jobId: null,
    lotId: null,
    checkoutId: null,
    createdAt: T0,
    ...o
  })

export const makeIdempotency = (o: Overrides<typeof IdempotencyRecord> = {}): IdempotencyRecord =>
  new IdempotencyRecord({
    accountId: "acct_fixture",
    mode: "live",
    key: "idem-key-1",
    method: "POST",
    path: "/v1/audio/denoise",
    fingerprint: "sha256:0f1e2d3c",
    state: "running",
    responseStatus: null,
    responseBody: null,
    responseHeaders: null,
    createdAt: T0,
    expiresAt: T0 + DAY,
    ...o
  })
