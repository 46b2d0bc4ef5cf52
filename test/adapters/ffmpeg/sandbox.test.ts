/**
 * The ffmpeg children's sandbox (adapters/ffmpeg/process.ts and sandbox.ts, docs/security.md):
 * on real ffmpeg in bubblewrap, no network, nothing written outside the child's own folder, none
 * of the server's secrets in sight; the same children without it (FFMPEG_SANDBOX=off) can do each
 * of these, so every test here fails without the defence. And the setting: one warning at start
 * where bubblewrap does not work, after which the children still run.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, ConfigProvider, Effect, Either, Exit, Logger, LogLevel, Stream } from "effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { layerFfmpegAudioProbe } from "../../../adapters/ffmpeg/probe.js"
import {
  currentFfmpegSandbox,
  DEFAULT_ADDRESS_SPACE_BYTES,
  type FfmpegSandbox,
  setFfmpegSandbox,
  withLimits
} from "../../../adapters/ffmpeg/process.js"
import { useFfmpegSandbox } from "../../../adapters/ffmpeg/sandbox.js"
import { loadConfig } from "../../../apps/runtime/config.js"
import { AudioProbe } from "../../../core/ports/audio.js"
import { tone } from "../../e2e/helpers.js"

const BWRAP: FfmpegSandbox = { bwrapPath: "bwrap" }
const LIMITS = { cpuSeconds: 30, addressSpaceBytes: DEFAULT_ADDRESS_SPACE_BYTES }

const root = mkdtempSync(join(tmpdir(), "hush-ffmpeg-sandbox-"))
/** The children's working folder, and another one beside it. */
const dir = join(root, "work")
const elsewhere = join(root, "elsewhere")
mkdirSync(dir)
mkdirSync(elsewhere)
afterAll(() => rmSync(root, { recursive: true, force: true }))
afterEach(() => setFfmpegSandbox(undefined))

/** Runs `command args` in `dir` as ffmpeg children are run (limits, and the sandbox when given). */
const run = (command: string, args: ReadonlyArray<string>, sandbox: FfmpegSandbox | undefined, env: NodeJS.ProcessEnv = process.env) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    const limited = withLimits(command, args, LIMITS, sandbox)
    const child = spawn(limited.file, limited.args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

const ffmpeg = (args: ReadonlyArray<string>, sandbox: FfmpegSandbox | undefined) =>
  run("ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", ...args], sandbox)

