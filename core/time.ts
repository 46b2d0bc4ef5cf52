/** Durations in milliseconds. Internal timestamps are epoch milliseconds from Effect's Clock. */
export const SECOND = 1_000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

/** Wire format of every timestamp: ISO 8601 in UTC. */
export const toIso = (epochMillis: number): string => new Date(epochMillis).toISOString()
export const toIsoOrNull = (epochMillis: number | null): string | null =>
  epochMillis === null ? null : toIso(epochMillis)
