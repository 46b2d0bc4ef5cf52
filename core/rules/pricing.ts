import type { CatalogModel } from "../domain/catalog.js"

export interface Price {
  readonly billableSeconds: number
  readonly minimumApplied: boolean
  readonly unitPriceMicros: number
  readonly pricingVersion: number
  /** billableSeconds × unitPriceMicros, an exact integer. */
  readonly costMicros: number
}

/** decisions.md, Money: billable = max(ceil(duration), min_units); cost = billable × unit price. */
export const priceAudio = (model: CatalogModel, durationSeconds: number): Price => {
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
