/**
 * Hush's own entry points as separate OS processes, for tests of what only a real process
 * shows: restarts, signals, several processes on one database. They run as `npm start` runs
 * them: the production build (dist/app, made by the tests' global setup) under plain node.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The built file of each entry point (scripts/build.mjs). */
const BUILT: Record<string, string> = {
  "apps/api/server/main.ts": "dist/app/api.mjs",
  "apps/worker/main.ts": "dist/app/worker.mjs",
  "apps/cli/main.ts": "dist/app/cli.mjs"
}

const built = (entry: string) => {
  const file = BUILT[entry]
  if (file === undefined) throw new Error(`no build of ${entry}`)
  return ["--enable-source-maps", file]
}

export interface HushProcess {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<number | string>
  /** Sends `signal`; fails, after killing the process group, if it has not exited within `graceMs`. */
  readonly stop: (signal?: NodeJS.Signals, graceMs?: number) => Promise<number | string>
}

export const startProcess = (entry: string, env: Record<string, string>): HushProcess => {
  // its own process group, so that a SIGKILL reaches its ffmpeg children too
  const child = spawn(process.execPath, built(entry), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += String(chunk)))
  child.stderr!.on("data", (chunk) => (output += String(chunk)))
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)))
  return {
    child,
    output: () => output,
    exited,
    stop: (signal = "SIGTERM", graceMs = 20_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        if (signal === "SIGKILL" && child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
        else child.kill(signal)
      }
      // a process that does not stop fails the test with its output, not with the test's timeout
      let timer: NodeJS.Timeout | undefined
      const overdue = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
          reject(new Error(`${entry} did not exit within ${graceMs} ms of ${signal}; its output:\n${output.slice(-6_000)}`))
        }, graceMs)
      })
      return Promise.race([exited, overdue]).finally(() => clearTimeout(timer))
    }
  }
}

/** Polls `GET /v1/health` until the server answers. */
export const waitForHealth = async (baseUrl: string, process: HushProcess, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (process.child.exitCode !== null) throw new Error(`the server exited early:\n${process.output()}`)
    try {
      if ((await fetch(`${baseUrl}/v1/health`, { signal: AbortSignal.timeout(5_000) })).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`the server did not answer within ${timeoutMs} ms:\n${process.output()}`)
}

/** `npm run hush -- …` with the given environment; its parsed `--json` output. */
export const runCli = async (args: ReadonlyArray<string>, env: Record<string, string>): Promise<any> => {
  const { stdout } = await promisify(execFile)(process.execPath, [...built("apps/cli/main.ts"), ...args, "--json"], {
    cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000, killSignal: "SIGKILL"
  })
  return JSON.parse(stdout)
}

// ---------------------------------------------------------------------------------------------
// Memory of a running process (Linux /proc)

/** The pid of the node process that runs a `startProcess` entry: the process itself (no launcher). */
export const entryPid = async (started: HushProcess): Promise<number> => {
  if (started.child.pid === undefined) throw new Error("the process has no pid")
  return started.child.pid
}

export interface ResidentMemory {
  /** VmRSS: resident now, in bytes. */
  readonly rssBytes: number
  /** VmHWM: the highest VmRSS since start (or since `resetPeakMemory`), in bytes. */
  readonly peakBytes: number
}

/** VmRSS and VmHWM of a process from /proc/<pid>/status; undefined once it has ended. */
export const residentMemory = (pid: number): ResidentMemory | undefined => {
  let status: string
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8")
  } catch {
    return undefined
  }
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)
    if (match === null) throw new Error(`no ${field} in /proc/${pid}/status`)
    return Number(match[1]) * 1024
  }
  return { rssBytes: kib("VmRSS"), peakBytes: kib("VmHWM") }
}

/** Resets VmHWM to the current VmRSS (`5` into /proc/<pid>/clear_refs, Linux ≥ 4.0); false where refused. */
export const resetPeakMemory = (pid: number): boolean => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}
