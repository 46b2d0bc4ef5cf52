/**
 * `hush` as a user runs it, in its own process, with the environment a test gives
 * (HUSH_API_KEY, HUSH_BASE_URL, a cache dir of its own), stdout and stderr collected. It runs
 * the production build of apps/cli/main.ts (dist/app/cli.mjs, made by the tests' global
 * setup), which `bin/hush.mjs` (the package's bin) runs too once it has checked the build is
 * current.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

export interface CliRun {
  readonly child: ChildProcess
  /** Everything written to stderr so far. */
  readonly stderr: () => string
  readonly done: Promise<{ readonly code: number | null; readonly signal: string | null; readonly stdout: string; readonly stderr: string }>
}

export const startHush = (args: ReadonlyArray<string>, env: Record<string, string | undefined>, entry = "dist/app/cli.mjs"): CliRun => {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => (stdout += String(chunk)))
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
  const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  return { child, stderr: () => stderr, done }
}

export const hush = (args: ReadonlyArray<string>, env: Record<string, string | undefined>, entry?: string) => startHush(args, env, entry).done
