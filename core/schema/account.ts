import { Schema } from "effect"
import { Mode, Scope } from "../domain/enums.js"
import { field, Micros, Timestamp } from "./common.js"

export class Credits extends Schema.Class<Credits>("Credits")({
  balance_micros: field(Micros, "Unexpired credit, in micros of a US dollar (1,000,000 = $1), including what running jobs hold."),
  reserved_micros: field(Micros, "Credit held by queued and processing jobs, in micros: captured if they succeed, released otherwise."),
  available_micros: field(Micros, "What new jobs can use, in micros: `balance_micros − reserved_micros`, never negative."),
  currency: field(Schema.String, "Always `usd`."),
  display: field(Schema.String, "The available credit as dollars, e.g. `$12.50`.")
}, { description: "The account's prepaid credit. A test key always sees an empty sandbox wallet (all zeros)." }) {}

export class MeOut extends Schema.Class<MeOut>("MeOut")({
  account_id: field(Schema.String, "The key's account (`acct_…`)."),
  key_id: field(Schema.String, "The key's id (`key_…`); never the key itself."),
  mode: field(Mode, "`live` or `test`: which objects the key sees and whether its jobs run and cost credit."),
  scopes: field(Schema.Array(Scope), "What the key may do: `files:write`, `jobs:write`, `jobs:read`, `credits:read`, `webhooks:write`."),
  balance: Schema.optional(Schema.NullOr(Credits)).annotations({
    description: "The account's credit; present only when the key has the `credits:read` scope."
  })
}, { description: "The calling API key." }) {}

export class OutputLink extends Schema.Class<OutputLink>("OutputLink")({
  url: field(Schema.String, "A signed download URL for the denoised audio, valid until `expires_at`. It needs no API key."),
  expires_at: field(Timestamp, "When the link stops working (1 hour after it was made); ask for a fresh one after."),
  filename: field(Schema.String, "A name to save it under: the input's name, `.denoised.` and the format (`interview.wav` → `interview.denoised.mp3`).")
}, { description: "A fresh signed download link." }) {}

export class Health extends Schema.Class<Health>("Health")({
  status: field(Schema.String, "`ok` whenever the API process answers."),
  version: field(Schema.String, "The running server's version."),
  env: field(Schema.String, "The deployment's environment: `production` or `development`.")
}, { description: "The API process is up." }) {}

export const ComponentState = Schema.Literal("ok", "degraded", "down", "unknown")
export type ComponentState = typeof ComponentState.Type

export const OverallState = Schema.Literal("ok", "degraded", "down")
export type OverallState = typeof OverallState.Type

const componentField = (what: string) =>
  field(ComponentState, `${what}: \`ok\`, \`degraded\`, \`down\`, or \`unknown\` when it could not be checked.`)

export const StatusComponents = Schema.Struct({
  api: componentField("The API"),
  database: componentField("The database"),
  queue: componentField("The job queue and its workers"),
  storage: componentField("Object storage (uploads and outputs)"),
  gpu: componentField("The GPU provider (`unknown` where none is configured)")
}).annotations({ identifier: "StatusComponents", description: "The state of each part of the service." })
export type StatusComponents = typeof StatusComponents.Type

export class PublicStatus extends Schema.Class<PublicStatus>("PublicStatus")({
  status: field(OverallState, "`ok`, `degraded` (some part is slow or failing) or `down`."),
  components: field(StatusComponents, "The state of each part."),
  updated_at: field(Timestamp, "When the states were checked (ISO 8601, UTC).")
}, { description: "The service's status, for a status page." }) {}
