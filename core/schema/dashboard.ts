/** Shapes of the signed-in dashboard (cookie session) and its auth endpoints. */
import { Schema } from "effect"
import { AccountStatus, LedgerKind, LotSource, Mode, Scope } from "../domain/enums.js"
import { Credits } from "./account.js"
import { Job, JobInput } from "./job.js"
import { field, FreeText, Micros, nextCursorField, Text, Timestamp } from "./common.js"

const EmailText = Text.pipe(Schema.minLength(1), Schema.maxLength(254))
/** A loose shape check only: something@something, no spaces inside (surrounding ones are trimmed). */
const Email = EmailText.pipe(Schema.pattern(/^\s*[^\s@]+@[^\s@]+\s*$/))
/**
 * Login takes any password up to the bound; new passwords must have 8 to 1024 characters.
 * Free text: a tab is allowed (a password that had one still signs in), other control characters not.
 */
const PasswordText = FreeText.pipe(Schema.minLength(1), Schema.maxLength(1024))
const NewPassword = FreeText.pipe(Schema.minLength(8), Schema.maxLength(1024))
const Token = Text.pipe(Schema.minLength(1), Schema.maxLength(200))

// Account

export class Account extends Schema.Class<Account>("Account")({
  id: field(Schema.String, "The account's id (`acct_…`)."),
  name: field(Schema.String, "The account's display name; empty until set."),
  status: field(AccountStatus, "`active`, `suspended` (new jobs refused) or `frozen` (every keyed request refused while a payment dispute is open)."),
  has_purchased: field(Schema.Boolean, "True once a credit purchase has been paid."),
  terms_version: field(Schema.String, "The version of the terms of service accepted, e.g. `2026-11-01`; empty when none was."),
  training_opt_in: field(Schema.Boolean, "Whether the account allows its audio to be used for training (false unless chosen).")
}, { description: "The signed-in user's account." }) {}

/** Body of `PATCH /v1/dashboard/account`; an omitted field is left unchanged. */
export const AccountPatch = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Text.pipe(Schema.maxLength(200)))).annotations({
    description: "The new name, up to 200 characters; null clears it. Omitted: unchanged."
  })
}).annotations({ identifier: "AccountPatch", description: "What to change on the account." })
export type AccountPatch = typeof AccountPatch.Type

// Keys

export class KeyOut extends Schema.Class<KeyOut>("KeyOut")({
  id: field(Schema.String, "The key's id (`key_…`), not the key itself."),
  name: field(Schema.String, "The name given at creation (may be empty)."),
  mode: field(Mode, "`live` (runs models, costs credit) or `test` (sample output, free)."),
  prefix_display: field(Schema.String, "`hush_live_` or `hush_test_` and the secret's first 4 characters, to recognise the key."),
  last_four: field(Schema.String, "The secret's last 4 characters."),
  scopes: field(Schema.Array(Scope), "What the key may do."),
  created_at: field(Timestamp, "When it was created (ISO 8601, UTC)."),
  last_used_at: field(Schema.NullOr(Timestamp), "When it was last used, to the minute; null if never."),
  revoked_at: field(Schema.NullOr(Timestamp), "When it was revoked; null while it works.")
}, { description: "An API key, without its secret." }) {}

export class KeyList extends Schema.Class<KeyList>("KeyList")({
  data: field(Schema.Array(KeyOut), "Every key of the account, revoked ones included.")
}, { description: "The account's API keys." }) {}

