/** Shapes of the signed-in dashboard (cookie session) and its auth endpoints. */
import { Schema } from "effect"
import { AccountStatus, LedgerKind, LotSource, Mode, Scope } from "../domain/enums.js"
import { Credits } from "./account.js"
import { Job, JobInput } from "./job.js"
import { FreeText, Micros, NextCursor, Text, Timestamp } from "./common.js"

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
  id: Schema.String,
  name: Schema.String,
  status: AccountStatus,
  has_purchased: Schema.Boolean,
  terms_version: Schema.String,
  training_opt_in: Schema.Boolean
}) {}

/** Body of `PATCH /v1/dashboard/account`; an omitted field is left unchanged. */
export const AccountPatch = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Text.pipe(Schema.maxLength(200))))
}).annotations({ identifier: "AccountPatch" })
export type AccountPatch = typeof AccountPatch.Type

// Keys

export class KeyOut extends Schema.Class<KeyOut>("KeyOut")({
  id: Schema.String,
  name: Schema.String,
  mode: Mode,
  /** `hush_live_` or `hush_test_` and the secret's first 4 characters. */
  prefix_display: Schema.String,
  last_four: Schema.String,
  scopes: Schema.Array(Scope),
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp)
}) {}

export class KeyList extends Schema.Class<KeyList>("KeyList")({
  data: Schema.Array(KeyOut)
}) {}

/** Body of `POST /v1/dashboard/keys`. Omitted or null `scopes`: all five. */
export const KeyCreateRequest = Schema.Struct({
  mode: Mode,
  name: Schema.optionalWith(Text.pipe(Schema.maxLength(100)), { default: () => "" }),
  scopes: Schema.optional(Schema.NullOr(Schema.Array(Scope).pipe(Schema.maxItems(10))))
}).annotations({ identifier: "KeyCreateRequest" })
export type KeyCreateRequest = typeof KeyCreateRequest.Type

export class KeyCreateResponse extends Schema.Class<KeyCreateResponse>("KeyCreateResponse")({
  key: KeyOut,
  /** The full API key, shown once; null on an idempotent replay. */
  secret: Schema.NullOr(Schema.String),
  already_displayed: Schema.Boolean
}) {}

// Jobs

export const JobKeySummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mode: Mode
}).annotations({ identifier: "JobKeySummary" })
export type JobKeySummary = typeof JobKeySummary.Type

/** The job's input as the dashboard shows it: the API's, with the name the file was uploaded under. */
export const DashboardJobInput = Schema.Struct({
  ...JobInput.fields,
  filename: Schema.String
}).annotations({ identifier: "DashboardJobInput" })
export type DashboardJobInput = typeof DashboardJobInput.Type

export class DashboardJob extends Schema.Class<DashboardJob>("DashboardJob")({
  ...Job.fields,
  input: DashboardJobInput,
  /** Null when the key is gone. */
  key: Schema.NullOr(JobKeySummary)
}) {}

export class DashboardJobPage extends Schema.Class<DashboardJobPage>("DashboardJobPage")({
  data: Schema.Array(DashboardJob),
  next_cursor: NextCursor
}) {}

export const DashboardJobLedgerItem = Schema.Struct({
  id: Schema.String,
  kind: LedgerKind,
  display: Schema.String,
  balance_delta: Micros,
  reserved_delta: Micros,
  created_at: Timestamp
}).annotations({ identifier: "DashboardJobLedgerItem" })
export type DashboardJobLedgerItem = typeof DashboardJobLedgerItem.Type

export class DashboardJobDetail extends Schema.Class<DashboardJobDetail>("DashboardJobDetail")({
  ...DashboardJob.fields,
  /** Oldest first. */
  ledger: Schema.Array(DashboardJobLedgerItem)
}) {}

// Ledger and credits

export class LedgerEntry extends Schema.Class<LedgerEntry>("LedgerEntry")({
  id: Schema.String,
  kind: LedgerKind,
  display: Schema.String,
  reason: Schema.String,
  balance_delta: Micros,
  reserved_delta: Micros,
  balance_after: Micros,
  reserved_after: Micros,
  job: Schema.NullOr(Schema.String),
  checkout: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

/** Newest first. */
export class LedgerPage extends Schema.Class<LedgerPage>("LedgerPage")({
  data: Schema.Array(LedgerEntry),
  next_cursor: NextCursor
}) {}

export const Lot = Schema.Struct({
  amount_micros: Micros,
  remaining_micros: Micros,
  purchased_at: Timestamp,
  expires_at: Timestamp,
  source: LotSource,
  /** `amount_micros` and `remaining_micros` as money strings (`$20.00`). */
  amount_display: Schema.String,
  remaining_display: Schema.String
}).annotations({ identifier: "Lot" })
export type Lot = typeof Lot.Type

export class DashboardCredits extends Schema.Class<DashboardCredits>("DashboardCredits")({
  ...Credits.fields,
  /** `balance_micros` and `reserved_micros` as money strings (`display` is the available amount). */
  balance_display: Schema.String,
  reserved_display: Schema.String,
  has_purchased: Schema.Boolean,
  /** At most 100. */
  lots: Schema.Array(Lot),
  /** True when there are more than 100 lots. */
  lots_truncated: Schema.Boolean
}) {}

/** decisions.md, Payments: $10 to $1,000, whole cents (core/rules/payments.ts). */
export const CheckoutRequest = Schema.Struct({
  amount_micros: Micros.pipe(
    Schema.greaterThanOrEqualTo(10_000_000, { message: () => "amount_micros must be at least 10000000 ($10.00)" }),
    Schema.lessThanOrEqualTo(1_000_000_000, { message: () => "amount_micros must be at most 1000000000 ($1000.00)" }),
    Schema.multipleOf(10_000, { message: () => "amount_micros must be a whole number of cents (a multiple of 10000)" })
  )
}).annotations({ identifier: "CheckoutRequest" })
export type CheckoutRequest = typeof CheckoutRequest.Type

export class CheckoutResponse extends Schema.Class<CheckoutResponse>("CheckoutResponse")({
  checkout_id: Schema.String,
  url: Schema.String
}) {}

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
  from: Schema.optional(IsoDate),
  to: Schema.optional(IsoDate),
  group: Schema.optional(UsageGroup),
  mode: Schema.optional(Mode)
}).annotations({ identifier: "UsageQuery" })
export type UsageQuery = typeof UsageQuery.Type

