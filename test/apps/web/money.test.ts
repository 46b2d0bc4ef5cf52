/** The dashboard's amount field: typed dollars → integer micros, exactly, or refused. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { dollarsToMicros } from "../../../apps/web/src/money.js"

describe("dollarsToMicros (the credits page's amount)", () => {
  it("every amount in dollars and cents converts exactly, written with 0, 1 or 2 decimals", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 9_999_999_99 }), (cents) => {
      const whole = Math.floor(cents / 100)
      const fraction = String(cents % 100).padStart(2, "0")
      expect(dollarsToMicros(`${whole}.${fraction}`)).toBe(cents * 10_000)
      if (fraction.endsWith("0")) expect(dollarsToMicros(`${whole}.${fraction[0]}`)).toBe(cents * 10_000)
      if (fraction === "00") expect(dollarsToMicros(` ${whole} `)).toBe(cents * 10_000)
    }))
  })

  it("examples, and what is not dollars and cents", () => {
    expect(dollarsToMicros("20")).toBe(20_000_000)
    expect(dollarsToMicros("12.5")).toBe(12_500_000)
    expect(dollarsToMicros("0.07")).toBe(70_000)
    expect(dollarsToMicros("19.99")).toBe(19_990_000)
    for (const bad of ["", "$20", "20.001", "-5", "1e3", "20,00", "0x10", ". 5", "12.", "NaN", "Infinity", "12345678"]) {
      expect(dollarsToMicros(bad), bad).toBeNull()
    }
  })
})
