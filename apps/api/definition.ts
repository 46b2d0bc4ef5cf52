/**
 * The /v1 HTTP surface as one HttpApi: routing, request decoding, success encoding and the
 * OpenAPI description all come from here. Errors are declared for the description; the edge
 * (apps/api/edge) renders every one of them as an RFC 9457 problem.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
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
import { CurrentCaller } from "../../core/services/caller.js"
import { STRICT } from "./edge/strict.js"
import { AuthGroup, SessionGroup } from "./groups/auth.js"
import { DashboardGroup } from "./groups/dashboard.js"
import { PaymentWebhookGroup } from "./groups/payments.js"
import { describeProblems } from "./openapi.js"

/** JSON bodies are decoded strictly (edge/strict.ts): an unknown field is `422 invalid_request`. */
const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

/** Bearer API key → the calling account, mode and scopes. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(Unauthorized, AccountFrozen, ServiceUnavailable),
  provides: CurrentCaller,
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

const fileId = HttpApiSchema.param("file_id", Schema.String)
const jobId = HttpApiSchema.param("job_id", Schema.String)

export const PublicGroup = HttpApiGroup.make("public")
  .add(HttpApiEndpoint.get("health", "/v1/health").addSuccess(Health))
  .add(HttpApiEndpoint.get("listModels", "/v1/models").addSuccess(ModelList))
  .add(
    HttpApiEndpoint.get("getModel")`/v1/models/${HttpApiSchema.param("provider", Schema.String)}/${HttpApiSchema.param("model", Schema.String)}`
      .addSuccess(Model)
      .addError(NotFound, { status: 404 })
  )
  .add(HttpApiEndpoint.get("status", "/v1/status").addSuccess(PublicStatus))
  .addError(RateLimited, { status: 429 })
  .annotate(OpenApi.Description, "Public endpoints: no key needed.")

export const FilesGroup = HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("createFile", "/v1/files")
      .setPayload(strict(CreateIn))
      .addSuccess(CreateOut, { status: 201 })
      .addError(UnsupportedMediaType, { status: 415 })
      .addError(FileTooLarge, { status: 413 })
      .addError(QuotaExceeded, { status: 429 })
      .addError(IdempotencyKeyReused, { status: 409 })
  )
  .add(
    HttpApiEndpoint.get("getFile")`/v1/files/${fileId}`
      .addSuccess(File)
  )
  .add(
    HttpApiEndpoint.del("deleteFile")`/v1/files/${fileId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(FileInUse, { status: 409 })
  )
  .add(
    HttpApiEndpoint.post("completeFile")`/v1/files/${fileId}/complete`
      // the body is optional (absent or null): read and decoded by the handler
      .addSuccess(File, { status: 202 })
      .addError(UploadExpired, { status: 409 })
      .addError(QuotaExceeded, { status: 429 })
      .addError(IdempotencyKeyReused, { status: 409 })
      .annotate(OpenApi.Override, {
        requestBody: {
          required: false,
          content: { "application/json": { schema: { anyOf: [{ $ref: "#/components/schemas/CompleteIn" }, { type: "null" }] } } }
        }
      })
  )
  .addError(NotFound, { status: 404 })
  .middleware(Authentication)

export const JobsGroup = HttpApiGroup.make("jobs")
  .add(
    HttpApiEndpoint.post("createDenoiseJob", "/v1/audio/denoise")
      .setPayload(strict(DenoiseIn))
      .addSuccess(Job, { status: 202 })
      .addError(FileNotReady, { status: 409 })
      .addError(ModelNotAvailable, { status: 422 })
      .addError(AudioTooLong, { status: 422 })
      .addError(FileTooLarge, { status: 413 })
      .addError(InsufficientCredit, { status: 402 })
      .addError(AccountSuspended, { status: 403 })
      .addError(IdempotencyKeyReused, { status: 409 })
  )
  // a fresh struct of the same fields: with its identifier, the description would show a
  // reference instead of the query parameters
  .add(HttpApiEndpoint.get("listJobs", "/v1/jobs").setUrlParams(Schema.Struct(JobListParams.fields)).addSuccess(JobPage))
  .add(HttpApiEndpoint.get("getJob")`/v1/jobs/${jobId}`.addSuccess(Job))
  .add(
    HttpApiEndpoint.post("cancelJob")`/v1/jobs/${jobId}/cancel`
      .addSuccess(Job)
      .addError(JobNotCancelable, { status: 409 })
      .addError(IdempotencyKeyReused, { status: 409 })
  )
  .add(
    HttpApiEndpoint.get("getJobOutput")`/v1/jobs/${jobId}/output`
      .addSuccess(OutputLink)
      .addError(JobNotSucceeded, { status: 409 })
      .addError(OutputExpired, { status: 410 })
  )
  .addError(NotFound, { status: 404 })
  .middleware(Authentication)

export const AccountGroup = HttpApiGroup.make("account")
  .add(HttpApiEndpoint.get("getCredits", "/v1/credits").addSuccess(Credits))
  .add(HttpApiEndpoint.get("getMe", "/v1/me").addSuccess(MeOut))
  .middleware(Authentication)

export const HushApi = HttpApi.make("hush")
  .add(PublicGroup)
  .add(FilesGroup)
  .add(JobsGroup)
  .add(AccountGroup)
  .add(AuthGroup)
  .add(SessionGroup)
  .add(DashboardGroup)
  .add(PaymentWebhookGroup)
  .addError(InvalidRequest, { status: 422 })
  .addError(InsufficientScope, { status: 403 })
  .addError(RequestTooLarge, { status: 413 })
  .addError(InternalError, { status: 500 })
  // CompleteIn is referenced by the complete endpoint's hand-written request body
  .annotate(HttpApi.AdditionalSchemas, [CompleteIn])
  .annotate(OpenApi.Transform, describeProblems)
  .annotate(OpenApi.Title, "Hush audio denoising API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Description, "Upload audio through signed URLs, run denoise jobs, download clean MP3s. Billed per second from prepaid credit.")

export { CompleteIn }
