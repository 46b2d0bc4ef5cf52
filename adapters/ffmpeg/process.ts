/** What every ffmpeg child process of the project needs: the install hint and back-pressured stdin writes. */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Writable } from "node:stream"
import { Effect, type Scope } from "effect"

export const FFMPEG_MISSING_MESSAGE =
  "ffmpeg is not installed or not on PATH: install it (Debian/Ubuntu: apt-get install -y ffmpeg; macOS: brew install ffmpeg)"

/**
 * Writes one chunk to a child's stdin, waiting for 'drain' when its buffer is full. False once
 * stdin has closed (the child stopped reading: its exit code decides what that means).
 */
export const writeChunk = (stdin: Writable, chunk: Uint8Array, onWritten?: (chunk: Uint8Array) => void) =>
  Effect.async<boolean>((resume) => {
    if (!stdin.writable) return resume(Effect.succeed(false))
    const accepted = onWritten === undefined ? stdin.write(chunk) : stdin.write(chunk, () => onWritten(chunk))
    if (accepted) return resume(Effect.succeed(true))
    const off = () => {
      stdin.off("drain", onDrain)
      stdin.off("close", onClose)
    }
    const onDrain = () => (off(), resume(Effect.succeed(true)))
    const onClose = () => (off(), resume(Effect.succeed(false)))
    stdin.on("drain", onDrain)
    stdin.on("close", onClose)
    return Effect.sync(off)
  })

/**
 * What an ffmpeg child may use (docs/security.md): CPU seconds (RLIMIT_CPU: past it the kernel
 * kills it), address space (RLIMIT_AS: allocations past it fail), and no bytes written to any
 * file (RLIMIT_FSIZE 0: pipes are not files; writing one kills it). It runs in a private,
 * empty working folder, and core dumps are off.
 */
export interface ChildLimits {
  readonly cpuSeconds: number
  readonly addressSpaceBytes: number
}

/** Measured here: ffmpeg's libraries map ~400 MB before decoding anything; 2 GiB leaves room for any audio. */
export const DEFAULT_ADDRESS_SPACE_BYTES = 2 * 1024 * 1024 * 1024

/**
 * Where the host allows it, every ffmpeg child also runs in bubblewrap (docs/security.md): new
 * namespaces, among them an empty network one (no interface but a loopback that is down), its
 * own /proc (no other process to see) and a minimal /dev; the whole file system read-only except
 * its private working folder; no capabilities; an environment of PATH alone (the server's holds
 * its secrets). Process-wide, like the umask: set once at start from `FFMPEG_SANDBOX`
 * (./sandbox.ts); unset, children run without it.
 */
export interface FfmpegSandbox {
  /** The bubblewrap binary (`bwrap` on PATH). */
  readonly bwrapPath: string
}

let processSandbox: FfmpegSandbox | undefined

export const setFfmpegSandbox = (sandbox: FfmpegSandbox | undefined): void => {
  processSandbox = sandbox
}

export const currentFfmpegSandbox = (): FfmpegSandbox | undefined => processSandbox

const BWRAP_FLAGS = [
  "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
  "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--clearenv"
].join(" ")

const shellQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/**
 * The shell's part when sandboxed: a missing command answers 127 like `exec` does (bubblewrap
 * would say 1); `cd -P .` makes $PWD the working folder's real path, bound writable; and
 * bubblewrap reports a child killed by a signal as 128 + its number, so the shell dies of the
 * same signal, and callers see a CPU-limit kill (SIGXCPU) or a crash as they would without it.
 */
const sandboxed = (sandbox: FfmpegSandbox) =>
  `{ if ! command -v "$0" >/dev/null; then echo "$0: not found" >&2; exit 127; fi; cd -P . && ` +
  `${shellQuoted(sandbox.bwrapPath)} ${BWRAP_FLAGS} --setenv PATH "$PATH" --bind "$PWD" "$PWD" --chdir "$PWD" -- "$0" "$@"; ` +
  `s=$?; if [ $s -gt 128 ] && [ $s -lt 160 ]; then kill -$((s - 128)) $$; fi; exit $s; }`

/**
 * `command args` as `/bin/sh -c 'ulimit …; exec "$0" "$@"' command args`: the limits are set
 * (soft and hard alike, so the child cannot raise them) before ffmpeg itself starts. dash takes
 * one limit per `ulimit`; RLIMIT_AS is Linux's (macOS refuses to lower it). With a sandbox
 * (the process's, unless one is given), the shell starts ffmpeg through bubblewrap instead.
 */
export const withLimits = (
  command: string,
  args: ReadonlyArray<string>,
  limits: ChildLimits,
  sandbox: FfmpegSandbox | undefined = processSandbox
): { readonly file: string; readonly args: ReadonlyArray<string> } => {
  const cpu = Math.max(1, Math.ceil(limits.cpuSeconds))
  const kib = Math.max(1, Math.floor(limits.addressSpaceBytes / 1024))
  const settings = [`ulimit -t ${cpu}`, ...(process.platform === "linux" ? [`ulimit -v ${kib}`] : []), "ulimit -f 0", "ulimit -c 0"]
  const start = sandbox === undefined ? `exec "$0" "$@"` : sandboxed(sandbox)
  return { file: "/bin/sh", args: ["-c", `${settings.join(" && ")} && ${start}`, command, ...args] }
}

/**
 * Bubblewrap's own failure (it could not set the sandbox up): a fault of this host, not of the
 * input. It speaks before ffmpeg starts, and ffmpeg's first line always carries its prefix.
 */
export const isSandboxFailure = (stderr: string): boolean => stderr.startsWith("bwrap: ")

/** The shell's answer when `exec` finds no such command (exit status 127): the same as a spawn ENOENT. */
export const isCommandMissing = (code: number | null, stderr: string): boolean =>
  code === 127 && /not found|No such file/.test(stderr)

/** Signals that mean the child hit its CPU limit (SIGXCPU, then SIGKILL at the hard limit) or was killed for its memory. */
export const isResourceKill = (signal: NodeJS.Signals | null): boolean => signal === "SIGXCPU" || signal === "SIGKILL"

/** A private, empty folder for one child's working directory; removed with the scope. */
export const privateWorkDir: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "hush-ffmpeg-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)
