// The web dashboard's build (apps/web → dist/web): Vite bundles the Preact app with hashed
// file names, then every asset gets `.br` and `.gz` twins that the API sends to browsers that
// take them (apps/api/server/web.ts). It runs only when its inputs changed since the last build (a
// manifest of them is kept in dist/web/.inputs.json, scripts/build-inputs.mjs), so `npm start`
// and the test setup pay for it once.
import { realpathSync } from "node:fs"
import { readdir, readFile, writeFile } from "node:fs/promises"
import { join, relative } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { COMMON_INPUTS, isUpToDate, writeManifest } from "./build-inputs.mjs"

/** Read besides the modules Vite reports (those are listed from its output after each build). */
const INPUT_FILES = [...COMMON_INPUTS, "apps/web/tsconfig.json", "scripts/build-web.mjs"]

export const buildWeb = async (root, { force = false } = {}) => {
  const outDir = join(root, "dist", "web")
  const manifest = join(outDir, ".inputs.json")
  if (!force && isUpToDate(root, manifest)) return { built: false, outDir }
  const started = performance.now()
  const { build } = await import("vite")
  const result = await build({
    configFile: false,
    root: join(root, "apps", "web"),
    base: "/",
    logLevel: "warn",
    oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
    build: {
      outDir,
      emptyOutDir: true,
      assetsDir: "assets",
      target: "es2022",
      sourcemap: false,
      // the app is small: inline nothing, so the CSP needs no data: scripts or styles
      assetsInlineLimit: 0,
      reportCompressedSize: false
    }
  })
  const assets = join(outDir, "assets")
  for (const name of await readdir(assets)) {
    const bytes = await readFile(join(assets, name))
    await writeFile(join(assets, `${name}.gz`), gzipSync(bytes, { level: 9 }))
    await writeFile(join(assets, `${name}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
  }
  // every module of Hush's own that went into the bundle (the HTML and CSS included)
  const modules = (Array.isArray(result) ? result : [result]).flatMap((output) => output.output.flatMap((chunk) => chunk.moduleIds ?? []))
  // (Vite names modules by their real path)
  const realRoot = realpathSync(root)
  const sources = modules.filter((id) => id.startsWith(`${realRoot}/`) && !id.includes("/node_modules/")).map((id) => relative(realRoot, id))
  writeManifest(root, manifest, [...sources, ...INPUT_FILES], [relative(root, join(outDir, "index.html"))])
  console.error(`built dist/web in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return { built: true, outDir }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { dirname } = await import("node:path")
  const { fileURLToPath } = await import("node:url")
  await buildWeb(dirname(dirname(fileURLToPath(import.meta.url))), { force: process.argv.includes("--force") })
}
