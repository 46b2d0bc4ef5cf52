import { Schema } from "effect"
import { Mode, Scope } from "../domain/enums.js"
import { Micros, Timestamp } from "./common.js"

export class Credits extends Schema.Class<Credits>("Credits")({
  balance_micros: Micros,
  reserved_micros: Micros,
  /** Unexpired credit that no running job holds; never negative. */
  available_micros: Micros,
  currency: Schema.String,
  display: Schema.String
}) {}

export class MeOut extends Schema.Class<MeOut>("MeOut")({
  account_id: Schema.String,
  key_id: Schema.String,
  mode: Mode,
  scopes: Schema.Array(Scope),
  /** Shown only to a key with `credits:read`. */
  balance: Schema.optional(Schema.NullOr(Credits))
}) {}

export class OutputLink extends Schema.Class<OutputLink>("OutputLink")({
  /** Signed download URL. */
  url: Schema.String,
  expires_at: Timestamp,
  filename: Schema.String
}) {}

export class Health extends Schema.Class<Health>("Health")({
  status: Schema.String,
  version: Schema.String,
  env: Schema.String
}) {}

export const ComponentState = Schema.Literal("ok", "degraded", "down", "unknown")
export type ComponentState = typeof ComponentState.Type

export const OverallState = Schema.Literal("ok", "degraded", "down")
export type OverallState = typeof OverallState.Type

export const StatusComponents = Schema.Struct({
  api: ComponentState,
  database: ComponentState,
  queue: ComponentState,
  storage: ComponentState,
  gpu: ComponentState
}).annotations({ identifier: "StatusComponents" })
export type StatusComponents = typeof StatusComponents.Type

export class PublicStatus extends Schema.Class<PublicStatus>("PublicStatus")({
  status: OverallState,
  components: StatusComponents,
  updated_at: Timestamp
}) {}
