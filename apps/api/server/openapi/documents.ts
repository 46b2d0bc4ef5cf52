/**
 * The two reference documents (decisions.md, Versioning):
 *  - `GET /v1/openapi.json` (browsed at `/docs`): the public API, what an API key calls;
 *  - `GET /v1/openapi.dashboard.json` (browsed at `/docs/dashboard`): the dashboard's session,
 *    account and work endpoints and the payment provider's webhook, which no API client calls.
 * Each is an HttpApi of its own over the same groups HushApi serves (definition.ts), so a group
 * is described exactly as it is routed; test/e2e/openapi.test.ts checks that the two together
 * cover every endpoint of HushApi but /metrics and /readyz, and that neither holds the other's.
 */
import { HttpApi, type HttpApiEndpoint, OpenApi } from "@effect/platform"
import { CompleteIn } from "../../../../core/schema/index.js"
import { AccountGroup, FilesGroup, JobsGroup, PublicGroup } from "../../contract/definition.js"
import { factsOfEndpoint } from "../edge/facts.js"
import { AuthGroup, SessionGroup } from "../../contract/groups/auth.js"
import { DashboardGroup } from "../../contract/groups/dashboard.js"
import { DashboardWebhooksGroup } from "../../contract/groups/dashboard-webhooks.js"
import { DashboardWorkGroup } from "../../contract/groups/dashboard-work.js"
import { PaymentWebhookGroup } from "../../contract/groups/payments.js"
import { WebhooksGroup } from "../../contract/groups/webhooks.js"
import { HUSH_VERSION } from "../../../../core/version.js"
import { errorsBaseUrlOf } from "../edge/problem.js"
import { dashboardExamples } from "./dashboard-examples.js"
import { type DescribedEndpoint, describeReference } from "./describe.js"
import type { OperationExamples } from "./example-types.js"
import type { ReferenceName } from "./paths.js"
import { publicExamples } from "./examples.js"

/** The interface's version (decisions.md, Versioning): the one version of Hush. */
const DOCUMENT_VERSION = HUSH_VERSION

const PUBLIC_DESCRIPTION = `Hush removes noise from speech recordings. Upload audio through a signed URL, run a denoise job, download the result. Jobs are billed per second of audio from prepaid credit; only a succeeded job is charged.

**The flow**: \`POST /v1/files\` → PUT the bytes to \`upload.url\` → \`POST /v1/files/{file_id}/complete\` → poll \`GET /v1/files/{file_id}\` until \`ready\` → \`POST /v1/audio/denoise\` → poll \`GET /v1/jobs/{job_id}\` until \`succeeded\` → \`GET /v1/jobs/{job_id}/output\` → download \`url\`.

**Authentication**: send an API key as \`Authorization: Bearer hush_live_…\` (or \`hush_test_…\`). Create keys in the dashboard. \`/v1/health\`, \`/v1/models\` and \`/v1/status\` need none.

**Test mode**: a test key's jobs never run a model and never cost anything: every test job's output is the service's sample clip, not your audio. Live and test objects are separate (an id of the other mode is 404).

**Money** is in integer micros of a US dollar (1,000,000 = $1); \`display\` fields show it as dollars.

**Errors** are RFC 9457 problems (\`application/problem+json\`) with a stable \`code\` to match on and the \`request_id\` to quote. Each operation lists the codes it can answer. Besides those, a path called with a method it does not have answers \`405 method_not_allowed\` with an \`Allow\` header, and an unknown path \`404 not_found\`.

**Retries**: retry 429, 500, 502 and 503 after \`Retry-After\` seconds; send the same \`Idempotency-Key\` when retrying a create.

**Rate limits** (token buckets): 120 creates and 1,200 reads a minute per key, 120 requests a minute per IP address for the public endpoints; every limited answer carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`.

**Versioning**: everything lives under \`/v1\`; fields, enum values and endpoints may be added, so ignore what you do not know. The dashboard's own endpoints are described apart, in \`/v1/openapi.dashboard.json\`.`

const DASHBOARD_DESCRIPTION = `The endpoints of Hush's web dashboard and of the payment provider's webhook. They are not part of the public API: they take the dashboard's session cookie (and, on unsafe methods, its \`X-CSRF-Token\`), not an API key, and may change with the dashboard. The public API is described in \`/v1/openapi.json\`.

Errors are RFC 9457 problems (\`application/problem+json\`) with a stable \`code\`; each operation lists the codes it can answer.`

export const PublicReference = HttpApi.make("hush")
  .add(PublicGroup)
  .add(FilesGroup)
  .add(JobsGroup)
  .add(AccountGroup)
  .add(WebhooksGroup)
  // referenced by the complete endpoint's hand-written request body
  .annotate(HttpApi.AdditionalSchemas, [CompleteIn])
  .annotate(OpenApi.Title, "Hush audio denoising API")
  .annotate(OpenApi.Version, DOCUMENT_VERSION)
  .annotate(OpenApi.Description, PUBLIC_DESCRIPTION)

export const DashboardReference = HttpApi.make("hush-dashboard")
  .add(AuthGroup)
  .add(SessionGroup)
  .add(DashboardGroup)
  .add(DashboardWorkGroup)
  .add(DashboardWebhooksGroup)
  .add(PaymentWebhookGroup)
  .annotate(OpenApi.Title, "Hush dashboard endpoints (internal)")
  .annotate(OpenApi.Version, DOCUMENT_VERSION)
  .annotate(OpenApi.Description, DASHBOARD_DESCRIPTION)

/** Each operation's endpoint, group, middleware and facts, by operation id. */
const reflect = (api: HttpApi.HttpApi.Any) => {
  const endpoints = new Map<string, DescribedEndpoint>()
  HttpApi.reflect(api as HttpApi.HttpApi<string, any, any, any>, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, middleware }) => {
      const raw = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      const facts = factsOfEndpoint(endpoint.name)
      if (facts === undefined) throw new Error(`OpenAPI reference: ${endpoint.name} is not an endpoint of HushApi`)
      endpoints.set(`${group.identifier}.${endpoint.name}`, {
        endpoint: raw,
        facts,
        group,
        endpointErrors: raw.errorSchema.ast,
        middleware,
        hasUrlParams: raw.urlParamsSchema._tag === "Some"
      })
    }
  })
  return endpoints
}

const build = (api: HttpApi.HttpApi.Any, publicBaseUrl: string, examples: OperationExamples, defaultSecurity: string) => {
  const served = (api as HttpApi.HttpApi<string, any, any, any>).annotate(OpenApi.Servers, [{ url: publicBaseUrl, description: "This deployment of Hush" }])
  return describeReference(structuredClone(OpenApi.fromApi(served)), {
    endpoints: reflect(api),
    examples,
    errorsBaseUrl: errorsBaseUrlOf(publicBaseUrl),
    defaultSecurity
  })
}

/** The document of one reference at this deployment's address (its one server, and the base of its examples' links). */
export const referenceDocument = (name: ReferenceName, publicBaseUrl: string): Record<string, unknown> =>
  name === "public"
    ? build(PublicReference, publicBaseUrl, publicExamples(publicBaseUrl), "apiKey")
    : build(DashboardReference, publicBaseUrl, dashboardExamples(publicBaseUrl), "session")
