/** The core's base32 writes what oslo's does, without its BigInt per 5 bytes. */
import { encodeBase32LowerCaseNoPadding as osloBase32 } from "@oslojs/encoding"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeBase32LowerCaseNoPadding } from "../../../core/rules/base32.js"

describe("base32 (lower case, no padding)", () => {
  it("is what oslo's writes, for every length and byte", () => {
    expect(encodeBase32LowerCaseNoPadding(new Uint8Array([]))).toBe("")
    expect(encodeBase32LowerCaseNoPadding(new TextEncoder().encode("foobar"))).toBe("mzxw6ytboi") // RFC 4648 §10, lower case
    expect(encodeBase32LowerCaseNoPadding(new Uint8Array(15).fill(255))).toBe("7".repeat(24))
    fc.assert(fc.property(fc.uint8Array({ maxLength: 70 }), (bytes) => {
      expect(encodeBase32LowerCaseNoPadding(bytes)).toBe(osloBase32(bytes))
    }), { numRuns: 2_000 })
  })
})
