/**
 * The public reference's examples: one realistic request and answer per operation, telling one
 * story (a 35.2 s `interview.wav` uploaded, denoised by the default model, downloaded). Ids have
 * the form the service mints (`file_` and 24 lowercase base32 characters), amounts follow the
 * catalog's default model, and every example is decoded by its endpoint's own schemas when the
 * document is built (describe.ts), so an example that no longer fits the API stops the build.
 */
import { RNNOISE } from "../../../../core/domain/catalog.js"
import { formatMicros } from "../../../../core/money.js"
import { HUSH_VERSION } from "../../../../core/version.js"
import type { OperationExamples } from "./example-types.js"

export const EXAMPLE_IDS = {
  file: "file_a6hzjcihoijcdio42nfhbzvm",
  job: "job_nvzxpnn2ddlwinjybf4nn3xm",
  account: "acct_vo6cqvsvz6ungtlsflmbxgzs",
  key: "key_tmh5mv4zdhrghmmvkj6d7rx7",
  ledgerEntry: "txn_ch7i7bq76wpagys4lcihdnmt",
  webhookEndpoint: "whe_l5zom5t5uixhwmsykch3njpy",
  webhookDelivery: "whd_tn3tprcc6rqm3xnzc4ympnuw",
  event: "evt_txhnep674rl2ce6jt6aaryrs",
  request: "req_tptzopjugmbx7t6qtyzno2dp"
} as const

/** 35.2 s of 48 kHz 16-bit mono WAV: 44 bytes of header and 96,000 bytes a second. */
export const EXAMPLE_INPUT = { filename: "interview.wav", contentType: "audio/wav", sizeBytes: 3_379_244, durationSeconds: 35.2 } as const
export const EXAMPLE_OUTPUT_NAME = "interview.denoised.mp3"

/** The default model's price for the example's audio: ⌈35.2⌉ = 36 s, above its 10-second minimum. */
const BILLABLE_SECONDS = Math.max(Math.ceil(EXAMPLE_INPUT.durationSeconds), RNNOISE.pricing.minUnits)
const UNIT_PRICE = RNNOISE.pricing.unitPriceMicros ?? 0
export const EXAMPLE_COST = BILLABLE_SECONDS * UNIT_PRICE

export const EXAMPLE_TIMES = {
  fileCreated: "2026-11-03T14:20:11.482Z",
  uploadExpires: "2026-11-03T20:20:11.482Z",
  fileReady: "2026-11-03T14:20:13.905Z",
  inputExpires: "2026-11-10T14:20:13.905Z",
  jobCreated: "2026-11-03T14:20:15.120Z",
  jobStarted: "2026-11-03T14:20:15.388Z",
  jobFinished: "2026-11-03T14:20:19.742Z",
  outputExpires: "2026-11-10T14:20:19.742Z",
  linkExpires: "2026-11-03T15:21:02.117Z",
  endpointCreated: "2026-11-02T09:12:40.015Z",
  deliveryCreated: "2026-11-03T14:20:19.760Z",
  deliveryAttempt: "2026-11-03T14:20:19.803Z",
  deliveryDone: "2026-11-03T14:20:19.941Z",
  now: "2026-11-03T14:25:00.000Z"
} as const

export const exampleFile = (status: "uploading" | "validating" | "ready") => ({
  id: EXAMPLE_IDS.file,
  object: "file",
  filename: EXAMPLE_INPUT.filename,
  content_type: EXAMPLE_INPUT.contentType,
  size_bytes: EXAMPLE_INPUT.sizeBytes,
  status,
  duration_seconds: status === "ready" ? EXAMPLE_INPUT.durationSeconds : null,
  error: null,
  mode: "live",
  created_at: EXAMPLE_TIMES.fileCreated,
  ready_at: status === "ready" ? EXAMPLE_TIMES.fileReady : null,
  expires_at: status === "ready" ? EXAMPLE_TIMES.inputExpires : EXAMPLE_TIMES.uploadExpires
})

export const exampleJob = (status: "queued" | "succeeded" | "canceled") => {
  const succeeded = status === "succeeded"
  const charged = status === "queued" ? null : succeeded ? EXAMPLE_COST : 0
  return {
    id: EXAMPLE_IDS.job,
    object: "job",
    task: "denoise",
    model: RNNOISE.id,
    status,
    progress: succeeded ? 1 : 0,
    input: { file: EXAMPLE_IDS.file, duration_seconds: EXAMPLE_INPUT.durationSeconds },
    options: { strength: null, output: { format: "mp3", loudness: null } },
    output: succeeded ? { format: "mp3", bitrate_kbps: 192, size_bytes: 845_253, expires_at: EXAMPLE_TIMES.outputExpires } : null,
    report: succeeded
      ? { input_loudness_lufs: -27.4, output_loudness_lufs: -27.9, output_true_peak_dbtp: -3.1, noise_reduction_db: 18.6 }
      : null,
    cost: { estimated_micros: EXAMPLE_COST, charged_micros: charged, display: formatMicros(charged ?? EXAMPLE_COST) },
    receipt: {
      billable_seconds: BILLABLE_SECONDS,
      minimum_applied: false,
      unit_price_micros: UNIT_PRICE,
      pricing_version: RNNOISE.pricing.pricingVersion,
      charged_micros: charged,
      ledger_txn_id: succeeded ? EXAMPLE_IDS.ledgerEntry : null
    },
    error: null,
    mode: "live",
    created_at: EXAMPLE_TIMES.jobCreated,
    started_at: succeeded ? EXAMPLE_TIMES.jobStarted : null,
    finished_at: status === "queued" ? null : EXAMPLE_TIMES.jobFinished
  }
}

