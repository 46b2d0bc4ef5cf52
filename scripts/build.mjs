// The production build: the entry points bundled to plain JavaScript (esbuild) that `node`
// runs without a TypeScript loader, with source maps. `npm start` and `npm run worker` run it
// first (prestart, preworker); the process tests' setup runs it too (test/support/global-setup.ts).
//
//   dist/app/api.mjs            npm start           (apps/api/main.ts)
//   dist/app/worker.mjs         npm run worker      (apps/worker/main.ts)
//   dist/app/cli.mjs            the operator CLI    (apps/cli/main.ts)
//   dist/app/chunk-worker.mjs   the RNNoise threads (adapters/rnnoise/chunk-worker.mjs, engine included)
//   dist/app/bench-denoise.mjs  npm run bench:denoise
//   dist/app/bench-jobs.mjs     npm run bench:jobs
//   dist/app/chunk-*.mjs        code shared by them, and modules loaded only when configured (S3, Redis)
//
// Paths found at run time through import.meta.url stay right because dist/app is two levels
// below the root, like the modules that hold them: the pool's `./chunk-worker.mjs` is the
// bundle beside it, and the test-mode sample's `../../assets/…` is the project's assets/.
// Migrations are imported modules (Migrator.fromRecord), so they are inside the bundle.
import { build } from "esbuild"
import { existsSync } from "node:fs"
import { rm } from "node:fs/promises"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const outdir = join(root, "dist", "app")

const started = performance.now()
await rm(outdir, { recursive: true, force: true })
await build({
  absWorkingDir: root,
  entryPoints: {
    api: "apps/api/main.ts",
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
  // Packages stay in node_modules, loaded by Node as they are: bundled, their source maps
  // cost ~60 MB of resident memory under --enable-source-maps (measured; docs/operations.md),
  // and the build takes 10+ s instead of one.
  packages: "external",
  logLevel: "warning"
})

for (const needed of [join(outdir, "chunk-worker.mjs"), join(outdir, "..", "..", "assets", "test-mode-sample.mp3")]) {
  if (!existsSync(needed)) throw new Error(`the build is missing ${needed}`)
}
console.error(`built dist/app in ${((performance.now() - started) / 1000).toFixed(1)} s`)
