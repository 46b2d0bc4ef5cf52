// Whether a build is up to date: a manifest beside its output lists each input file with its
// size, mtime and SHA-256. A file whose size and mtime are unchanged is taken as unchanged (a
// stat, no read); one whose stat differs is hashed, so a checkout or a `touch` that leaves the
// bytes alone does not force a rebuild. Anything missing, added or different: stale.
//
// It imports nothing heavy (no esbuild, no Vite): `npm start` and the `hush` bin run it on
// every start, and when nothing changed that is all they pay (tens of milliseconds).
import { createHash } from "node:crypto"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const MANIFEST_VERSION = 1

const sha256 = (path) => createHash("sha256").update(readFileSync(path)).digest("hex")

const statOrUndefined = (path) => {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

/** The manifest at `path`, or undefined when there is none (or it is not one this code wrote). */
export const readManifest = (path) => {
  try {
    const manifest = JSON.parse(readFileSync(path, "utf8"))
    return manifest.version === MANIFEST_VERSION && typeof manifest.inputs === "object" ? manifest : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether the build that wrote the manifest at `manifestPath` still stands: its outputs all
 * exist and its inputs are all unchanged. `inputs` (paths relative to `root`), when given, is
 * the list the build would read now: a file added or removed there makes it stale too.
 */
export const isUpToDate = (root, manifestPath, inputs) => {
  const manifest = readManifest(manifestPath)
  if (manifest === undefined) return false
  const recorded = Object.keys(manifest.inputs)
  if (inputs !== undefined) {
    const now = [...new Set(inputs)].sort()
    if (now.length !== recorded.length || now.some((file, i) => file !== recorded[i])) return false
  }
  for (const output of manifest.outputs) if (statOrUndefined(join(root, output)) === undefined) return false
  for (const file of recorded) {
    const [size, mtimeMs, hash] = manifest.inputs[file]
    const stats = statOrUndefined(join(root, file))
    if (stats === undefined) return false
    if (stats.size === size && stats.mtimeMs === mtimeMs) continue
    if (stats.size !== size || sha256(join(root, file)) !== hash) return false
  }
  return true
}

/** Records `inputs` (relative to `root`) as they are now, and the `outputs` that must exist. */
export const writeManifest = (root, manifestPath, inputs, outputs) => {
  const entries = {}
  for (const file of [...new Set(inputs)].sort()) {
    const path = join(root, file)
    const stats = statSync(path)
    entries[file] = [stats.size, stats.mtimeMs, sha256(path)]
  }
  writeFileSync(manifestPath, JSON.stringify({ version: MANIFEST_VERSION, outputs, inputs: entries }))
}

/** What every build depends on beyond its source modules: the installed packages, the settings. */
export const COMMON_INPUTS = ["package.json", "package-lock.json", "tsconfig.json", "scripts/build-inputs.mjs"]

/** dist/app's manifest (scripts/build.mjs writes it). */
export const APP_MANIFEST = join("dist", "app", ".inputs.json")

/** Whether dist/app is up to date with the sources (used by bin/hush.mjs before it runs the CLI). */
export const appIsUpToDate = (root) => isUpToDate(root, join(root, APP_MANIFEST))
