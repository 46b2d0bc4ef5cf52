/**
 * Sizes and durations as people read them: sizes in binary units (decisions.md, Files: 5 GB is
 * 5,368,709,120 bytes) with one decimal, durations as m:ss or h:mm:ss.
 */
const UNITS = ["KB", "MB", "GB", "TB"] as const

export const formatBytes = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} B`
  let value = bytes / 1024
  let unit = 0
  // rounded before choosing the unit: 1,048,575 bytes is "1.0 MB", not "1024.0 KB"
  while (Math.round(value * 10) / 10 >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`
}

/** Whole seconds, rounded: 615.8 → "10:16"; 3725 → "1:02:05"; under a second of audio shows "0:01". */
export const formatDuration = (seconds: number): string => {
  const total = seconds > 0 ? Math.max(1, Math.round(seconds)) : 0
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = String(total % 60).padStart(2, "0")
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`
}

/** The smallest 1, 2 or 5 × 10ⁿ at or above `max` (at least 1): where a chart's axis ends. */
export const niceCeiling = (max: number): number => {
  if (max <= 1) return 1
  const power = 10 ** Math.floor(Math.log10(max))
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power
  return 10 * power
}
