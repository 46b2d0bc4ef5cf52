/**
 * Denoising from the dashboard (decisions.md, Web dashboard: doing the work): the keyed API's
 * files and jobs operations on the session's account in live mode, through the same core
 * services, so the prices, limits, quotas and checks are the keyed API's own. The edge gives
 * them what it gives a key: the account's rate buckets, and `Idempotency-Key` (kept for the
 * account's live mode, as a live key's would be).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Mode } from "../../../../core/domain/enums.js"
import {
  AccountFrozen, AccountSuspended, AudioTooLong, FileNotReady, FileTooLarge, InsufficientCredit, JobNotCancelable,
  ModelNotAvailable, NotFound, QuotaExceeded, UnsupportedMediaType, UploadExpired
} from "../../../../core/errors.js"
import { CompleteIn, CreateIn, CreateOut, DashboardJob, DenoiseIn, File, fileIdDescription, OutputLink } from "../../../../core/schema/index.js"
import { Idempotent } from "../annotations.js"
import { withSession } from "../declare.js"
import { STRICT } from "../strict.js"
import { CsrfHeaders } from "../middleware.js"

const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

const fileId = HttpApiSchema.param("file_id", Schema.String.annotations({ description: fileIdDescription }))
const jobId = HttpApiSchema.param("job_id", Schema.String.annotations({ description: "The job's id (`job_…`)." }))

/** The CSRF token, and the `Idempotency-Key` the edge honours on these creations. */
export const IdempotentCsrfHeaders = Schema.Struct({
  ...CsrfHeaders.fields,
  "idempotency-key": Schema.optional(Schema.String).annotations({
    description: "1–255 printable characters, kept 24 hours: a retry with the same key answers the first result (`Idempotent-Replayed: true`)."
  })
})

export const DashboardWorkGroup = withSession(HttpApiGroup.make("dashboardWork")
  .add(
    HttpApiEndpoint.post("createDashboardFile", "/v1/dashboard/files")
      .annotate(OpenApi.Summary, "Create a file and its upload target")
      .annotate(OpenApi.Description, "As POST /v1/files, for the account's live mode: one signed PUT up to 100 MiB, else a multipart upload in 64 MiB parts.")
      .setPayload(strict(CreateIn))
      .setHeaders(IdempotentCsrfHeaders)
      .addSuccess(CreateOut, { status: 201 })
      .addError(UnsupportedMediaType)
      .addError(FileTooLarge)
      .addError(QuotaExceeded)
      .annotate(Idempotent, true)
  )
  .add(
    HttpApiEndpoint.get("getDashboardFile")`/v1/dashboard/files/${fileId}`
      .annotate(OpenApi.Summary, "Get a file")
      .annotate(OpenApi.Description, "As GET /v1/files/{file_id}: its status, and its duration once validated.")
      .addSuccess(File)
      .addError(NotFound)
  )
  .add(
    HttpApiEndpoint.post("completeDashboardFile")`/v1/dashboard/files/${fileId}/complete`
      .annotate(OpenApi.Summary, "Complete an upload")
      .annotate(OpenApi.Description, "As POST /v1/files/{file_id}/complete; the body is required here (`{}` for a PUT upload, the parts' ETags for a multipart one).")
      .setPayload(strict(CompleteIn))
      .setHeaders(IdempotentCsrfHeaders)
      .addSuccess(File, { status: 202 })
      .addError(NotFound)
      .addError(UploadExpired)
      .addError(QuotaExceeded)
      .annotate(Idempotent, true)
  )
  .add(
    HttpApiEndpoint.post("createDashboardDenoiseJob", "/v1/dashboard/audio/denoise")
      .annotate(OpenApi.Summary, "Create a denoise job")
      .annotate(OpenApi.Description, "As POST /v1/audio/denoise, in live mode: holds the exact cost from available credit; only a succeeded job is charged.")
      .setPayload(strict(DenoiseIn))
      .setHeaders(IdempotentCsrfHeaders)
      .addSuccess(DashboardJob, { status: 202 })
      .addError(NotFound)
      .addError(FileNotReady)
      .addError(ModelNotAvailable)
      .addError(AudioTooLong)
      .addError(FileTooLarge)
      .addError(InsufficientCredit)
      .addError(AccountSuspended)
      .annotate(Idempotent, true)
  )
  .add(
    HttpApiEndpoint.post("cancelDashboardJob")`/v1/dashboard/jobs/${jobId}/cancel`
      .annotate(OpenApi.Summary, "Cancel a job")
      .annotate(OpenApi.Description, "As POST /v1/jobs/{job_id}/cancel, for a live job: only while queued; its hold is released.")
      .setHeaders(IdempotentCsrfHeaders)
      .addSuccess(DashboardJob)
      .addError(NotFound)
      .addError(JobNotCancelable)
      .annotate(Idempotent, true)
  )
  .add(
    HttpApiEndpoint.get("getDashboardJobInput")`/v1/dashboard/jobs/${jobId}/input`
      .setUrlParams(Schema.Struct({ mode: Schema.optional(Mode).annotations({ description: "`live` (the default) or `test` objects." }) }))
      .addSuccess(OutputLink)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Get a link to a job's input")
      .annotate(OpenApi.Description, "A fresh signed link (1 hour) to the audio the job was given, while it is kept (until its file is deleted, at most 7 days after upload; then 404): the dashboard plays it beside the output.")
  )
  .addError(AccountFrozen)
  .annotate(OpenApi.Description, "Denoising from the dashboard: the keyed API's files and jobs, on the session's account in live mode, with the same rules.")
)
