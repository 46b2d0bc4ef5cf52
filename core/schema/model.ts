import { Schema } from "effect"
import { ModelStatus, Task } from "../domain/enums.js"
import { constant, Micros } from "./common.js"

export const ModelPricing = Schema.Struct({
  /** Priced per second. */
  unit: Schema.String,
  unit_price_micros: Micros,
  /** Minimum billable units per job. */
  min_units: Schema.Int,
  /** Copied to a job's `receipt.pricing_version`. */
  pricing_version: Schema.Int,
  display: Schema.String,
  currency: constant("usd")
}).annotations({ identifier: "ModelPricing" })
export type ModelPricing = typeof ModelPricing.Type

export const ModelLimits = Schema.Struct({
  max_bytes: Schema.NullOr(Schema.Int),
  max_seconds: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "ModelLimits" })
export type ModelLimits = typeof ModelLimits.Type

export const ModelOutput = Schema.Struct({
  format: Schema.String,
  bitrate_kbps: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "ModelOutput" })
export type ModelOutput = typeof ModelOutput.Type

export class Model extends Schema.Class<Model>("Model")({
  object: constant("model"),
  /** `{provider}/{model}`. */
  id: Schema.String,
  task: Task,
  name: Schema.String,
  description: Schema.String,
  /** `retired` models are listed but not usable (`422 model_not_available`). */
  status: ModelStatus,
  pricing: ModelPricing,
  limits: ModelLimits,
  output: ModelOutput
}) {}

export class ModelList extends Schema.Class<ModelList>("ModelList")({
  object: constant("list"),
  data: Schema.Array(Model)
}) {}
