/**
 * The resource limits every ffmpeg child runs under (adapters/ffmpeg/process.ts, docs/security.md),
 * checked on real ffmpeg processes: what actually holds on this machine, without the sandbox and
 * inside it (bubblewrap: test/adapters/ffmpeg/sandbox.test.ts), where the limits, the exit statuses and the
 * signals must be the same.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type ChildLimits, DEFAULT_ADDRESS_SPACE_BYTES, type FfmpegSandbox, isCommandMissing, withLimits } from "../../../adapters/ffmpeg/process.js"

const root = mkdtempSync(join(tmpdir(), "hush-ffmpeg-limits-"))
/** The children's working folder, and another one beside it. */
const dir = join(root, "work")
const elsewhere = join(root, "elsewhere")
mkdirSync(dir)
mkdirSync(elsewhere)
afterAll(() => rmSync(root, { recursive: true, force: true }))

const LIMITS: ChildLimits = { cpuSeconds: 60, addressSpaceBytes: DEFAULT_ADDRESS_SPACE_BYTES }

/** Runs `ffmpeg args` under `limits` in `dir`: how it ended, and what it wrote to stdout and stderr. */
const runIn = (sandbox: FfmpegSandbox | undefined) => (args: ReadonlyArray<string>, limits: ChildLimits, command = "ffmpeg") =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdoutBytes: number; stderr: string }>((resolve) => {
    const limited = withLimits(command, ["-hide_banner", "-nostdin", "-loglevel", "error", ...args], limits, sandbox)
    const child = spawn(limited.file, limited.args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
    let stdoutBytes = 0
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => void (stdoutBytes += chunk.length))
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    child.once("close", (code, signal) => resolve({ code, signal, stdoutBytes, stderr }))
  })

const tone = (seconds: number) => ["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=16000:duration=${seconds}`]

describe.each([
  { name: "without a sandbox", sandbox: undefined },
  { name: "in bubblewrap", sandbox: { bwrapPath: "bwrap" } }
])("ffmpeg under its limits, $name", ({ sandbox }) => {
  const run = runIn(sandbox)

  it("decodes to a pipe as usual", async () => {
    const result = await run([...tone(2), "-f", "s16le", "pipe:1"], LIMITS)
    expect(result).toMatchObject({ code: 0, signal: null, stdoutBytes: 2 * 16_000 * 2 })
  })

  it("writes no byte to any file: told to, it is stopped (SIGXFSZ) and the file stays empty", async () => {
    // (outside its folder the sandbox refuses even to create one: test/adapters/ffmpeg/sandbox.test.ts)
    const targets = sandbox === undefined ? [join(dir, "inside.wav"), join(elsewhere, "outside.wav")] : [join(dir, "inside.wav")]
    for (const target of targets) {
      const result = await run([...tone(1), "-f", "wav", target], LIMITS)
      expect(result.signal).toBe("SIGXFSZ")
      expect(existsSync(target) ? statSync(target).size : 0).toBe(0)
      rmSync(target, { force: true })
    }
  })

  it("stops at its CPU time: an endless decode is killed after about its limit", async () => {
    const result = await run(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-f", "null", "-"], { ...LIMITS, cpuSeconds: 1 })
    expect(["SIGKILL", "SIGXCPU"]).toContain(result.signal)
  }, 30_000)

  it("gets no more address space than allowed: with too little it cannot even start", async () => {
    const result = await run([...tone(1), "-f", "s16le", "pipe:1"], { ...LIMITS, addressSpaceBytes: 64 * 1024 * 1024 })
    expect(result.code).not.toBe(0)
    expect(result.stdoutBytes).toBe(0)
  })

  it("a missing ffmpeg is told apart from a failing one", async () => {
    const result = await run(["-version"], LIMITS, "/nonexistent/ffmpeg")
    expect(isCommandMissing(result.code, result.stderr)).toBe(true)
    const failing = await run(["-i", join(dir, "no-such-input.wav"), "-f", "null", "-"], LIMITS)
    expect(failing.code).not.toBe(0)
    expect(isCommandMissing(failing.code, failing.stderr)).toBe(false)
  })
})
