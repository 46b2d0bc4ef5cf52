/** The signed-in dashboard (decisions.md, Dashboard): account, keys, credit, ledger, usage, jobs. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Mode } from "../../../../core/domain/enums.js"
import { IdempotencyKeyReused, JobNotSucceeded, NotFound, OutputExpired, ProviderError } from "../../../../core/errors.js"
import {
  Account, AccountPatch, CheckoutRequest, CheckoutResponse, DashboardCredits, DashboardJobDetail, DashboardJobPage, JobListParams, KeyCreateRequest,
  cursorDescription, KeyCreateResponse, KeyList, KeyOut, LedgerPage, OutputLink, PageLimit, pageLimitDescription, Text, UsageQuery,
  UsageResponse
} from "../../../../core/schema/index.js"
import { withSession } from "../declare.js"
import { STRICT } from "../strict.js"
import { CsrfHeaders } from "../middleware.js"

const strict = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ parseOptions: STRICT }) as S

const keyId = HttpApiSchema.param("key_id", Schema.String.annotations({ description: "The key's id (`key_…`)." }))
const jobId = HttpApiSchema.param("job_id", Schema.String.annotations({ description: "The job's id (`job_…`)." }))
const ModeParam = Schema.optional(Mode).annotations({ description: "`live` (the default) or `test` objects." })

const KeyCreateHeaders = Schema.Struct({
  ...CsrfHeaders.fields,
  "idempotency-key": Schema.optional(Schema.String).annotations({
    description: "1–255 printable characters, kept 24 hours. A replay answers the first key with `secret: null` and `already_displayed: true`."
  })
})

const CheckoutHeaders = Schema.Struct({
  ...CsrfHeaders.fields,
  "idempotency-key": Schema.optional(Schema.String).annotations({
    description: "1–255 printable characters, kept 24 hours. A replay answers the same checkout."
  })
})

export const DashboardGroup = withSession(HttpApiGroup.make("dashboard")
  .add(
    HttpApiEndpoint.get("getAccount", "/v1/dashboard/account").addSuccess(Account)
      .annotate(OpenApi.Summary, "Get the account")
      .annotate(OpenApi.Description, "The account's name, status, terms and training choice.")
  )
  .add(
    HttpApiEndpoint.patch("updateAccount", "/v1/dashboard/account")
      .annotate(OpenApi.Summary, "Rename the account")
      .annotate(OpenApi.Description, "Sets the account's name.")
      .setPayload(strict(AccountPatch))
      .setHeaders(CsrfHeaders)
      .addSuccess(Account)
  )
  .add(
    HttpApiEndpoint.get("listKeys", "/v1/dashboard/keys").addSuccess(KeyList)
      .annotate(OpenApi.Summary, "List API keys")
      .annotate(OpenApi.Description, "Every key of the account, revoked ones included; never a secret.")
  )
  .add(
    HttpApiEndpoint.post("createKey", "/v1/dashboard/keys")
      .annotate(OpenApi.Summary, "Create an API key")
      .annotate(OpenApi.Description, "The secret is shown once, in this answer.")
      .setPayload(strict(KeyCreateRequest))
      .setHeaders(KeyCreateHeaders)
      .addSuccess(KeyCreateResponse, { status: 201 })
      .addError(NotFound)
      .addError(IdempotencyKeyReused)
      .annotate(OpenApi.Description, "Live keys need a verified address and accepted terms (403). At most 50 unrevoked keys (403).")
  )
  .add(
    HttpApiEndpoint.post("revokeKey")`/v1/dashboard/keys/${keyId}/revoke`
      .annotate(OpenApi.Summary, "Revoke an API key")
      .annotate(OpenApi.Description, "The key stops working on the next request.")
      .setHeaders(CsrfHeaders)
      .addSuccess(KeyOut)
      .addError(NotFound)
  )
  .add(
    HttpApiEndpoint.get("getDashboardCredits", "/v1/dashboard/credits").addSuccess(DashboardCredits)
      .annotate(OpenApi.Summary, "Get credit and lots")
      .annotate(OpenApi.Description, "Balance, holds and available credit, with each purchased lot and its expiry.")
  )
  .add(
    HttpApiEndpoint.post("createCheckout", "/v1/dashboard/checkout")
      .setPayload(strict(CheckoutRequest))
      .setHeaders(CheckoutHeaders)
      .addSuccess(CheckoutResponse, { status: 201 })
      .addError(IdempotencyKeyReused)
      .addError(ProviderError)
      .annotate(OpenApi.Summary, "Buy credit")
      .annotate(
        OpenApi.Description,
        "Opens a payment page (`url`) for `amount_micros`: $10 to $1,000 in whole cents (else 422). Needs a verified e-mail address (403). " +
          "Credit arrives when the provider reports the payment (POST /v1/webhooks/payments)."
      )
  )
  .add(
    HttpApiEndpoint.get("getLedger", "/v1/dashboard/ledger")
      .annotate(OpenApi.Summary, "List ledger entries")
      .annotate(OpenApi.Description, "Every credit movement, newest first, with the balances after it.")
      .setUrlParams(Schema.Struct({
        limit: Schema.optional(PageLimit).annotations({ description: pageLimitDescription }),
        cursor: Schema.optional(Text).annotations({ description: cursorDescription })
      }))
      .addSuccess(LedgerPage)
  )
  .add(
    HttpApiEndpoint.get("getUsage", "/v1/dashboard/usage").setUrlParams(Schema.Struct(UsageQuery.fields)).addSuccess(UsageResponse)
      .annotate(OpenApi.Summary, "Get usage")
      .annotate(OpenApi.Description, "Jobs, billable seconds and charges per day, model or key over a date range.")
  )
  .add(
    HttpApiEndpoint.get("listDashboardJobs", "/v1/dashboard/jobs")
      .annotate(OpenApi.Summary, "List jobs of every key")
      .annotate(OpenApi.Description, "Newest first, with the key that created each job.")
      .setUrlParams(Schema.Struct({ ...JobListParams.fields, mode: ModeParam }))
      .addSuccess(DashboardJobPage)
  )
  .add(
    HttpApiEndpoint.get("getDashboardJob")`/v1/dashboard/jobs/${jobId}`
      .annotate(OpenApi.Summary, "Get a job with its ledger")
      .annotate(OpenApi.Description, "The job, its key and its ledger entries, oldest first.")
      .setUrlParams(Schema.Struct({ mode: ModeParam }))
      .addSuccess(DashboardJobDetail)
      .addError(NotFound)
  )
  .add(
    HttpApiEndpoint.get("getDashboardJobOutput")`/v1/dashboard/jobs/${jobId}/output`
      .setUrlParams(Schema.Struct({ mode: ModeParam }))
      .addSuccess(OutputLink)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Get a download link for a job's output")
      .addError(JobNotSucceeded)
      .addError(OutputExpired)
      .annotate(OpenApi.Description, "A fresh signed download link (1 hour) for a succeeded job's output, as GET /v1/jobs/{job_id}/output gives an API key.")
  )
  .annotate(OpenApi.Description, "The signed-in dashboard: its own account only. `mode` picks live (default) or test objects.")
)
