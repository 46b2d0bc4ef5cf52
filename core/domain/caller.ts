/**
 * Who is calling, as the request's context carries it: the API key's caller (`CurrentCaller`,
 * provided by the `Authentication` middleware) or the dashboard's signed-in session
 * (`CurrentSession`, provided by `DashboardSession`). Only tags and shapes live here, so the
 * API contract (apps/api/contract) can name them without reaching the services that fill them.
 */
import { Context } from "effect"
import type { Mode, Scope } from "./enums.js"
import type { AccountRecord } from "./records.js"
import type { SessionRecord, UserRecord } from "./users.js"

/**
 * Who acts on an account's files, jobs and webhook endpoints: an API key (a `Caller`), or the
 * dashboard's session, which has no key (`keyId` null). The services take an Actor, so the
 * dashboard runs the keyed API's own rules: prices, limits, quotas, scopes.
 */
export interface Actor {
  readonly accountId: string
  readonly keyId: string | null
  readonly mode: Mode
  readonly scopes: ReadonlyArray<Scope>
  readonly account: AccountRecord
}

/** Who is calling: resolved from the bearer key on every request. */
export interface Caller extends Actor {
  readonly keyId: string
}

export class CurrentCaller extends Context.Tag("hush/CurrentCaller")<CurrentCaller, Caller>() {}

/** Who is signed in on this request. */
export interface SignedIn {
  readonly session: SessionRecord
  readonly user: UserRecord
  readonly account: AccountRecord
  /** The value `X-CSRF-Token` must carry on unsafe requests of this session. */
  readonly csrfToken: string
}

export class CurrentSession extends Context.Tag("hush/CurrentSession")<CurrentSession, SignedIn>() {}

