/**
 * The /v1 HTTP surface as one HttpApi: routing, request decoding, success encoding, the
 * OpenAPI description and the edge's facts (who calls, rate bucket, idempotency, scopes: see
 * annotations.ts and declare.ts) all come from here. Errors carry their own status;
 * the edge (apps/api/server/edge) renders every one of them as an RFC 9457 problem.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountSuspended, AudioTooLong, FileInUse, FileNotReady, FileTooLarge, InsufficientCredit, InsufficientScope, InternalError,
  InvalidRequest, JobNotCancelable, JobNotSucceeded, ModelNotAvailable, NotFound, OutputExpired, QuotaExceeded, RequestTooLarge,
  UnsupportedMediaType, UploadExpired
} from "../../../core/errors.js"
import {
  CompleteIn, CreateIn, CreateOut, Credits, DenoiseIn, File, fileIdDescription, Health, Job, JobListParams, JobPage, MeOut, Model,
  ModelList, OutputLink, PublicStatus
} from "../../../core/schema/index.js"
import { Idempotent, RateBucket, RequiredScopes } from "./annotations.js"
import { withApiKey, withoutCaller } from "./declare.js"
import { STRICT } from "./strict.js"
import { AuthGroup, SessionGroup } from "./groups/auth.js"
import { DashboardGroup } from "./groups/dashboard.js"
import { DashboardWebhooksGroup } from "./groups/dashboard-webhooks.js"
import { DashboardWorkGroup } from "./groups/dashboard-work.js"
import { PaymentWebhookGroup } from "./groups/payments.js"
import { WebhooksGroup } from "./groups/webhooks.js"
import { OperationsGroup } from "./groups/operations.js"

/** JSON bodies are decoded strictly (strict.ts): an unknown field is `422 invalid_request`. */
const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

export { Authentication } from "./middleware.js"

const fileId = HttpApiSchema.param("file_id", Schema.String.annotations({ description: fileIdDescription }))
const jobId = HttpApiSchema.param("job_id", Schema.String.annotations({ description: "The job's id (`job_…`), as `POST /v1/audio/denoise` answered it." }))

export const PublicGroup = withoutCaller(HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("health", "/v1/health").addSuccess(Health).annotate(RateBucket, "unlimited")
      .annotate(OpenApi.Summary, "Check the service is up")
      .annotate(OpenApi.Description, "Answers while the API process runs, with its version and environment. No key needed; never rate limited.")
  )
  .add(
    HttpApiEndpoint.get("listModels", "/v1/models").addSuccess(ModelList)
      .annotate(OpenApi.Summary, "List models")
      .annotate(OpenApi.Description, "Every model with its status, price (micros per second of audio, with a minimum of billed seconds) and limits. The default model for `POST /v1/audio/denoise` is `xiph/rnnoise`. No key needed.")
  )
  .add(
    HttpApiEndpoint.get("getModel")`/v1/models/${
      HttpApiSchema.param("provider", Schema.String.annotations({ description: "The model id's first part, e.g. `xiph` of `xiph/rnnoise`." }))
    }/${HttpApiSchema.param("model", Schema.String.annotations({ description: "The model id's second part, e.g. `rnnoise` of `xiph/rnnoise`." }))}`
      .addSuccess(Model)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Get a model")
      .annotate(OpenApi.Description, "One model by its id, `{provider}/{model}`: its status, price and limits. No key needed.")
  )
  .add(
    HttpApiEndpoint.get("status", "/v1/status").addSuccess(PublicStatus)
      .annotate(OpenApi.Summary, "Get service status")
      .annotate(OpenApi.Description, "The state of each part of the service (API, database, job queue, storage, GPU provider), as a status page shows it. No key needed.")
  )
  .annotate(OpenApi.Description, "Public endpoints: no key needed; limited to 120 requests a minute per IP address, health not at all."))

