/**
 * The dashboard reference's examples: the same story as the public one (examples.ts), told from
 * the signed-in dashboard of the account that owns it. Checked like the public ones (describe.ts).
 */
import { RNNOISE } from "../../../../core/domain/catalog.js"
import { formatMicros } from "../../../../core/money.js"
import type { OperationExamples } from "./example-types.js"
import {
  EXAMPLE_COST, EXAMPLE_IDEMPOTENCY_KEY, EXAMPLE_IDS, EXAMPLE_INPUT, EXAMPLE_TIMES, exampleDelivery, exampleFile, exampleJob,
  exampleOutputLink, examplePutUpload, exampleSignedUrl, exampleWebhookEndpoint
} from "./examples.js"

const CSRF_TOKEN = "n4q2xk7wz3c5v6b2m7j4h3g5f2d6s7a4p3o2i5u6y7t2r3e4w5q6"
const USER = { email: "ada@example.com", verified: true, email_verified_at: "2026-10-28T09:03:51.204Z" }
const ACCOUNT_SUMMARY = { id: EXAMPLE_IDS.account, name: "Ada's studio", status: "active" }
const ACCOUNT = { ...ACCOUNT_SUMMARY, has_purchased: true, terms_version: "2026-11-01", training_opt_in: false }
const CHECKOUT_ID = "chk_pd2urgdup73jdtuc2o4jeb76"
const KEY_ID = "key_uutduholqity4uqekjj6j35l"

const key = (revoked: boolean) => ({
  id: KEY_ID,
  name: "Production server",
  mode: "live",
  prefix_display: "hush_live_skeg",
  last_four: "7ow5",
  scopes: ["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"],
  created_at: "2026-10-28T09:10:02.511Z",
  last_used_at: revoked ? "2026-11-03T14:20:15.120Z" : null,
  revoked_at: revoked ? "2026-11-03T16:02:44.930Z" : null
})

const keySummary = { id: EXAMPLE_IDS.key, name: "Production server", mode: "live" }

const dashboardJob = (status: "queued" | "succeeded" | "canceled") => {
  const job = exampleJob(status)
  return { ...job, input: { ...job.input, filename: EXAMPLE_INPUT.filename }, key: keySummary }
}

const BALANCE = 20_000_000
const AFTER_CAPTURE = BALANCE - EXAMPLE_COST

const ledgerItem = (id: string, kind: "hold" | "capture", balanceDelta: number, reservedDelta: number, at: string) => ({
  id, kind, display: formatMicros(balanceDelta !== 0 ? balanceDelta : reservedDelta), balance_delta: balanceDelta, reserved_delta: reservedDelta, created_at: at
})

const usageRow = (day: string, jobs: number, seconds: number) => ({
  key: day, name: null, jobs, succeeded: jobs, failed: 0, billable_seconds: seconds, charged_micros: seconds * 100, display: formatMicros(seconds * 100)
})

