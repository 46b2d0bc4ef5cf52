// The web dashboard's build (apps/web → dist/web): Vite bundles the Preact app with hashed
// file names, then every asset gets `.br` and `.gz` twins that the API sends to browsers that
// take them (apps/api/web.ts). It runs only when its inputs changed since the last build (a
// hash of them is kept in dist/web/.inputs), so `npm start` and the test setup pay for it once.
import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { readdir, readFile, writeFile } from "node:fs/promises"
import { join, relative } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"

/** What the bundle is made of: the app, the API definition and the core schemas it imports. */
const INPUT_DIRS = ["apps/web", "apps/api", "core"]
const INPUT_FILES = ["package-lock.json", "tsconfig.json", "scripts/build-web.mjs"]

const filesUnder = async (dir) => {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
}

const inputsHash = async (root) => {
  const hash = createHash("sha256")
  const files = [...INPUT_FILES.map((f) => join(root, f))]
  for (const dir of INPUT_DIRS) files.push(...(await filesUnder(join(root, dir))))
  for (const file of files.sort()) {
    hash.update(relative(root, file)).update("\0").update(await readFile(file)).update("\0")
  }
  return hash.digest("hex")
}

export const buildWeb = async (root, { force = false } = {}) => {
  const outDir = join(root, "dist", "web")
  const stamp = join(outDir, ".inputs")
  const hash = await inputsHash(root)
  if (!force && existsSync(join(outDir, "index.html")) && existsSync(stamp) && (await readFile(stamp, "utf8")) === hash) {
    return { built: false, outDir }
  }
  const started = performance.now()
  const { build } = await import("vite")
  await build({
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
  await writeFile(stamp, hash)
  console.error(`built dist/web in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return { built: true, outDir }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { dirname } = await import("node:path")
  const { fileURLToPath } = await import("node:url")
  await buildWeb(dirname(dirname(fileURLToPath(import.meta.url))), { force: process.argv.includes("--force") })
}
