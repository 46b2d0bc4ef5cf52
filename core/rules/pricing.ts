import type { ModelDefinition } from "../domain/catalog.js"

export interface Price {
  readonly billableSeconds: number
  readonly minimumApplied: boolean
  readonly unitPriceMicros: number
  readonly pricingVersion: number
  /** billableSeconds × unitPriceMicros, an exact integer. */
  readonly costMicros: number
}

/** What pricing needs of a model: the catalog's entry, or a client's copy of the API's `pricing`. */
export interface PricedModel {
  readonly pricing: Pick<ModelDefinition["pricing"], "unitPriceMicros" | "minUnits" | "pricingVersion">
}

/** decisions.md, Money: billable = max(ceil(duration), min_units); cost = billable × unit price. */
export const priceAudio = <M extends PricedModel>(model: M, durationSeconds: number): Price => {
  const unitPriceMicros = model.pricing.unitPriceMicros ?? 0
  const measured = Math.ceil(durationSeconds)
  const minimumApplied = model.pricing.minUnits > measured
  const billableSeconds = minimumApplied ? model.pricing.minUnits : measured
  return {
    billableSeconds,
    minimumApplied,
    unitPriceMicros,
    pricingVersion: model.pricing.pricingVersion,
    costMicros: billableSeconds * unitPriceMicros
  }
}
