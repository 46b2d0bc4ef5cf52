/**
 * Records → the spec's wire shapes. The one place field names and formats are mapped.
 * The hot ones (a job, a file) skip the constructor's validation (SKIP_CONSTRUCTOR_CHECK).
 */
import type { CatalogModel } from "../domain/catalog.js"
import type { Limits } from "../domain/limits.js"
import type { FileRecord, JobRecord, WebhookDeliveryRecord, WebhookEndpointRecord } from "../domain/records.js"
import type { UploadTarget } from "../ports/blob-store.js"
import { fileExpiresAt } from "../rules/files.js"
import { formatMicros } from "../money.js"
import {
  CreateOut, Credits, File, Job, Model, WebhookDelivery, WebhookEndpoint, WebhookEndpointCreated
} from "../schema/index.js"
import { toIso, toIsoOrNull } from "../time.js"
import type { CreditsView } from "./credits.js"

/**
 * Schema classes' constructor option: no validation. The API answers these classes' JSON as it
 * is (apps/api/server/edge/json-answer.ts; the tests' servers check each answer against its encoding).
 * Without validation the constructor appends a constant field (`object`) after the others, so
 * the hot presenters name it in its place, and the JSON keeps the spec's order.
 */
const SKIP_CONSTRUCTOR_CHECK = { disableValidation: true } as const

export const presentJob = (job: JobRecord, limits: Limits): Job =>
  new Job({
    id: job.id,
    object: "job",
    task: job.task,
    model: job.model,
    status: job.status,
    progress: job.progress,
    input: { file: job.fileId, duration_seconds: job.durationSeconds },
    options: {
      strength: job.options.strength,
      output: { format: job.options.format, loudness: job.options.loudness }
    },
    output: job.output === null ? null : {
      format: job.output.format,
      bitrate_kbps: job.output.bitrateKbps,
      size_bytes: job.output.sizeBytes,
      expires_at: job.finishedAt === null ? null : toIso(job.finishedAt + limits.outputRetentionMs)
    },
    report: job.status !== "succeeded" || job.output?.report == null ? null : {
      input_loudness_lufs: job.output.report.inputLoudnessLufs,
      output_loudness_lufs: job.output.report.outputLoudnessLufs,
      output_true_peak_dbtp: job.output.report.outputTruePeakDbtp,
      noise_reduction_db: job.output.report.noiseReductionDb
    },
    cost: {
      estimated_micros: job.pricing.estimatedMicros,
      charged_micros: job.chargedMicros,
      display: formatMicros(job.chargedMicros ?? job.pricing.estimatedMicros)
    },
    receipt: {
      billable_seconds: job.pricing.billableSeconds,
      minimum_applied: job.pricing.minimumApplied,
      unit_price_micros: job.pricing.unitPriceMicros,
      pricing_version: job.pricing.pricingVersion,
      charged_micros: job.chargedMicros,
      ledger_txn_id: job.ledgerTxnId
    },
    error: job.error === null ? null : { code: job.error.code, message: job.error.message },
    mode: job.mode,
    created_at: toIso(job.createdAt),
    started_at: toIsoOrNull(job.startedAt),
    finished_at: toIsoOrNull(job.finishedAt)
  }, SKIP_CONSTRUCTOR_CHECK)

export const presentFile = (file: FileRecord, limits: Limits): File =>
  new File({
    id: file.id,
    object: "file",
    filename: file.filename,
    content_type: file.contentType,
    size_bytes: file.sizeBytes,
    status: file.status,
    duration_seconds: file.durationSeconds,
    error: file.error === null ? null : { code: file.error.code, message: file.error.message },
    mode: file.mode,
    created_at: toIso(file.createdAt),
    ready_at: toIsoOrNull(file.readyAt),
    expires_at: toIsoOrNull(fileExpiresAt(file, limits))
  }, SKIP_CONSTRUCTOR_CHECK)

export const presentCreateOut = (file: FileRecord, upload: UploadTarget, expiresAt: number): CreateOut =>
  new CreateOut({
    id: file.id,
    status: file.status,
    upload: upload._tag === "Put"
      ? { method: "PUT", url: upload.url, headers: { ...upload.headers }, expires_at: toIso(expiresAt) }
      : {
        method: "multipart",
        part_size: file.multipart?.partSize ?? 0,
        parts: upload.parts.map((p) => ({ part_number: p.partNumber, url: p.url })),
        expires_at: toIso(expiresAt)
      }
  })

export const presentCredits = (credits: CreditsView): Credits =>
  new Credits({
    balance_micros: credits.balanceMicros,
    reserved_micros: credits.reservedMicros,
    available_micros: credits.availableMicros,
    currency: "usd",
    display: formatMicros(credits.availableMicros)
  })

export const presentModel = (model: CatalogModel): Model =>
  new Model({
    id: model.id,
    task: model.task,
    name: model.name,
    description: model.description,
    status: model.status,
    pricing: {
      unit: model.pricing.unit,
      unit_price_micros: model.pricing.unitPriceMicros ?? 0,
      min_units: model.pricing.minUnits,
      pricing_version: model.pricing.pricingVersion,
      display: model.pricing.unitPriceMicros === null ? "not priced" : `${formatMicros(model.pricing.unitPriceMicros)} per ${model.pricing.unit}`,
      currency: "usd"
    },
    limits: { max_bytes: model.limits.maxBytes, max_seconds: model.limits.maxSeconds },
    output: { format: model.output.format, bitrate_kbps: model.output.bitrateKbps }
  })

const endpointFields = (endpoint: WebhookEndpointRecord) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  description: endpoint.description,
  status: endpoint.status,
  mode: endpoint.mode,
  created_at: toIso(endpoint.createdAt),
  disabled_at: toIsoOrNull(endpoint.disabledAt)
})

export const presentEndpoint = (endpoint: WebhookEndpointRecord): WebhookEndpoint => new WebhookEndpoint(endpointFields(endpoint))

/** Only on creation: with its secret. */
export const presentCreatedEndpoint = (endpoint: WebhookEndpointRecord): WebhookEndpointCreated =>
  new WebhookEndpointCreated({ ...endpointFields(endpoint), secret: endpoint.secret })

export const presentDelivery = (delivery: WebhookDeliveryRecord): WebhookDelivery =>
  new WebhookDelivery({
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts.map((a) => ({ at: toIso(a.at), status_code: a.statusCode, duration_ms: a.durationMs, error: a.error })),
    next_attempt_at: toIsoOrNull(delivery.nextAttemptAt),
    created_at: toIso(delivery.createdAt),
    finished_at: toIsoOrNull(delivery.finishedAt)
  })
