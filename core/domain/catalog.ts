/**
 * The model catalog is configuration: definitions plus the providers this deployment runs.
 * A model whose runner is not configured is `retired` (listed, not usable).
 */
import { Context, Option } from "effect"
import type { ModelStatus, Task } from "./enums.js"

export interface ModelDefinition {
  readonly id: string
  readonly task: Task
  readonly name: string
  readonly description: string
  /** Which runner executes it: `builtin` (the service's own CPU worker) or a GPU provider's name. */
  readonly runner: string
  /** Set to retire a model whatever the runners. */
  readonly retired?: boolean
  readonly pricing: {
    readonly unit: "second"
    /** Null means no price: the model is not usable. */
    readonly unitPriceMicros: number | null
    readonly minUnits: number
    readonly pricingVersion: number
  }
  readonly limits: { readonly maxBytes: number | null; readonly maxSeconds: number | null }
  readonly output: { readonly format: "mp3"; readonly bitrateKbps: number }
}

export interface CatalogModel extends ModelDefinition {
  readonly status: ModelStatus
}

export interface Catalog {
  readonly models: ReadonlyArray<CatalogModel>
  readonly defaultModel: { readonly [task in Task]: string }
}

export class ModelCatalog extends Context.Tag("hush/ModelCatalog")<ModelCatalog, Catalog>() {}

export const RNNOISE: ModelDefinition = {
  id: "xiph/rnnoise",
  task: "denoise",
  name: "RNNoise",
  description: "Recurrent-network speech denoiser (Xiph RNNoise, newer weights), run on the service's own CPU workers.",
  runner: "builtin",
  pricing: { unit: "second", unitPriceMicros: 100, minUnits: 10, pricingVersion: 1 },
  limits: { maxBytes: null, maxSeconds: null },
  output: { format: "mp3", bitrateKbps: 192 }
}

/**
 * GTCRN (Rong Xiaobin, ICASSP 2024; MIT): a 48k-parameter network, run on the same CPU workers
 * by the same pipeline as RNNoise. Its CPU per audio second: 1–2× RNNoise's as measured so far (docs/performance.md).
 */
export const GTCRN: ModelDefinition = {
  id: "xiaobin-rong/gtcrn",
  task: "denoise",
  name: "GTCRN",
  description: "Grouped temporal convolutional recurrent speech enhancement network (GTCRN, 48k parameters), run on the service's own CPU workers.",
  runner: "builtin",
  pricing: { unit: "second", unitPriceMicros: 150, minUnits: 10, pricingVersion: 1 },
  limits: { maxBytes: null, maxSeconds: null },
  output: { format: "mp3", bitrateKbps: 192 }
}

/** Run by the GPU provider configured as runner `gpu` (GPU_PROVIDER_URL); `retired` where there is none. */
export const DENOISE_PRO: ModelDefinition = {
  id: "hush/denoise-pro",
  task: "denoise",
  name: "Hush Denoise Pro",
  description: "Large neural speech denoiser run on GPU hosts; available where a GPU provider is configured.",
  runner: "gpu",
  pricing: { unit: "second", unitPriceMicros: 300, minUnits: 10, pricingVersion: 1 },
  limits: { maxBytes: null, maxSeconds: null },
  output: { format: "mp3", bitrateKbps: 192 }
}

export const DEFAULT_MODEL_DEFINITIONS: ReadonlyArray<ModelDefinition> = [RNNOISE, GTCRN, DENOISE_PRO]

export const makeCatalog = (
  definitions: ReadonlyArray<ModelDefinition>,
  configuredRunners: ReadonlyArray<string>
): Catalog => ({
  models: definitions.map((definition) => ({
    ...definition,
    status: definition.retired === true || !configuredRunners.includes(definition.runner) ? "retired" : "live"
  })),
  defaultModel: { denoise: RNNOISE.id }
})

export const findModel = (catalog: Catalog, id: string): Option.Option<CatalogModel> =>
  Option.fromNullable(catalog.models.find((model) => model.id === id))

/** Usable for a new job: live and priced. */
export const isUsable = (model: CatalogModel): boolean =>
  model.status === "live" && model.pricing.unitPriceMicros !== null && model.pricing.unitPriceMicros > 0
