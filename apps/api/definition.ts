/**
 * The /v1 HTTP surface as one HttpApi: routing, request decoding, success encoding, the
 * OpenAPI description and the edge's facts (who calls, rate bucket, idempotency, scopes: see
 * edge/annotations.ts and edge/declare.ts) all come from here. Errors carry their own status;
 * the edge (apps/api/edge) renders every one of them as an RFC 9457 problem.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountFrozen, AccountSuspended, AudioTooLong, FileInUse, FileNotReady, FileTooLarge, IdempotencyKeyReused,
  InsufficientCredit, InsufficientScope, InternalError, InvalidRequest, JobNotCancelable, JobNotSucceeded,
  ModelNotAvailable, NotFound, OutputExpired, QuotaExceeded, RateLimited, RequestTooLarge, ServiceUnavailable,
  Unauthorized, UnsupportedMediaType, UploadExpired
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
import { WebhooksGroup } from "./groups/webhooks.js"
import { describeProblems } from "./openapi.js"

/** JSON bodies are decoded strictly (edge/strict.ts): an unknown field is `422 invalid_request`. */
const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

export { Authentication } from "./edge/middleware.js"

const fileId = HttpApiSchema.param("file_id", Schema.String)
const jobId = HttpApiSchema.param("job_id", Schema.String)

export const PublicGroup = withoutCaller(HttpApiGroup.make("public")
  .add(HttpApiEndpoint.get("health", "/v1/health").addSuccess(Health).annotate(RateBucket, "unlimited"))
  .add(HttpApiEndpoint.get("listModels", "/v1/models").addSuccess(ModelList))
  .add(
    HttpApiEndpoint.get("getModel")`/v1/models/${HttpApiSchema.param("provider", Schema.String)}/${HttpApiSchema.param("model", Schema.String)}`
      .addSuccess(Model)
      .addError(NotFound)
  )
  .add(HttpApiEndpoint.get("status", "/v1/status").addSuccess(PublicStatus))
  .addError(RateLimited)
  .annotate(OpenApi.Description, "Public endpoints: no key needed; limited per IP, health not at all."))

export const FilesGroup = withApiKey(HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("createFile", "/v1/files")
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
      .addSuccess(File)
  )
  .add(
    HttpApiEndpoint.del("deleteFile")`/v1/files/${fileId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(FileInUse)
  )
  .add(
    HttpApiEndpoint.post("completeFile")`/v1/files/${fileId}/complete`
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
)

export const JobsGroup = withApiKey(HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.post("createDenoiseJob", "/v1/audio/denoise")
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
  .add(HttpApiEndpoint.get("listJobs", "/v1/jobs").setUrlParams(Schema.Struct(JobListParams.fields)).addSuccess(JobPage))
  .add(HttpApiEndpoint.get("getJob")`/v1/jobs/${jobId}`.addSuccess(Job))
  .add(
    HttpApiEndpoint.post("cancelJob")`/v1/jobs/${jobId}/cancel`
      .addSuccess(Job)
      .addError(JobNotCancelable)
      .annotate(Idempotent, true)
      .annotate(RequiredScopes, ["jobs:write"])
  )
  .add(
    HttpApiEndpoint.get("getJobOutput")`/v1/jobs/${jobId}/output`
      .addSuccess(OutputLink)
      .addError(JobNotSucceeded)
      .addError(OutputExpired)
  )
  .addError(NotFound)
)

export const AccountGroup = withApiKey(HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("getCredits", "/v1/credits").addSuccess(Credits))
  .add(HttpApiEndpoint.get("getMe", "/v1/me").addSuccess(MeOut))
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
  .addError(InvalidRequest)
  .addError(InsufficientScope)
  .addError(RequestTooLarge)
  .addError(InternalError)
  // CompleteIn is referenced by the complete endpoint's hand-written request body
  .annotate(HttpApi.AdditionalSchemas, [CompleteIn])
  .annotate(OpenApi.Transform, describeProblems)
  .annotate(OpenApi.Title, "Hush audio denoising API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Upload audio through signed URLs, run denoise jobs, download clean MP3s. Billed per second from prepaid credit.")

export { CompleteIn }
