/**
 * Per-deployment secrets (storage URL signing, cursor signing), made once and kept in
 * DATA_DIR with owner-only permissions, so restarts keep issued URLs and cursors valid.
 * `HUSH_SIGNING_SECRET` overrides, for several nodes sharing one deployment.
 */
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface DeploymentKeys {
  readonly signingSecret: string
  readonly cursorKey: string
}

export const loadOrCreateKeys = (dataDir: string): DeploymentKeys => {
  const shared = process.env["HUSH_SIGNING_SECRET"]
  if (shared !== undefined && shared.length >= 32) return { signingSecret: shared, cursorKey: `${shared}:cursor` }
  const file = join(dataDir, "secrets.json")
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as DeploymentKeys
  mkdirSync(dataDir, { recursive: true })
  const keys: DeploymentKeys = { signingSecret: randomBytes(32).toString("hex"), cursorKey: randomBytes(32).toString("hex") }
  writeFileSync(file, JSON.stringify(keys), { mode: 0o600, flag: "wx" })
  chmodSync(file, 0o600)
  return keys
}