/** Body of `POST /v1/dashboard/keys`. Omitted or null `scopes`: all five. */
export const KeyCreateRequest = Schema.Struct({
  // described on their types: with `name`'s default the struct is a transformation, whose JSON
  // Schema (its encoded side) keeps no property annotation but a transformation's own
  mode: Mode.annotations({ description: "`live` (needs a verified e-mail address and accepted terms) or `test`." }),
  name: Schema.optionalWith(Text.pipe(Schema.maxLength(100)), { default: () => "" }).annotations({
    description: "A name to recognise it by, up to 100 characters; empty when omitted."
  }),
  scopes: Schema.optional(Schema.NullOr(Schema.Array(Scope).pipe(Schema.maxItems(10))).annotations({
    description: "What it may do, up to 10 scopes; omitted or null: all five."
  }))
}).annotations({ identifier: "KeyCreateRequest", description: "An API key to create." })
export type KeyCreateRequest = typeof KeyCreateRequest.Type

export class KeyCreateResponse extends Schema.Class<KeyCreateResponse>("KeyCreateResponse")({
  key: field(KeyOut, "The new key."),
  secret: field(Schema.NullOr(Schema.String), "The full API key, shown only in this answer; null on an idempotent replay."),
  already_displayed: field(Schema.Boolean, "True on an idempotent replay: the secret was shown by the first answer.")
}, { description: "A created API key and its secret." }) {}

// Jobs

export const JobKeySummary = Schema.Struct({
  id: field(Schema.String, "The key's id (`key_…`)."),
  name: field(Schema.String, "The key's name."),
  mode: field(Mode, "The key's mode.")
}).annotations({ identifier: "JobKeySummary", description: "The key that created a job." })
export type JobKeySummary = typeof JobKeySummary.Type

/** The job's input as the dashboard shows it: the API's, with the name the file was uploaded under. */
export const DashboardJobInput = Schema.Struct({
  ...JobInput.fields,
  filename: field(Schema.String, "The name the input file was uploaded under.")
}).annotations({ identifier: "DashboardJobInput", description: "The audio the job denoises, with its file's name." })
export type DashboardJobInput = typeof DashboardJobInput.Type

export class DashboardJob extends Schema.Class<DashboardJob>("DashboardJob")({
  ...Job.fields,
  input: field(DashboardJobInput, "The input file, its name and length."),
  key: field(Schema.NullOr(JobKeySummary), "The key that created the job; null for the dashboard's own jobs and when the key is gone.")
}, { description: "A job as the dashboard shows it: the API's, with its input's name and its key." }) {}

export class DashboardJobPage extends Schema.Class<DashboardJobPage>("DashboardJobPage")({
  data: field(Schema.Array(DashboardJob), "The jobs of this page, newest first."),
  next_cursor: nextCursorField
}, { description: "A page of jobs, newest first." }) {}

export const DashboardJobLedgerItem = Schema.Struct({
  id: field(Schema.String, "The ledger entry's id (`txn_…`)."),
  kind: field(LedgerKind, "`hold` (at creation), then `capture` (on success) or `release` (otherwise)."),
  display: field(Schema.String, "The amount moved, as dollars."),
  balance_delta: field(Micros, "Change to the balance, in micros."),
  reserved_delta: field(Micros, "Change to the reserved credit, in micros."),
  created_at: field(Timestamp, "When it happened (ISO 8601, UTC).")
}).annotations({ identifier: "DashboardJobLedgerItem", description: "A ledger entry of a job." })
export type DashboardJobLedgerItem = typeof DashboardJobLedgerItem.Type

export class DashboardJobDetail extends Schema.Class<DashboardJobDetail>("DashboardJobDetail")({
  ...DashboardJob.fields,
  ledger: field(Schema.Array(DashboardJobLedgerItem), "The job's ledger entries, oldest first.")
}, { description: "A job with its ledger entries." }) {}

// Ledger and credits