/** Waits until `done` holds, up to 10 s. */
const pollFor = async (done: () => boolean) => {
  for (let waited = 0; !done() && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
}

/** A tiny helper run through the same wrapper: `sh -c script`. */
const shell = (script: string, sandbox: FfmpegSandbox | undefined, env?: NodeJS.ProcessEnv) => run("/bin/sh", ["-c", script], sandbox, env)

describe("an ffmpeg child in bubblewrap", () => {
  it("cannot open a TCP connection, even to the host's loopback; without the sandbox the same ffmpeg connects", async () => {
    let connections = 0
    const server = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as { port: number }).port
    try {
      // the protocol whitelist lifted, as a decoder bug might: the namespace still holds
      const args = ["-protocol_whitelist", "tcp", "-i", `tcp://127.0.0.1:${port}`, "-f", "null", "-"]
      const sandboxed = await ffmpeg(args, BWRAP)
      expect(sandboxed.code).not.toBe(0)
      expect(sandboxed.stderr).toMatch(/unreachable|refused|Cannot assign/i)
      expect(connections).toBe(0)
      await ffmpeg(args, undefined)
      expect(connections).toBe(1)
    } finally {
      server.close()
    }
  }, 30_000)

  it("creates, deletes or renames nothing outside its own folder, and can inside; without the sandbox it can anywhere", async () => {
    const cases = [{ sandbox: BWRAP, writable: false }, { sandbox: undefined, writable: true }]
    for (const { sandbox, writable } of cases) {
      const outside = join(elsewhere, "made.wav")
      const inside = join(dir, "made.wav")
      // ffmpeg itself, told to write its output there (RLIMIT_FSIZE already keeps any file empty)
      await ffmpeg(["-f", "lavfi", "-i", "sine=duration=1", "-f", "wav", outside], sandbox)
      await ffmpeg(["-f", "lavfi", "-i", "sine=duration=1", "-f", "wav", inside], sandbox)
      expect(existsSync(outside)).toBe(writable)
      expect(existsSync(inside)).toBe(true)
      // a helper through the same wrapper: deleting, renaming and making folders
      const victim = join(elsewhere, "victim")
      const kept = join(elsewhere, "kept")
      writeFileSync(victim, "the service's data")
      writeFileSync(kept, "the service's data")
      await shell(`rm -f '${victim}'; mv '${kept}' '${kept}.moved'; mkdir '${elsewhere}/new'; mkdir '${dir}/new'`, sandbox)
      expect(existsSync(victim)).toBe(!writable)
      expect(existsSync(kept)).toBe(!writable)
      expect(existsSync(join(elsewhere, "new"))).toBe(writable)
      expect(existsSync(join(dir, "new"))).toBe(true)
      for (const path of [outside, inside, victim, kept, `${kept}.moved`, join(elsewhere, "new"), join(dir, "new")]) {
        rmSync(path, { recursive: true, force: true })
      }
    }
  }, 30_000)

  it("sees none of the server's environment (its secrets) nor its processes; without the sandbox it sees both", async () => {
    const env = { ...process.env, HUSH_SIGNING_SECRET: "a-secret-the-decoder-must-not-see-0123456789" }
    const script = `env; test -e /proc/${process.pid}/environ && echo "server process visible"`
    const sandboxed = await shell(script, BWRAP, env)
    expect(sandboxed.code).toBe(1) // the `test` failed: no such process in its /proc
    expect(sandboxed.stdout).not.toContain("HUSH_SIGNING_SECRET")
    expect(sandboxed.stdout).toContain("PATH=")
    const open = await shell(script, undefined, env)
    expect(open.stdout).toContain("HUSH_SIGNING_SECRET")
    expect(open.stdout).toContain("server process visible")
  }, 30_000)

  it("ends with the process its caller kills (a time limit): bubblewrap and ffmpeg go too, nothing left decoding", async () => {
    // a tone no other test makes, to find this ffmpeg among all processes (it is not our child in the sandbox)
    const marker = `sine=frequency=${1_000 + (process.pid % 1_000)}:sample_rate=48000`
    const running = () =>
      readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)
        } catch {
          return false // ended meanwhile
        }
      })
    const limited = withLimits("ffmpeg", ["-nostdin", "-f", "lavfi", "-i", marker, "-f", "null", "-"], LIMITS, BWRAP)
    const child = spawn(limited.file, limited.args, { cwd: dir, stdio: "ignore" })
    const closed = new Promise((resolve) => child.once("close", resolve))
    await pollFor(() => running().some((pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "ffmpeg"))
    child.kill("SIGKILL")
    await closed
    await pollFor(() => running().length === 0)
    expect(running()).toEqual([])
  }, 30_000)

  it("the audio probe decodes as before in it, an M4A spooled to a file outside its folder included", async () => {
    setFfmpegSandbox(BWRAP)
    const probe = (bytes: Uint8Array) =>
      Effect.runPromise(Effect.flatMap(AudioProbe, (audio) => audio.probe(Stream.make(bytes))).pipe(Effect.provide(layerFfmpegAudioProbe())))
    expect((await probe(tone(2))).durationSeconds).toBe(2)
    expect((await probe(tone(2, "m4a"))).durationSeconds).toBeCloseTo(2, 1)
  }, 30_000)

  it("a sandbox that fails to set up is the host's fault: the probe dies (the upload stays validating), it does not reject the file", async () => {
    const broken = join(root, "broken-bwrap")
    writeFileSync(broken, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", { mode: 0o755 })
    setFfmpegSandbox({ bwrapPath: broken })
    const exit = await Effect.runPromiseExit(Effect.flatMap(AudioProbe, (audio) => audio.probe(Stream.make(tone(1)))).pipe(Effect.provide(layerFfmpegAudioProbe())))
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    if (Exit.isFailure(exit)) expect(String(Cause.squash(exit.cause))).toContain("the ffmpeg sandbox failed: bwrap: No permissions")
  }, 30_000)
})

describe("FFMPEG_SANDBOX", () => {
  /** Runs `useFfmpegSandbox`, then a probe, collecting the warnings of both. */
  const start = async (mode: "auto" | "off", bwrapPath?: string) => {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(String(message))
    })
    const probed = Effect.flatMap(AudioProbe, (audio) => audio.probe(Stream.make(tone(1)))).pipe(Effect.provide(layerFfmpegAudioProbe()))
    await Effect.runPromise(Effect.zipRight(useFfmpegSandbox(mode, bwrapPath), Effect.zip(probed, probed)).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(LogLevel.Debug)
    ))
    return warnings
  }

  it("auto where bubblewrap does not work: one warning at start that says why, and the children run without it", async () => {
    const warnings = await start("auto", join(root, "no-such-bwrap"))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/FFMPEG_SANDBOX=auto.*without their sandbox.*no-such-bwrap.*not found/)
    expect(currentFfmpegSandbox()).toBeUndefined()
  }, 30_000)

  it("auto where it works: the children run in it, without a warning; off: they do not, without a warning", async () => {
    expect(await start("auto")).toEqual([])
    expect(currentFfmpegSandbox()).toEqual(BWRAP)
    expect(await start("off")).toEqual([])
    expect(currentFfmpegSandbox()).toBeUndefined()
  }, 30_000)

  it("is read from the environment: auto by default, off, and anything else stops start-up naming it", async () => {
    const load = (env: Record<string, string>) =>
      Effect.runPromise(Effect.either(loadConfig.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: join(root, "data"), ...env }))))
      )))
    expect(Either.getOrThrow(await load({})).ffmpegSandbox).toBe("auto")
    expect(Either.getOrThrow(await load({ FFMPEG_SANDBOX: "off" })).ffmpegSandbox).toBe("off")
    const refused = await load({ FFMPEG_SANDBOX: "no" })
    expect(Either.isLeft(refused) && String(refused.left)).toContain("FFMPEG_SANDBOX")
  })
})
