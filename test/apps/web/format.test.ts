/** The dashboard's sizes and durations (apps/web/src/format.ts), and the chart's y axis top. */
import { describe, expect, it } from "vitest"
import { formatBytes, formatDuration, niceCeiling } from "../../../apps/web/src/format.js"

describe("formatBytes: binary units, one decimal", () => {
  it("KB, MB and GB as decisions.md counts them", () => {
    expect(formatBytes(0)).toBe("0 B")
    expect(formatBytes(1023)).toBe("1023 B")
    expect(formatBytes(1024)).toBe("1.0 KB")
    expect(formatBytes(1930 * 1024)).toBe("1.9 MB")
    expect(formatBytes(1_048_575)).toBe("1.0 MB")
    expect(formatBytes(26_214_400)).toBe("25.0 MB")
    expect(formatBytes(5 * 1024 ** 3)).toBe("5.0 GB")
    expect(formatBytes(110_400_044)).toBe("105.3 MB")
  })
})

describe("formatDuration: m:ss or h:mm:ss, whole seconds", () => {
  it("rounds to the second; a sound under a second is 0:01, none is 0:00", () => {
    expect(formatDuration(0)).toBe("0:00")
    expect(formatDuration(0.2)).toBe("0:01")
    expect(formatDuration(7.49)).toBe("0:07")
    expect(formatDuration(615.8)).toBe("10:16")
    expect(formatDuration(3599.6)).toBe("1:00:00")
    expect(formatDuration(3725)).toBe("1:02:05")
    expect(formatDuration(21_600)).toBe("6:00:00")
  })
})

describe("niceCeiling: the chart's y axis ends at 1, 2 or 5 × 10ⁿ", () => {
  it("at or above the largest value", () => {
    expect([0, 1, 2, 3, 5, 7, 10, 11, 24, 99, 101, 4_000].map(niceCeiling)).toEqual([1, 1, 2, 5, 5, 10, 10, 20, 50, 100, 200, 5_000])
  })
})
