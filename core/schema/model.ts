import { Schema } from "effect"
import { ModelStatus, Task } from "../domain/enums.js"
import { constant, field, Micros } from "./common.js"

export const ModelPricing = Schema.Struct({
  unit: field(Schema.String, "What is billed: `second` (of input audio)."),
  unit_price_micros: field(Micros, "The price of one unit in micros of a US dollar (100 = $0.0001 a second, $0.36 an hour)."),
  min_units: field(Schema.Int, "The fewest units a job is billed: shorter audio is billed this many seconds."),
  pricing_version: field(Schema.Int, "Rises whenever the price changes; copied to each job's `receipt.pricing_version`."),
  display: field(Schema.String, "The price as text, e.g. `$0.0001 per second`."),
  currency: constant("usd").annotations({ description: "Always `usd`." })
}).annotations({ identifier: "ModelPricing", description: "What a job on this model costs." })
export type ModelPricing = typeof ModelPricing.Type

export const ModelLimits = Schema.Struct({
  max_bytes: field(Schema.NullOr(Schema.Int), "The largest input file the model takes, in bytes; null: only the service's own limit (5 GiB live, 25 MiB test)."),
  max_seconds: field(Schema.NullOr(Schema.Int), "The longest input audio the model takes, in seconds; null: only the service's own limit (6 hours).")
}).annotations({ identifier: "ModelLimits", description: "The model's own input limits, where lower than the service's." })
export type ModelLimits = typeof ModelLimits.Type

export const ModelOutput = Schema.Struct({
  format: field(Schema.String, "The default output format (`mp3`); a job may ask for another."),
  bitrate_kbps: field(Schema.NullOr(Schema.Int), "The default output's bitrate in kbit/s.")
}).annotations({ identifier: "ModelOutput", description: "What the model delivers by default." })
export type ModelOutput = typeof ModelOutput.Type

export class Model extends Schema.Class<Model>("Model")({
  object: constant("model"),
  id: field(Schema.String, "The model's id, `{provider}/{model}`: pass it as `model` when creating a job."),
  task: field(Task, "What the model does: `denoise`."),
  name: field(Schema.String, "A display name."),
  description: field(Schema.String, "What the model is and where it runs."),
  status: field(ModelStatus, "`live` (usable) or `retired` (listed, not usable: a job naming it is 422 model_not_available)."),
  pricing: field(ModelPricing, "What a job costs on this model."),
  limits: field(ModelLimits, "The model's input limits."),
  output: field(ModelOutput, "What the model delivers by default.")
}, { description: "A denoising model and its price." }) {}

export class ModelList extends Schema.Class<ModelList>("ModelList")({
  object: constant("list"),
  data: field(Schema.Array(Model), "Every model of the catalog, retired ones included.")
}, { description: "The model catalog." }) {}