export class LedgerEntry extends Schema.Class<LedgerEntry>("LedgerEntry")({
  id: field(Schema.String, "The entry's id (`txn_…`)."),
  kind: field(LedgerKind, "`purchase`, `grant`, `hold`, `capture`, `release`, `expiry`, `refund` or `adjustment`."),
  display: field(Schema.String, "The amount moved, as dollars (negative for a charge)."),
  reason: field(Schema.String, "What caused it, in words."),
  balance_delta: field(Micros, "Change to the balance, in micros of a US dollar."),
  reserved_delta: field(Micros, "Change to the reserved credit, in micros."),
  balance_after: field(Micros, "The balance after this entry, in micros."),
  reserved_after: field(Micros, "The reserved credit after this entry, in micros."),
  job: field(Schema.NullOr(Schema.String), "The job it belongs to (`job_…`), if any."),
  checkout: field(Schema.NullOr(Schema.String), "The checkout it belongs to (`chk_…`), if any."),
  created_at: field(Timestamp, "When it happened (ISO 8601, UTC).")
}, { description: "One movement of credit." }) {}

/** Newest first. */
export class LedgerPage extends Schema.Class<LedgerPage>("LedgerPage")({
  data: field(Schema.Array(LedgerEntry), "The entries of this page, newest first."),
  next_cursor: nextCursorField
}, { description: "A page of ledger entries, newest first." }) {}

export const Lot = Schema.Struct({
  amount_micros: field(Micros, "What the lot held at first, in micros."),
  remaining_micros: field(Micros, "What is left of it, in micros."),
  purchased_at: field(Timestamp, "When it was bought or granted (ISO 8601, UTC)."),
  expires_at: field(Timestamp, "When what is left of it expires: 365 days after purchase."),
  source: field(LotSource, "`purchase` or `grant`."),
  amount_display: field(Schema.String, "`amount_micros` as dollars, e.g. `$20.00`."),
  remaining_display: field(Schema.String, "`remaining_micros` as dollars.")
}).annotations({ identifier: "Lot", description: "A purchase or grant of credit, used earliest expiry first." })
export type Lot = typeof Lot.Type

export class DashboardCredits extends Schema.Class<DashboardCredits>("DashboardCredits")({
  ...Credits.fields,
  balance_display: field(Schema.String, "`balance_micros` as dollars (`display` is the available amount)."),
  reserved_display: field(Schema.String, "`reserved_micros` as dollars."),
  has_purchased: field(Schema.Boolean, "True once a purchase has been paid."),
  lots: field(Schema.Array(Lot), "The unexpired lots, earliest expiry first, at most 100."),
  lots_truncated: field(Schema.Boolean, "True when there are more than 100 lots.")
}, { description: "The account's live credit with its lots." }) {}

/** decisions.md, Payments: $10 to $1,000, whole cents (core/rules/payments.ts). */
export const CheckoutRequest = Schema.Struct({
  amount_micros: field(Micros.pipe(
    Schema.greaterThanOrEqualTo(10_000_000, { message: () => "amount_micros must be at least 10000000 ($10.00)" }),
    Schema.lessThanOrEqualTo(1_000_000_000, { message: () => "amount_micros must be at most 1000000000 ($1000.00)" }),
    Schema.multipleOf(10_000, { message: () => "amount_micros must be a whole number of cents (a multiple of 10000)" })
  ), "The amount to buy in micros: $10 to $1,000 (10,000,000 to 1,000,000,000), in whole cents.")
}).annotations({ identifier: "CheckoutRequest", description: "Credit to buy." })
export type CheckoutRequest = typeof CheckoutRequest.Type

export class CheckoutResponse extends Schema.Class<CheckoutResponse>("CheckoutResponse")({
  checkout_id: field(Schema.String, "The checkout's id (`chk_…`), named on the purchase's ledger entry."),
  url: field(Schema.String, "The payment page to send the browser to.")
}, { description: "A checkout waiting for payment." }) {}

// Usage

/** `YYYY-MM-DD`, a real calendar date. */
export const IsoDate = Text.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/),
  Schema.filter((s) => {
    const parsed = new Date(`${s}T00:00:00Z`)
    return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === s
  }, { message: () => "expected a calendar date YYYY-MM-DD" })
).annotations({ identifier: "IsoDate" })