const model = {
  object: "model",
  id: RNNOISE.id,
  task: RNNOISE.task,
  name: RNNOISE.name,
  description: RNNOISE.description,
  status: "live",
  pricing: {
    unit: RNNOISE.pricing.unit,
    unit_price_micros: UNIT_PRICE,
    min_units: RNNOISE.pricing.minUnits,
    pricing_version: RNNOISE.pricing.pricingVersion,
    display: `${formatMicros(UNIT_PRICE)} per ${RNNOISE.pricing.unit}`,
    currency: "usd"
  },
  limits: { max_bytes: RNNOISE.limits.maxBytes, max_seconds: RNNOISE.limits.maxSeconds },
  output: { format: RNNOISE.output.format, bitrate_kbps: RNNOISE.output.bitrateKbps }
}

const credits = { balance_micros: 20_000_000, reserved_micros: EXAMPLE_COST, available_micros: 20_000_000 - EXAMPLE_COST, currency: "usd", display: formatMicros(20_000_000 - EXAMPLE_COST) }

export const exampleWebhookEndpoint = {
  id: EXAMPLE_IDS.webhookEndpoint,
  object: "webhook_endpoint",
  url: "https://hooks.example.com/hush",
  events: ["job.succeeded", "job.failed"],
  description: "Notify the publishing pipeline",
  status: "enabled",
  mode: "live",
  created_at: EXAMPLE_TIMES.endpointCreated,
  disabled_at: null
}

export const exampleDelivery = (eventType: "job.succeeded" | "webhook.test", status: "succeeded" | "pending") => ({
  id: EXAMPLE_IDS.webhookDelivery,
  object: "webhook_delivery",
  event_id: EXAMPLE_IDS.event,
  event_type: eventType,
  status,
  attempts: status === "pending" ? [] : [{ at: EXAMPLE_TIMES.deliveryAttempt, status_code: 200, duration_ms: 138, error: null }],
  next_attempt_at: status === "pending" ? EXAMPLE_TIMES.deliveryCreated : null,
  created_at: EXAMPLE_TIMES.deliveryCreated,
  finished_at: status === "pending" ? null : EXAMPLE_TIMES.deliveryDone
})

export const EXAMPLE_IDEMPOTENCY_KEY = "5f0c8a9e-3b1d-4c62-9f7a-1e2d3c4b5a69"

/** A signed storage link as the local store makes them (adapters/local-storage/signing.ts). */
export const exampleSignedUrl = (baseUrl: string, key: string, query: string) =>
  `${baseUrl}/storage/${key}?${query}&x-hush-signature=Q2h4eU1kV0ZtYnNoR1B0R0p6c0VxQm9a`

export const examplePutUpload = (baseUrl: string) => ({
  method: "PUT",
  url: exampleSignedUrl(
    baseUrl,
    `staging/${EXAMPLE_IDS.file}`,
    `x-hush-op=put&x-hush-expires=${Date.parse(EXAMPLE_TIMES.uploadExpires)}&x-hush-content-type=audio%2Fwav&x-hush-content-length=${EXAMPLE_INPUT.sizeBytes}`
  ),
  headers: { "Content-Type": EXAMPLE_INPUT.contentType },
  expires_at: EXAMPLE_TIMES.uploadExpires
})

export const exampleOutputLink = (baseUrl: string) => ({
  url: exampleSignedUrl(
    baseUrl,
    `outputs/${EXAMPLE_IDS.job}.mp3`,
    `x-hush-op=get&x-hush-expires=${Date.parse(EXAMPLE_TIMES.linkExpires)}&x-hush-filename=${EXAMPLE_OUTPUT_NAME}&x-hush-content-type=audio%2Fmpeg`
  ),
  expires_at: EXAMPLE_TIMES.linkExpires,
  filename: EXAMPLE_OUTPUT_NAME
})

