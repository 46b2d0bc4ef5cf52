/**
 * The /v1 HTTP surface as one HttpApi: routing, request decoding, success encoding, the
 * OpenAPI description and the edge's facts (who calls, rate bucket, idempotency, scopes: see
 * edge/annotations.ts and edge/declare.ts) all come from here. Errors carry their own status;
 * the edge (apps/api/edge) renders every one of them as an RFC 9457 problem.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountSuspended, AudioTooLong, FileInUse, FileNotReady, FileTooLarge, InsufficientCredit, InsufficientScope,
  InternalError, InvalidRequest, JobNotCancelable, JobNotSucceeded, ModelNotAvailable, NotFound, OutputExpired,
  QuotaExceeded, RateLimited, RequestTooLarge, UnsupportedMediaType, UploadExpired
} from "../../core/errors.js"
import {
  CompleteIn, CreateIn, CreateOut, Credits, DenoiseIn, File, Health, Job, JobListParams, JobPage, MeOut, Model,
  ModelList, OutputLink, PublicStatus
} from "../../core/schema/index.js"
import { Idempotent, RateBucket, RequiredScopes } from "./edge/annotations.js"
import { withApiKey, withoutCaller } from "./edge/declare.js"
import { STRICT } from "./edge/strict.js"
import { AuthGroup, SessionGroup } from "./groups/auth.js"
import { DashboardGroup } from "./groups/dashboard.js"
import { DashboardWebhooksGroup } from "./groups/dashboard-webhooks.js"
import { DashboardWorkGroup } from "./groups/dashboard-work.js"
import { PaymentWebhookGroup } from "./groups/payments.js"
import { WebhooksGroup } from "./groups/webhooks.js"
import { OperationsGroup } from "./operations/group.js"
import { HUSH_VERSION } from "../../core/version.js"

/** JSON bodies are decoded strictly (edge/strict.ts): an unknown field is `422 invalid_request`. */
const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

export { Authentication } from "./edge/middleware.js"

const fileId = HttpApiSchema.param("file_id", Schema.String)
const jobId = HttpApiSchema.param("job_id", Schema.String)

export const PublicGroup = withoutCaller(HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("health", "/v1/health").addSuccess(Health).annotate(RateBucket, "unlimited")
      .annotate(OpenApi.Summary, "Check the service is up")
      .annotate(OpenApi.Description, "Liveness of the API process: its version and environment. Never rate limited.")
  )
  .add(
    HttpApiEndpoint.get("listModels", "/v1/models").addSuccess(ModelList)
      .annotate(OpenApi.Summary, "List models")
      .annotate(OpenApi.Description, "Every model with its status, pricing (micros per second of audio, minimum billable units) and limits.")
  )
  .add(
    HttpApiEndpoint.get("getModel")`/v1/models/${HttpApiSchema.param("provider", Schema.String)}/${HttpApiSchema.param("model", Schema.String)}`
      .addSuccess(Model)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Get a model")
      .annotate(OpenApi.Description, "One model by provider and name, e.g. `xiph/rnnoise`.")
  )
  .add(
    HttpApiEndpoint.get("status", "/v1/status").addSuccess(PublicStatus)
      .annotate(OpenApi.Summary, "Get service status")
      .annotate(OpenApi.Description, "The state of each component (API, database, queue, storage, GPU), for a status page.")
  )
  .addError(RateLimited)
  .annotate(OpenApi.Description, "Public endpoints: no key needed; limited per IP, health not at all."))

export const FilesGroup = withApiKey(HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("createFile", "/v1/files")
      .annotate(OpenApi.Summary, "Create a file and its upload target")
      .annotate(OpenApi.Description, "Registers a file of `size_bytes` and answers where to send its bytes: one signed PUT up to 100 MiB, else a multipart upload in 64 MiB parts. The upload stays open 6 hours.")
      .setPayload(strict(CreateIn))
      .addSuccess(CreateOut, { status: 201 })
      .addError(UnsupportedMediaType)
      .addError(FileTooLarge)
      .addError(QuotaExceeded)
      .annotate(Idempotent, true)
      .annotate(RequiredScopes, ["files:write"])
  )
  .add(
    HttpApiEndpoint.get("getFile")`/v1/files/${fileId}`
      .annotate(OpenApi.Summary, "Get a file")
      .annotate(OpenApi.Description, "Its status (`uploading`, `validating`, `ready`, `rejected`), duration once validated, and the rejection reason.")
      .addSuccess(File)
  )
  .add(
    HttpApiEndpoint.del("deleteFile")`/v1/files/${fileId}`
      .annotate(OpenApi.Summary, "Delete a file")
      .annotate(OpenApi.Description, "Removes the file and its bytes; refused (409 file_in_use) while a queued or processing job uses it.")
      .addSuccess(HttpApiSchema.NoContent)
      .addError(FileInUse)
  )
  .add(
    HttpApiEndpoint.post("completeFile")`/v1/files/${fileId}/complete`
      .annotate(OpenApi.Summary, "Complete an upload")
      .annotate(OpenApi.Description, "Call once the bytes are sent (with each part's ETag for a multipart upload): the file is validated and becomes `ready` or `rejected`.")
      // the body is optional (absent or null): read and decoded by the handler
      .addSuccess(File, { status: 202 })
      .addError(UploadExpired)
      .addError(QuotaExceeded)
      .annotate(Idempotent, true)
      .annotate(RequiredScopes, ["files:write"])
      .annotate(OpenApi.Override, {
        requestBody: {
          required: false,
          content: { "application/json": { schema: { anyOf: [{ $ref: "#/components/schemas/CompleteIn" }, { type: "null" }] } } }
        }
      })
  )
  .addError(NotFound)
  .annotate(OpenApi.Description, "Files: create one, send its bytes to the signed upload target, complete it, and it is validated.")
)