export const FilesGroup = withApiKey(HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("createFile", "/v1/files")
      .annotate(OpenApi.Summary, "Create a file and its upload target")
      .annotate(OpenApi.Description, "Registers a file of `size_bytes` and answers where to send its bytes: one signed PUT (send `upload.headers` with it) up to 100 MiB, else a multipart upload in 64 MiB parts. Bytes never go through the API. The upload stays open 6 hours; then call complete.")
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
      .annotate(OpenApi.Description, "Its status (`uploading`, `validating`, `ready`, `rejected`), its duration once validated, and why it was rejected. Poll it after complete until it is `ready` or `rejected`.")
      .addSuccess(File)
      .addError(NotFound)
      .annotate(RequiredScopes, ["files:write", "jobs:read"])
  )
  .add(
    HttpApiEndpoint.del("deleteFile")`/v1/files/${fileId}`
      .annotate(OpenApi.Summary, "Delete a file")
      .annotate(OpenApi.Description, "Removes the file and its bytes; refused (409 file_in_use) while a queued or processing job uses it.")
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .addError(FileInUse)
      .annotate(RequiredScopes, ["files:write"])
  )
  .add(
    HttpApiEndpoint.post("completeFile")`/v1/files/${fileId}/complete`
      .annotate(OpenApi.Summary, "Complete an upload")
      .annotate(OpenApi.Description, "Call once the bytes are sent: with no body for a PUT upload, with each part's ETag for a multipart one. The file becomes `validating`, then `ready` or `rejected` (poll it). An upload whose size differs from `size_bytes` is 422 and the file stays `uploading`.")
      // the body is optional (absent or null): read and decoded by the handler (its fields: 422)
      .addSuccess(File, { status: 202 })
      .addError(InvalidRequest)
      .addError(NotFound)
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
  .annotate(OpenApi.Description, "Files: create one, send its bytes to the signed upload target, complete it, and it is validated.")
)

export const JobsGroup = withApiKey(HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.post("createDenoiseJob", "/v1/audio/denoise")
      .annotate(OpenApi.Summary, "Create a denoise job")
      .annotate(OpenApi.Description, "Denoises a `ready` file with a model (by default `xiph/rnnoise`), optionally with a strength, output format and loudness target. Its exact cost is held from available credit at once; only a succeeded job is charged. Poll the job until it is final. With a test key the job costs nothing and its output is the service's sample clip, not your audio.")
      .setPayload(strict(DenoiseIn))
      .addSuccess(Job, { status: 202 })
      .addError(NotFound)
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
      .annotate(OpenApi.Description, "The jobs of the key's mode, newest first, optionally only those of a status or a model; follow `next_cursor` for the next page.")
      .annotate(RequiredScopes, ["jobs:read"]))
  .add(HttpApiEndpoint.get("getJob")`/v1/jobs/${jobId}`.addSuccess(Job).addError(NotFound)
      .annotate(OpenApi.Summary, "Get a job")
      .annotate(OpenApi.Description, "Its status and progress, cost and receipt, output and error. Poll it (every second or two) until it is `succeeded`, `failed` or `canceled`.")
      .annotate(RequiredScopes, ["jobs:read"]))
  .add(
    HttpApiEndpoint.post("cancelJob")`/v1/jobs/${jobId}/cancel`
      .annotate(OpenApi.Summary, "Cancel a job")
      .annotate(OpenApi.Description, "Cancels a queued job and releases its hold; a job already processing cannot be canceled (409 job_not_cancelable).")
      .addSuccess(Job)
      .addError(NotFound)
      .addError(JobNotCancelable)
      .annotate(Idempotent, true)
      .annotate(RequiredScopes, ["jobs:write"])
  )
  .add(
    HttpApiEndpoint.get("getJobOutput")`/v1/jobs/${jobId}/output`
      .annotate(OpenApi.Summary, "Get a job's output link")
      .annotate(OpenApi.Description, "A fresh signed download URL of a succeeded job's denoised audio, valid for an hour and needing no key; outputs are kept 7 days. A test job's output is the service's sample clip.")
      .addSuccess(OutputLink)
      .addError(NotFound)
      .addError(JobNotSucceeded)
      .addError(OutputExpired)
      .annotate(RequiredScopes, ["jobs:read"])
  )
  .annotate(OpenApi.Description, "Denoise jobs: create one on a ready file, poll it, download its output.")
)

export const AccountGroup = withApiKey(HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("getCredits", "/v1/credits").addSuccess(Credits)
      .annotate(OpenApi.Summary, "Get credit balance")
      .annotate(OpenApi.Description, "The balance, the credit held by running jobs, and what is available for new jobs, in micros of a US dollar. A test key sees an empty sandbox wallet.")
      .annotate(RequiredScopes, ["credits:read"])
  )
  .add(
    HttpApiEndpoint.get("getMe", "/v1/me").addSuccess(MeOut)
      .annotate(OpenApi.Summary, "Describe the calling key")
      .annotate(OpenApi.Description, "The key's account, mode and scopes, and the account's credit when the key has `credits:read`. Any valid key may call it.")
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
  // its reference documents are built from the same groups: apps/api/server/openapi/documents.ts

export { CompleteIn }
