/**
 * `FFMPEG_SANDBOX` (docs/operations.md): `auto` runs every ffmpeg child in bubblewrap
 * (./process.ts) when bubblewrap works on this host, `off` never. Decided once at start: a
 * throwaway child goes through the same wrapper; when it fails, one warning says why and the
 * children run with their limits alone.
 */
import { spawn } from "node:child_process"
import { Duration, Effect } from "effect"
import { DEFAULT_ADDRESS_SPACE_BYTES, type FfmpegSandbox, privateWorkDir, setFfmpegSandbox, withLimits } from "./process.js"

export type FfmpegSandboxMode = "auto" | "off"

export const FFMPEG_SANDBOX_MODES: ReadonlyArray<FfmpegSandboxMode> = ["auto", "off"]

const CHECK_TIME_LIMIT = Duration.seconds(10)

/** Runs `true` as an ffmpeg child would be run in `sandbox`: undefined when it works, else what went wrong. */
export const sandboxUnavailable = (sandbox: FfmpegSandbox): Effect.Effect<string | undefined> =>
  Effect.scoped(Effect.flatMap(privateWorkDir, (cwd) =>
    Effect.async<string | undefined>((resume) => {
      const limited = withLimits("true", [], { cpuSeconds: 10, addressSpaceBytes: DEFAULT_ADDRESS_SPACE_BYTES }, sandbox)
      const child = spawn(limited.file, limited.args, { cwd, stdio: ["ignore", "ignore", "pipe"] })
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => { stderr = (stderr + chunk.toString("utf8")).slice(0, 2_000) })
      child.once("error", (error) => resume(Effect.succeed(error.message)))
      child.once("close", (code, signal) =>
        resume(Effect.succeed(code === 0 ? undefined : stderr.trim().split("\n")[0] || `it ended with ${signal ?? `exit status ${code}`}`)))
      return Effect.sync(() => void child.kill("SIGKILL"))
    }).pipe(Effect.timeoutTo({ duration: CHECK_TIME_LIMIT, onSuccess: (why) => why, onTimeout: () => "it did not answer within 10 s" }))
  ))

/**
 * Sets the process's sandbox from the setting; with `auto` on a host where bubblewrap does not
 * work, the one warning of the process about it. `bwrapPath` is for tests (a missing binary).
 */
export const useFfmpegSandbox = (mode: FfmpegSandboxMode, bwrapPath = "bwrap"): Effect.Effect<void> => {
  if (mode === "off") return Effect.sync(() => setFfmpegSandbox(undefined))
  const sandbox: FfmpegSandbox = { bwrapPath }
  return Effect.flatMap(sandboxUnavailable(sandbox), (why) =>
    why === undefined
      ? Effect.zipRight(Effect.sync(() => setFfmpegSandbox(sandbox)), Effect.logDebug("ffmpeg children run in bubblewrap"))
      : Effect.zipRight(
        Effect.sync(() => setFfmpegSandbox(undefined)),
        Effect.logWarning(
          `FFMPEG_SANDBOX=auto: ffmpeg children run without their sandbox (no network, read-only file system) because bubblewrap ` +
            `does not work here: ${why.slice(0, 200)}. Install it (Debian/Ubuntu: apt-get install bubblewrap) on a host that allows ` +
            `user namespaces, or set FFMPEG_SANDBOX=off to run without it knowingly.`
        )
      ))
}