export const publicExamples = (baseUrl: string): OperationExamples => {
  return {
    health: { answered: "The API is up.", answer: { status: "ok", version: HUSH_VERSION, env: "production" } },
    listModels: { answered: "Every model of the catalog.", answer: { object: "list", data: [model] } },
    getModel: {
      answered: "The model.",
      path: { provider: RNNOISE.id.split("/")[0]!, model: RNNOISE.id.split("/")[1]! },
      answer: model
    },
    status: {
      answered: "The state of each component.",
      answer: { status: "ok", components: { api: "ok", database: "ok", queue: "ok", storage: "ok", gpu: "unknown" }, updated_at: EXAMPLE_TIMES.now }
    },
    createFile: {
      answered: "The file, `uploading`, and where to PUT its bytes.",
      headers: { "Idempotency-Key": EXAMPLE_IDEMPOTENCY_KEY },
      body: { filename: EXAMPLE_INPUT.filename, size_bytes: EXAMPLE_INPUT.sizeBytes, content_type: EXAMPLE_INPUT.contentType },
      answer: {
        id: EXAMPLE_IDS.file,
        status: "uploading",
        upload: examplePutUpload(baseUrl)
      }
    },
    getFile: { answered: "The file.", path: { file_id: EXAMPLE_IDS.file }, answer: exampleFile("ready") },
    deleteFile: { answered: "The file and its bytes are gone.", path: { file_id: EXAMPLE_IDS.file } },
    completeFile: {
      answered: "The file, `validating`: poll it until it is `ready` or `rejected`.",
      path: { file_id: EXAMPLE_IDS.file },
      headers: { "Idempotency-Key": "0b7e4f21-6c3a-4d58-8e19-2a5b7c9d1f30" },
      answer: exampleFile("validating"),
      problems: { invalid_request: `uploaded size does not match size_bytes: ${EXAMPLE_INPUT.sizeBytes - 44} bytes were uploaded, ${EXAMPLE_INPUT.sizeBytes} declared` }
    },
    createDenoiseJob: {
      answered: "The job, `queued`, its exact cost held from available credit: poll it until its status is final.",
      headers: { "Idempotency-Key": "9d2c6b1a-7e48-4f3d-a5c0-3b8e1f6d2a47" },
      body: { file: EXAMPLE_IDS.file },
      answer: exampleJob("queued")
    },
    listJobs: {
      answered: "A page of jobs, newest first.",
      query: { limit: "20", status: "succeeded" },
      answer: { data: [exampleJob("succeeded")], next_cursor: null }
    },
    getJob: { answered: "The job.", path: { job_id: EXAMPLE_IDS.job }, answer: exampleJob("succeeded") },
    cancelJob: {
      answered: "The job, `canceled`, its hold released.",
      path: { job_id: EXAMPLE_IDS.job },
      headers: { "Idempotency-Key": "3e9a1c7b-5d20-4b86-9f4e-7c1a2b3d4e5f" },
      answer: exampleJob("canceled")
    },
    getJobOutput: {
      answered: "A fresh download link, valid for an hour.",
      path: { job_id: EXAMPLE_IDS.job },
      answer: exampleOutputLink(baseUrl)
    },
    getCredits: { answered: "The account's credit.", answer: credits },
    getMe: {
      answered: "The calling key.",
      answer: {
        account_id: EXAMPLE_IDS.account,
        key_id: EXAMPLE_IDS.key,
        mode: "live",
        scopes: ["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"],
        balance: credits
      }
    },
    createWebhookEndpoint: {
      answered: "The endpoint with its signing secret, shown only here.",
      headers: { "Idempotency-Key": "c41d7e2a-9b36-4f05-8a1c-6e2f3d4b5c70" },
      body: { url: exampleWebhookEndpoint.url, events: exampleWebhookEndpoint.events, description: exampleWebhookEndpoint.description },
      answer: { ...exampleWebhookEndpoint, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7UPKm4xZ6hA=" }
    },
    listWebhookEndpoints: { answered: "The endpoints, oldest first.", answer: { data: [exampleWebhookEndpoint], next_cursor: null } },
    getWebhookEndpoint: { answered: "The endpoint.", path: { endpoint_id: EXAMPLE_IDS.webhookEndpoint }, answer: exampleWebhookEndpoint },
    deleteWebhookEndpoint: { answered: "The endpoint is gone.", path: { endpoint_id: EXAMPLE_IDS.webhookEndpoint } },
    listWebhookDeliveries: {
      answered: "A page of deliveries, newest first.",
      path: { endpoint_id: EXAMPLE_IDS.webhookEndpoint },
      query: { limit: "20" },
      answer: { data: [exampleDelivery("job.succeeded", "succeeded")], next_cursor: null }
    },
    sendWebhookTest: {
      answered: "The pending delivery of the `webhook.test` event.",
      path: { endpoint_id: EXAMPLE_IDS.webhookEndpoint },
      answer: exampleDelivery("webhook.test", "pending")
    }
  }
}