export const UsageGroup = Schema.Literal("day", "model", "key")
export type UsageGroup = typeof UsageGroup.Type

/**
 * Query of `GET /v1/dashboard/usage`. Defaults (applied by the handler): `to` today (UTC),
 * `from` 29 days before `to`, `group` day, `mode` live.
 */
export const UsageQuery = Schema.Struct({
  from: Schema.optional(IsoDate).annotations({ description: "The first day (UTC), `YYYY-MM-DD`; default 29 days before `to`. At most 366 days before `to`." }),
  to: Schema.optional(IsoDate).annotations({ description: "The last day (UTC, included), `YYYY-MM-DD`; default today." }),
  group: Schema.optional(UsageGroup).annotations({ description: "One row per `day` (the default), `model` or `key`." }),
  mode: Schema.optional(Mode).annotations({ description: "`live` (the default) or `test` jobs." })
}).annotations({ identifier: "UsageQuery" })
export type UsageQuery = typeof UsageQuery.Type

export const UsageRow = Schema.Struct({
  key: field(Schema.NullOr(Schema.String), "The day (`YYYY-MM-DD`), the model id or the key id; null for a removed key."),
  name: field(Schema.NullOr(Schema.String), "The key's name for `group=key`, else null."),
  jobs: field(Schema.Int, "Jobs created."),
  succeeded: field(Schema.Int, "Of those, the ones that succeeded."),
  failed: field(Schema.Int, "Of those, the ones that failed."),
  billable_seconds: field(Schema.Int, "Seconds billed for the succeeded ones."),
  charged_micros: field(Micros, "What they were charged, in micros."),
  display: field(Schema.String, "`charged_micros` as dollars.")
}).annotations({ identifier: "UsageRow", description: "Usage of one day, model or key." })
export type UsageRow = typeof UsageRow.Type

export const UsageTotals = Schema.Struct({
  jobs: field(Schema.Int, "Jobs created."),
  succeeded: field(Schema.Int, "Of those, the ones that succeeded."),
  failed: field(Schema.Int, "Of those, the ones that failed."),
  billable_seconds: field(Schema.Int, "Seconds billed for the succeeded ones."),
  charged_micros: field(Micros, "What they were charged, in micros."),
  display: field(Schema.String, "`charged_micros` as dollars.")
}).annotations({ identifier: "UsageTotals", description: "Usage over the whole range." })
export type UsageTotals = typeof UsageTotals.Type

export class UsageResponse extends Schema.Class<UsageResponse>("UsageResponse")({
  from: field(IsoDate, "The first day of the range (UTC)."),
  to: field(IsoDate, "The last day of the range (UTC, included)."),
  group: field(UsageGroup, "How rows are grouped: `day`, `model` or `key`."),
  mode: field(Mode, "Whose jobs: `live` or `test`."),
  rows: field(Schema.Array(UsageRow), "By day: every day of the range, oldest first, zeros included; by model or key: largest charge first."),
  totals: field(UsageTotals, "The sums over the range.")
}, { description: "Usage over a date range." }) {}

// Session and auth

export const SessionUser = Schema.Struct({
  email: field(Schema.String, "The user's e-mail address."),
  verified: field(Schema.Boolean, "Whether the address is verified (needed for live keys and purchases)."),
  email_verified_at: field(Schema.NullOr(Timestamp), "When it was verified; null until then.")
}).annotations({ identifier: "SessionUser", description: "The signed-in user." })
export type SessionUser = typeof SessionUser.Type

export const SessionAccount = Schema.Struct({
  id: field(Schema.String, "The account's id (`acct_…`)."),
  name: field(Schema.String, "The account's display name."),
  status: field(AccountStatus, "`active`, `suspended` or `frozen`.")
}).annotations({ identifier: "SessionAccount", description: "The user's account." })
export type SessionAccount = typeof SessionAccount.Type

