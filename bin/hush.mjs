#!/usr/bin/env node
// `npx hush …`: the CLI as built JavaScript (dist/app/cli.mjs, scripts/build.mjs). When the
// build is missing or older than the checkout's sources it is made first (a few seconds, once;
// its log goes to stderr), so the command always matches the checkout it comes from. Checking
// costs a stat of each source file; no TypeScript is compiled on a run.
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { appIsUpToDate } from "../scripts/build-inputs.mjs"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
if (!appIsUpToDate(root)) {
  const build = spawnSync(process.execPath, [join(root, "scripts", "build.mjs"), "--app-only"], { stdio: ["ignore", 2, 2] })
  if (build.status !== 0) {
    console.error("hush: building the CLI failed (node scripts/build.mjs --app-only; see above)")
    process.exit(1)
  }
}
await import("../dist/app/cli.mjs")