export const dashboardExamples = (baseUrl: string): OperationExamples => {
  const csrf = { "X-CSRF-Token": CSRF_TOKEN }
  const idempotent = { ...csrf, "Idempotency-Key": EXAMPLE_IDEMPOTENCY_KEY }
  const loggedIn = { user: USER, account: ACCOUNT_SUMMARY, csrf_token: CSRF_TOKEN }
  return {
    signup: {
      answered: "The new user and account, signed in (the session cookie is set).",
      body: { email: USER.email, password: "correct horse battery staple", accept_terms: true },
      answer: { ...loggedIn, user: { ...USER, verified: false, email_verified_at: null } }
    },
    login: {
      answered: "The user and account, signed in (the session cookie is set).",
      body: { email: USER.email, password: "correct horse battery staple" },
      answer: loggedIn
    },
    csrf: { answered: "The CSRF token to send as `X-CSRF-Token`.", answer: { csrf_token: CSRF_TOKEN } },
    verifyEmail: { answered: "The address is verified.", body: { token: "ve_3k6pq2rx7mzt4w5ybn2c6d7fhj3s4gk5" }, answer: { verified: true } },
    forgotPassword: { answered: "Accepted, whether or not the address exists.", body: { email: USER.email }, answer: { status: "sent" } },
    resetPassword: {
      answered: "The password is set; every session of the user ended.",
      body: { token: "pr_6m2kq7tz4x3wc5vn2b7d6f3hj4s5gr6y", password: "a new correct horse battery" },
      answer: { status: "ok" }
    },
    oauthStart: {
      answered: "Where to send the browser.",
      path: { provider: "github" },
      headers: csrf,
      body: { accept_terms: true },
      answer: {
        authorize_url: "https://github.com/login/oauth/authorize?response_type=code&client_id=Iv1.7f3a9c2b5d4e6f10&state=k2m7q4x3w6z5c2v7b4n3&redirect_uri=" +
          encodeURIComponent(`${baseUrl}/v1/auth/oauth/github/callback`) + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
      }
    },
    oauthCallback: {
      answered: "A redirect to `/dashboard`, or to `/login?error=<code>` when sign-in failed.",
      path: { provider: "github" },
      query: { code: "5e2f8c1a9b3d7e4f6a20", state: "k2m7q4x3w6z5c2v7b4n3" }
    },
    logout: { answered: "The session ended and its cookie is cleared.", headers: csrf },
    session: { answered: "The signed-in user and account.", answer: { user: USER, account: ACCOUNT_SUMMARY } },
    resendVerification: {
      answered: "A new verification e-mail is on its way.",
      headers: csrf,
      answer: { status: "sent" },
      problems: { invalid_request: `the address ${USER.email} is already verified` }
    },
    changePassword: {
      answered: "The password is changed; a new session is started (Set-Cookie) and every other one ended.",
      headers: csrf,
      body: { password: "correct horse battery staple", new_password: "a new correct horse battery" },
      answer: loggedIn
    },
    getAccount: { answered: "The account.", answer: ACCOUNT },
    updateAccount: { answered: "The renamed account.", headers: csrf, body: { name: ACCOUNT.name }, answer: ACCOUNT },
    listKeys: { answered: "Every key, revoked ones included.", answer: { data: [key(false)] } },
    createKey: {
      answered: "The key and its secret, shown only here.",
      headers: idempotent,
      body: { mode: "live", name: "Production server" },
      answer: { key: key(false), secret: "hush_live_skegbdwlpex22tdtzgegzkskcwejzsgupp6w23kqapnbjgrm7ow5", already_displayed: false }
    },
    revokeKey: { answered: "The revoked key.", path: { key_id: KEY_ID }, headers: csrf, answer: key(true) },
    getDashboardCredits: {
      answered: "The account's credit and its lots.",
      answer: {
        balance_micros: BALANCE, reserved_micros: 0, available_micros: BALANCE, currency: "usd", display: formatMicros(BALANCE),
        balance_display: formatMicros(BALANCE), reserved_display: formatMicros(0), has_purchased: true,
        lots: [{
          amount_micros: BALANCE, remaining_micros: BALANCE, purchased_at: "2026-10-28T09:20:17.883Z", expires_at: "2027-10-28T09:20:17.883Z",
          source: "purchase", amount_display: formatMicros(BALANCE), remaining_display: formatMicros(BALANCE)
        }],
        lots_truncated: false
      }
    },
    createCheckout: {
      answered: "The checkout and the payment page to send the browser to.",
      headers: idempotent,
      body: { amount_micros: BALANCE },
      answer: { checkout_id: CHECKOUT_ID, url: "https://checkout.stripe.com/c/pay/cs_live_a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ" }
    },
    getLedger: {
      answered: "A page of ledger entries, newest first.",
      query: { limit: "20" },
      answer: {
        data: [{
          id: EXAMPLE_IDS.ledgerEntry, kind: "capture", display: formatMicros(-EXAMPLE_COST), reason: `charge for job ${EXAMPLE_IDS.job}`,
          balance_delta: -EXAMPLE_COST, reserved_delta: -EXAMPLE_COST, balance_after: AFTER_CAPTURE, reserved_after: 0,
          job: EXAMPLE_IDS.job, checkout: null, created_at: EXAMPLE_TIMES.jobFinished
        }],
        next_cursor: null
      }
    },
    getUsage: {
      answered: "Usage per day of the range, oldest first, and its totals.",
      query: { from: "2026-11-02", to: "2026-11-03", group: "day", mode: "live" },
      answer: {
        from: "2026-11-02", to: "2026-11-03", group: "day", mode: "live",
        rows: [usageRow("2026-11-02", 3, 412), usageRow("2026-11-03", 1, 36)],
        totals: { jobs: 4, succeeded: 4, failed: 0, billable_seconds: 448, charged_micros: 44_800, display: formatMicros(44_800) }
      }
    },
    listDashboardJobs: {
      answered: "A page of jobs, newest first, each with its key.",
      query: { limit: "20", mode: "live" },
      answer: { data: [dashboardJob("succeeded")], next_cursor: null }
    },
    getDashboardJob: {
      answered: "The job with its key and ledger entries.",
      path: { job_id: EXAMPLE_IDS.job },
      query: { mode: "live" },
      answer: {
        ...dashboardJob("succeeded"),
        ledger: [
          ledgerItem("txn_4r66avpkf5wdzuym2od4c24z", "hold", 0, EXAMPLE_COST, EXAMPLE_TIMES.jobCreated),
          ledgerItem(EXAMPLE_IDS.ledgerEntry, "capture", -EXAMPLE_COST, -EXAMPLE_COST, EXAMPLE_TIMES.jobFinished)
        ]
      }
    },
    getDashboardJobOutput: {
      answered: "A fresh download link, valid for an hour.",
      path: { job_id: EXAMPLE_IDS.job },
      query: { mode: "live" },
      answer: exampleOutputLink(baseUrl)
    },
    createDashboardFile: {
      answered: "The file, `uploading`, and where to PUT its bytes.",
      headers: idempotent,
      body: { filename: EXAMPLE_INPUT.filename, size_bytes: EXAMPLE_INPUT.sizeBytes, content_type: EXAMPLE_INPUT.contentType },
      answer: { id: EXAMPLE_IDS.file, status: "uploading", upload: examplePutUpload(baseUrl) }
    },
    getDashboardFile: { answered: "The file.", path: { file_id: EXAMPLE_IDS.file }, answer: exampleFile("ready") },
    completeDashboardFile: {
      answered: "The file, `validating`.",
      path: { file_id: EXAMPLE_IDS.file },
      headers: idempotent,
      body: {},
      answer: exampleFile("validating")
    },
    createDashboardDenoiseJob: {
      answered: "The job, `queued`, its exact cost held.",
      headers: idempotent,
      body: { file: EXAMPLE_IDS.file, model: RNNOISE.id },
      answer: dashboardJob("queued")
    },
    cancelDashboardJob: { answered: "The job, `canceled`, its hold released.", path: { job_id: EXAMPLE_IDS.job }, headers: idempotent, answer: dashboardJob("canceled") },
    getDashboardJobInput: {
      answered: "A link to the job's input, valid for an hour.",
      path: { job_id: EXAMPLE_IDS.job },
      query: { mode: "live" },
      answer: {
        url: exampleSignedUrl(baseUrl, `inputs/${EXAMPLE_IDS.file}`, `x-hush-op=get&x-hush-expires=${Date.parse(EXAMPLE_TIMES.linkExpires)}&x-hush-filename=${EXAMPLE_INPUT.filename}&x-hush-content-type=audio%2Fwav`),
        expires_at: EXAMPLE_TIMES.linkExpires,
        filename: EXAMPLE_INPUT.filename
      }
    },
    listDashboardWebhookEndpoints: { answered: "The live endpoints, oldest first.", answer: { data: [exampleWebhookEndpoint], next_cursor: null } },
    createDashboardWebhookEndpoint: {
      answered: "The endpoint with its signing secret, shown only here.",
      headers: idempotent,
      body: { url: exampleWebhookEndpoint.url, events: exampleWebhookEndpoint.events, description: exampleWebhookEndpoint.description },
      answer: { ...exampleWebhookEndpoint, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7UPKm4xZ6hA=" }
    },
    deleteDashboardWebhookEndpoint: { answered: "The endpoint is gone.", path: { endpoint_id: EXAMPLE_IDS.webhookEndpoint }, headers: csrf },
    listDashboardWebhookDeliveries: {
      answered: "A page of deliveries, newest first.",
      path: { endpoint_id: EXAMPLE_IDS.webhookEndpoint },
      query: { limit: "20" },
      answer: { data: [exampleDelivery("job.succeeded", "succeeded")], next_cursor: null }
    },
    sendDashboardWebhookTest: {
      answered: "The pending delivery of the `webhook.test` event.",
      path: { endpoint_id: EXAMPLE_IDS.webhookEndpoint },
      headers: csrf,
      answer: exampleDelivery("webhook.test", "pending")
    },
    receivePaymentEvent: {
      answered: "The event was checked and applied (or ignored, for a type Hush does not use).",
      headers: { "Stripe-Signature": "t=1793715619,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd" },
      answer: { received: true }
    }
  }
}