export class Session extends Schema.Class<Session>("Session")({
  user: field(SessionUser, "The signed-in user."),
  account: field(Schema.NullOr(SessionAccount), "The user's account; null if it is gone.")
}, { description: "The signed-in session." }) {}

export const LoginRequest = Schema.Struct({
  email: field(EmailText, "The address signed up with (compared without case or surrounding spaces)."),
  password: field(PasswordText, "The password.")
}).annotations({ identifier: "LoginRequest" })
export type LoginRequest = typeof LoginRequest.Type

export class LoginResponse extends Schema.Class<LoginResponse>("LoginResponse")({
  user: field(SessionUser, "The signed-in user."),
  account: field(Schema.NullOr(SessionAccount), "The user's account."),
  csrf_token: field(Schema.String, "Send it as `X-CSRF-Token` on every unsafe request of this session.")
}, { description: "A new session (its cookie is set) and its CSRF token." }) {}

export const SignupRequest = Schema.Struct({
  email: field(Email, "The user's e-mail address, up to 254 characters; a verification link is sent to it."),
  password: field(NewPassword, "The new password, 8 to 1,024 characters."),
  accept_terms: field(Schema.Boolean, "Must be true: signing up means accepting the terms of service.")
}).annotations({ identifier: "SignupRequest" })
export type SignupRequest = typeof SignupRequest.Type

export const ResetRequest = Schema.Struct({
  token: field(Token, "The token of the reset link (single use, valid 1 hour)."),
  password: field(NewPassword, "The new password, 8 to 1,024 characters.")
}).annotations({ identifier: "ResetRequest" })
export type ResetRequest = typeof ResetRequest.Type

/**
 * Body of `POST /v1/auth/password/change` (an addition to decisions.md's paths): the current
 * password and the new one.
 */
export const PasswordChangeRequest = Schema.Struct({
  password: field(PasswordText, "The current password."),
  new_password: field(NewPassword, "The new password, 8 to 1,024 characters.")
}).annotations({ identifier: "PasswordChangeRequest" })
export type PasswordChangeRequest = typeof PasswordChangeRequest.Type

export const TokenRequest = Schema.Struct({
  token: field(Token, "The token of the verification link (single use, valid 24 hours).")
}).annotations({ identifier: "TokenRequest" })
export type TokenRequest = typeof TokenRequest.Type

export const EmailRequest = Schema.Struct({
  email: field(Email, "The address to send the reset link to.")
}).annotations({ identifier: "EmailRequest" })
export type EmailRequest = typeof EmailRequest.Type

export const OAuthStartRequest = Schema.Struct({
  accept_terms: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "Accept the terms of service: needed when this sign-in creates the account. Default false."
  }),
  connect: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "Link the provider's identity to the signed-in user instead of signing in. Default false."
  })
}).annotations({ identifier: "OAuthStartRequest" })
export type OAuthStartRequest = typeof OAuthStartRequest.Type

export class OAuthStartResponse extends Schema.Class<OAuthStartResponse>("OAuthStartResponse")({
  authorize_url: field(Schema.String, "The provider's sign-in page to send the browser to (with state and PKCE).")
}, { description: "Where to sign in with the provider." }) {}

// Small bodies (decisions.md "Misc")

export class CsrfResponse extends Schema.Class<CsrfResponse>("CsrfResponse")({
  csrf_token: field(Schema.String, "Send it as `X-CSRF-Token`: the session's token, or without a session a pre-session token for OAuth start.")
}, { description: "A CSRF token." }) {}

/** `{status: "sent"}` or `{status: "ok"}`. */
export class StatusResponse extends Schema.Class<StatusResponse>("StatusResponse")({
  status: field(Schema.String, "`sent` (an e-mail is on its way) or `ok` (done).")
}, { description: "An acknowledgement." }) {}

export class VerifyResponse extends Schema.Class<VerifyResponse>("VerifyResponse")({
  verified: field(Schema.Boolean, "Always true: the address is verified.")
}, { description: "The address is verified." }) {}
