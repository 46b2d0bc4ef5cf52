import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { HUSH_VERSION } from "../../core/version.js"

const json = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8"))

describe("the version", () => {
  it("is one value: core/version.ts, package.json and its lock file agree", () => {
    const lock = json("../../package-lock.json")
    expect(json("../../package.json").version).toBe(HUSH_VERSION)
    expect(lock.version).toBe(HUSH_VERSION)
    expect(lock.packages[""].version).toBe(HUSH_VERSION)
  })

  it("is the OpenAPI description's, as decisions.md (Versioning) sets it", () => {
    expect(HUSH_VERSION).toBe("1.0.0")
  })
})
