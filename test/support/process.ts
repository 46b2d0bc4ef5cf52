/**
 * Hush's own entry points as separate OS processes, for tests of what only a real process
 * shows: restarts, signals, several processes on one database.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const TSX = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url))

export interface HushProcess {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<number | string>
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | string>
}

export const startProcess = (entry: string, env: Record<string, string>): HushProcess => {
  const child = spawn(TSX, [entry], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += String(chunk)))
  child.stderr!.on("data", (chunk) => (output += String(chunk)))
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)))
  return {
    child,
    output: () => output,
    exited,
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}

/** Polls `GET /v1/health` until the server answers. */
export const waitForHealth = async (baseUrl: string, process: HushProcess, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (process.child.exitCode !== null) throw new Error(`the server exited early:\n${process.output()}`)
    try {
      if ((await fetch(`${baseUrl}/v1/health`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`the server did not answer within ${timeoutMs} ms:\n${process.output()}`)
}

/** `npm run hush -- …` with the given environment; its parsed `--json` output. */
export const runCli = async (args: ReadonlyArray<string>, env: Record<string, string>): Promise<any> => {
  const { stdout } = await promisify(execFile)(TSX, ["apps/cli/main.ts", ...args, "--json"], {
    cwd: ROOT, env: { ...process.env, ...env }
  })
  return JSON.parse(stdout)
}