export const JobsGroup = withApiKey(HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.post("createDenoiseJob", "/v1/audio/denoise")
      .annotate(OpenApi.Summary, "Create a denoise job")
      .annotate(OpenApi.Description, "Denoises a ready file with a model (default: the task's default). Holds the exact cost from available credit; only a succeeded job is charged.")
      .setPayload(strict(DenoiseIn))
      .addSuccess(Job, { status: 202 })
      .addError(FileNotReady)
      .addError(ModelNotAvailable)
      .addError(AudioTooLong)
      .addError(FileTooLarge)
      .addError(InsufficientCredit)
      .addError(AccountSuspended)
      .annotate(Idempotent, true)
      .annotate(RequiredScopes, ["jobs:write"])
  )
  // a fresh struct of the same fields: with its identifier, the description would show a
  // reference instead of the query parameters
  .add(HttpApiEndpoint.get("listJobs", "/v1/jobs").setUrlParams(Schema.Struct(JobListParams.fields)).addSuccess(JobPage)
      .annotate(OpenApi.Summary, "List jobs")
      .annotate(OpenApi.Description, "Newest first, filtered by status or model; follow `next_cursor` for the next page."))
  .add(HttpApiEndpoint.get("getJob")`/v1/jobs/${jobId}`.addSuccess(Job)
      .annotate(OpenApi.Summary, "Get a job")
      .annotate(OpenApi.Description, "Its status and progress, cost and receipt, output and error. Poll it until `succeeded`, `failed` or `canceled`."))
  .add(
    HttpApiEndpoint.post("cancelJob")`/v1/jobs/${jobId}/cancel`
      .annotate(OpenApi.Summary, "Cancel a job")
      .annotate(OpenApi.Description, "Cancels a queued job and releases its hold; a job already processing cannot be canceled (409 job_not_cancelable).")
      .addSuccess(Job)
      .addError(JobNotCancelable)
      .annotate(Idempotent, true)
      .annotate(RequiredScopes, ["jobs:write"])
  )
  .add(
    HttpApiEndpoint.get("getJobOutput")`/v1/jobs/${jobId}/output`
      .annotate(OpenApi.Summary, "Get a job's output link")
      .annotate(OpenApi.Description, "A fresh signed download URL of the denoised audio of a succeeded job; outputs are kept 7 days.")
      .addSuccess(OutputLink)
      .addError(JobNotSucceeded)
      .addError(OutputExpired)
  )
  .addError(NotFound)
  .annotate(OpenApi.Description, "Denoise jobs: create one on a ready file, poll it, download its output.")
)

export const AccountGroup = withApiKey(HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("getCredits", "/v1/credits").addSuccess(Credits)
      .annotate(OpenApi.Summary, "Get credit balance")
      .annotate(OpenApi.Description, "Balance, credit held by running jobs, and what is available for new jobs, in micros of a US dollar. A test key sees an empty sandbox wallet.")
  )
  .add(
    HttpApiEndpoint.get("getMe", "/v1/me").addSuccess(MeOut)
      .annotate(OpenApi.Summary, "Describe the calling key")
      .annotate(OpenApi.Description, "The key's account, mode and scopes, and the balance when the key has `credits:read`.")
  )
  .annotate(OpenApi.Description, "The calling key and its account's credit.")
)

export const HushApi = HttpApi.make("hush")
  .add(PublicGroup)
  .add(FilesGroup)
  .add(JobsGroup)
  .add(AccountGroup)
  .add(WebhooksGroup)
  .add(AuthGroup)
  .add(SessionGroup)
  .add(DashboardGroup)
  .add(DashboardWorkGroup)
  .add(DashboardWebhooksGroup)
  .add(PaymentWebhookGroup)
  // /metrics and /readyz: outside /v1 and the public reference
  .add(OperationsGroup)
  .addError(InvalidRequest)
  .addError(InsufficientScope)
  .addError(RequestTooLarge)
  .addError(InternalError)
  // CompleteIn is referenced by the complete endpoint's hand-written request body
  .annotate(HttpApi.AdditionalSchemas, [CompleteIn])
  .annotate(OpenApi.Title, "Hush audio denoising API")
  .annotate(OpenApi.Version, HUSH_VERSION)
  .annotate(OpenApi.Description, "Upload audio through signed URLs, run denoise jobs, download clean MP3s. Billed per second from prepaid credit.")

export { CompleteIn }