export const UsageRow = Schema.Struct({
  /** The day, the model id or the key id; null for a removed key. */
  key: Schema.NullOr(Schema.String),
  /** The key's name for group=key, else null. */
  name: Schema.NullOr(Schema.String),
  jobs: Schema.Int,
  succeeded: Schema.Int,
  failed: Schema.Int,
  billable_seconds: Schema.Int,
  charged_micros: Micros,
  display: Schema.String
}).annotations({ identifier: "UsageRow" })
export type UsageRow = typeof UsageRow.Type

export const UsageTotals = Schema.Struct({
  jobs: Schema.Int,
  succeeded: Schema.Int,
  failed: Schema.Int,
  billable_seconds: Schema.Int,
  charged_micros: Micros,
  display: Schema.String
}).annotations({ identifier: "UsageTotals" })
export type UsageTotals = typeof UsageTotals.Type

export class UsageResponse extends Schema.Class<UsageResponse>("UsageResponse")({
  from: IsoDate,
  to: IsoDate,
  group: UsageGroup,
  mode: Mode,
  rows: Schema.Array(UsageRow),
  totals: UsageTotals
}) {}

// Session and auth

export const SessionUser = Schema.Struct({
  email: Schema.String,
  verified: Schema.Boolean,
  email_verified_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "SessionUser" })
export type SessionUser = typeof SessionUser.Type

export const SessionAccount = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: AccountStatus
}).annotations({ identifier: "SessionAccount" })
export type SessionAccount = typeof SessionAccount.Type

export class Session extends Schema.Class<Session>("Session")({
  user: SessionUser,
  account: Schema.NullOr(SessionAccount)
}) {}

export const LoginRequest = Schema.Struct({
  email: EmailText,
  password: PasswordText
}).annotations({ identifier: "LoginRequest" })
export type LoginRequest = typeof LoginRequest.Type

export class LoginResponse extends Schema.Class<LoginResponse>("LoginResponse")({
  user: SessionUser,
  account: Schema.NullOr(SessionAccount),
  csrf_token: Schema.String
}) {}

export const SignupRequest = Schema.Struct({
  email: Email,
  password: NewPassword,
  accept_terms: Schema.Boolean
}).annotations({ identifier: "SignupRequest" })
export type SignupRequest = typeof SignupRequest.Type

export const ResetRequest = Schema.Struct({
  token: Token,
  password: NewPassword
}).annotations({ identifier: "ResetRequest" })
export type ResetRequest = typeof ResetRequest.Type

/**
 * Body of `POST /v1/auth/password/change` (an addition to decisions.md's paths): the current
 * password and the new one.
 */
export const PasswordChangeRequest = Schema.Struct({
  password: PasswordText,
  new_password: NewPassword
}).annotations({ identifier: "PasswordChangeRequest" })
export type PasswordChangeRequest = typeof PasswordChangeRequest.Type

export const TokenRequest = Schema.Struct({
  token: Token
}).annotations({ identifier: "TokenRequest" })
export type TokenRequest = typeof TokenRequest.Type

export const EmailRequest = Schema.Struct({
  email: Email
}).annotations({ identifier: "EmailRequest" })
export type EmailRequest = typeof EmailRequest.Type

export const OAuthStartRequest = Schema.Struct({
  accept_terms: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  connect: Schema.optionalWith(Schema.Boolean, { default: () => false })
}).annotations({ identifier: "OAuthStartRequest" })
export type OAuthStartRequest = typeof OAuthStartRequest.Type

export class OAuthStartResponse extends Schema.Class<OAuthStartResponse>("OAuthStartResponse")({
  authorize_url: Schema.String
}) {}

// Small bodies (decisions.md "Misc")

export class CsrfResponse extends Schema.Class<CsrfResponse>("CsrfResponse")({
  csrf_token: Schema.String
}) {}

/** `{status: "sent"}` or `{status: "ok"}`. */
export class StatusResponse extends Schema.Class<StatusResponse>("StatusResponse")({
  status: Schema.String
}) {}

export class VerifyResponse extends Schema.Class<VerifyResponse>("VerifyResponse")({
  verified: Schema.Boolean
}) {}
