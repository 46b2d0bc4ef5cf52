/**
 * The dashboard's bundle carries the API contract and the pure core it names, never the server:
 * no module under apps/api/server, core/services, core/ports or adapters (docs/architecture.md,
 * Dependency rules; .dependency-cruiser.cjs checks the imports, this checks what Vite bundled).
 * The module list is the one scripts/build-web.mjs records from Vite's output in
 * dist/web/.inputs.json (built by the test setup, rebuilt here only if its inputs changed).
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
// @ts-expect-error: a plain ESM build script without type declarations
import { buildWeb } from "../../../scripts/build-web.mjs"
// @ts-expect-error: a plain ESM build script without type declarations
import { readManifest } from "../../../scripts/build-inputs.mjs"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const SERVER_SIDE = /^(apps\/api\/server\/|core\/services\/|core\/ports\/|adapters\/)/

let modules: Array<string> = []
let bundledJs = ""

beforeAll(async () => {
  const { outDir } = await buildWeb(root)
  const manifest = readManifest(join(outDir, ".inputs.json")) as { inputs: Record<string, unknown> } | undefined
  if (manifest === undefined) throw new Error("dist/web/.inputs.json is missing after the web build")
  modules = Object.keys(manifest.inputs).filter((file) => /\.(ts|tsx)$/.test(file))
  const assets = join(outDir, "assets")
  bundledJs = readdirSync(assets).filter((name) => name.endsWith(".js")).map((name) => readFileSync(join(assets, name), "utf8")).join("\n")
}, 120_000)

describe("the dashboard's bundle", () => {
  it("is built from the contract and the dashboard's own modules", () => {
    // the list is Vite's real one: the contract and the pages are in it
    expect(modules).toContain("apps/api/contract/definition.ts")
    expect(modules).toContain("apps/api/contract/middleware.ts")
    expect(modules).toContain("apps/web/src/api.ts")
  })

  it("contains no server code, service, port or adapter", () => {
    expect(modules.filter((file) => SERVER_SIDE.test(file))).toEqual([])
  })

  it("carries none of the server's service tags", () => {
    // the ports' Context tags are named hush/<Name>: a bundled port would bring its key along
    for (const port of ["hush/AccountRepo", "hush/KeyRepo", "hush/SessionRepo", "hush/RateLimiter"]) {
      expect(bundledJs.includes(port), port).toBe(false)
    }
    // while the contract's own tags are there (the check above reads the real bundle)
    expect(bundledJs).toContain("hush/CurrentSession")
  })
})
