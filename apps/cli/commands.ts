/**
 * The operator commands of decisions.md, parsed from argv and run against the core's
 * services (apps/cli/admin.ts runs them on the same store as the server).
 */
import { Effect, Schema } from "effect"
import { ALL_SCOPES, Mode, Scope } from "../../core/domain/enums.js"
import { changeAccountStatus, createAccountWithKeys, createKey, grantCredit } from "../../core/services/accounts.js"
import type { AccountEvent } from "../../core/rules/accounts.js"
import type { LimitsConfig } from "../../core/domain/limits.js"
import type { InvalidRequest, NotFound } from "../../core/errors.js"
import type { AccountSettingsConfig } from "../../core/domain/account-settings.js"
import type { UserRepo } from "../../core/ports/users.js"
import type { IdGenerator } from "../../core/ports/ids.js"
import type { AccountRepo, KeyRepo, WalletRepo } from "../../core/ports/repositories.js"
import type { Transactor } from "../../core/ports/transactor.js"

export const AdminCommand = Schema.Union(
  Schema.TaggedStruct("AccountCreate", { email: Schema.String, creditMicros: Schema.optional(Schema.Int) }),
  Schema.TaggedStruct("CreditGrant", { account: Schema.String, micros: Schema.Int.pipe(Schema.positive()) }),
  Schema.TaggedStruct("KeyCreate", {
    account: Schema.String, mode: Mode, scopes: Schema.optional(Schema.Array(Scope)), name: Schema.optional(Schema.String)
  }),
  Schema.TaggedStruct("AccountStatus", {
    account: Schema.String, action: Schema.Literal("suspend", "unsuspend", "freeze", "unfreeze")
  })
)
export type AdminCommand = typeof AdminCommand.Type

export const USAGE = `usage: hush admin <command>
  admin account create --email E [--credit-micros N] [--json]
  admin mail list [--to E] [--json]
  admin credit grant --account A --micros N [--json]
  admin key create --account A --mode live|test [--scopes s1,s2] [--name N] [--json]
  admin account suspend|unsuspend|freeze|unfreeze --account A [--json]`

export class UsageError extends Error {}

const flags = (args: ReadonlyArray<string>) => {
  const values = new Map<string, string>()
  let json = false
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--json") json = true
    else if (arg.startsWith("--")) {
      const value = args[i + 1]
      if (value === undefined || value.startsWith("--")) throw new UsageError(`${arg} needs a value`)
      values.set(arg.slice(2), value)
      i++
    } else throw new UsageError(`unexpected argument '${arg}'`)
  }
  const required = (name: string) => {
    const value = values.get(name)
    if (value === undefined) throw new UsageError(`--${name} is required`)
    return value
  }
  const integer = (name: string, value: string) => {
    if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number of micros`)
    return Number(value)
  }
  return { values, json, required, integer }
}

/** Read on this machine (the dev outbox in DATA_DIR), not through the server. */
export interface MailListCommand {
  readonly _tag: "MailList"
  readonly to?: string | undefined
}

export const parseArgs = (argv: ReadonlyArray<string>): { readonly command: AdminCommand | MailListCommand; readonly json: boolean } => {
  const [area, resource, verb, ...rest] = argv
  if (area !== "admin") throw new UsageError(USAGE)
  const f = flags(rest)
  if (resource === "mail" && verb === "list") {
    for (const name of f.values.keys()) if (name !== "to") throw new UsageError(`unexpected option --${name}`)
    return { command: { _tag: "MailList", to: f.values.get("to") }, json: f.json }
  }
  if (resource === "account" && verb === "create") {
    const credit = f.values.get("credit-micros")
    return {
      command: { _tag: "AccountCreate", email: f.required("email"), ...(credit === undefined ? {} : { creditMicros: f.integer("credit-micros", credit) }) },
      json: f.json
    }
  }
  if (resource === "credit" && verb === "grant") {
    return { command: { _tag: "CreditGrant", account: f.required("account"), micros: f.integer("micros", f.required("micros")) }, json: f.json }
  }
  if (resource === "key" && verb === "create") {
    const mode = f.required("mode")
    if (mode !== "live" && mode !== "test") throw new UsageError("--mode must be live or test")
    const scopes = f.values.get("scopes")?.split(",").map((s) => s.trim()).filter((s) => s !== "")
    const unknown = scopes?.filter((s) => !(ALL_SCOPES as ReadonlyArray<string>).includes(s)) ?? []
    if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(", ")}; known: ${ALL_SCOPES.join(", ")}`)
    const name = f.values.get("name")
    return {
      command: {
        _tag: "KeyCreate", account: f.required("account"), mode,
        ...(scopes === undefined ? {} : { scopes: scopes as Array<Scope> }),
        ...(name === undefined ? {} : { name })
      },
      json: f.json
    }
  }
  if (resource === "account" && (verb === "suspend" || verb === "unsuspend" || verb === "freeze" || verb === "unfreeze")) {
    return { command: { _tag: "AccountStatus", account: f.required("account"), action: verb }, json: f.json }
  }
  throw new UsageError(USAGE)
}

const STATUS_EVENTS: Record<"suspend" | "unsuspend" | "freeze" | "unfreeze", AccountEvent> = {
  suspend: "suspend", unsuspend: "unsuspend", freeze: "dispute_opened", unfreeze: "dispute_won"
}

export type AdminNeeds = LimitsConfig | IdGenerator | AccountRepo | KeyRepo | WalletRepo | Transactor | UserRepo | AccountSettingsConfig

/** Runs one command; the result is the JSON the CLI prints. */
export const runAdminCommand = (command: AdminCommand): Effect.Effect<Record<string, unknown>, NotFound | InvalidRequest, AdminNeeds> => {
  switch (command._tag) {
    case "AccountCreate":
      return Effect.map(
        createAccountWithKeys({ email: command.email, creditMicros: command.creditMicros }),
        (created) => ({ account_id: created.account.id, live_key: created.liveKey, test_key: created.testKey })
      )
    case "CreditGrant":
      return Effect.map(grantCredit(command.account, command.micros), (step) => ({
        account_id: command.account,
        granted_micros: command.micros,
        balance_micros: step.wallet.balance,
        available_micros: step.wallet.balance - step.wallet.reserved
      }))
    case "KeyCreate":
      return Effect.map(
        createKey(command.account, { mode: command.mode, scopes: command.scopes ?? null, name: command.name ?? "" }),
        (created) => ({ key_id: created.record.id, key: created.key })
      )
    case "AccountStatus":
      return Effect.map(changeAccountStatus(command.account, STATUS_EVENTS[command.action]), (account) => ({
        account_id: account.id,
        status: account.status
      }))
  }
}
