import { spawn, execFile, type ChildProcessWithoutNullStreams } from "node:child_process"
import { mkdtemp, open, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Clock, Deferred, Duration, Effect, Exit, Layer, Stream } from "effect"
import {
  type ChildLimits,
  DEFAULT_ADDRESS_SPACE_BYTES,
  FFMPEG_MISSING_MESSAGE,
  isCommandMissing,
  isResourceKill,
  isSandboxFailure,
  privateWorkDir,
  withLimits,
  writeChunk
} from "./process.js"
import { INFO_LOG_LEVEL, readStderr } from "./stderr.js"
import { AudioProbe, AudioRejected, type DeclaredDurationVerdict, type ProbeOptions, type ProbeResult } from "../../core/ports/audio.js"
import type { BlobError } from "../../core/ports/blob-store.js"

export { FFMPEG_MISSING_MESSAGE }

/** 10 minutes of MP3 decode in ~0.6 s on 2 vCPU: two minutes covers hours of audio on a busy host. */
export const DEFAULT_PROBE_TIME_LIMIT_MS = 120_000

/** The demuxers untrusted uploads may use (audio files and audio-in-video containers); no playlists. */
export const AUDIO_DEMUXERS = [
  "aac", "ac3", "aiff", "amr", "ape", "asf", "au", "avi", "caf", "eac3", "flac", "flv",
  "matroska", "mov", "mp3", "mpeg", "mpegts", "ogg", "tta", "w64", "wav", "wv"
] as const

const PCM_RATE = 16_000 // s16le mono: 2 bytes a sample

type Outcome =
  | { readonly _tag: "Exited"; readonly code: number | null; readonly signal: NodeJS.Signals | null }
  | { readonly _tag: "SpawnFailed"; readonly error: NodeJS.ErrnoException }

interface Decoded {
  readonly outcome: Outcome
  readonly inputBytes: number
  readonly pcmBytes: number
  /** What ffmpeg said at error level (and the shell's or the sandbox's own words). */
  readonly stderr: string
}

const missing = (error: NodeJS.ErrnoException) =>
  error.code === "ENOENT" ? new Error(FFMPEG_MISSING_MESSAGE, { cause: error }) : error

/** When the probe started (ms), and what a declared length allows: the budget counts from the start. */
interface Budget {
  readonly startedAt: number
  readonly timeLimitMs: number
  readonly onDeclaredDuration: DeclaredDurationVerdict | undefined
}

/**
 * Waits for the header's declared length, then fails with the verdict on it: at once when it is
 * too long, or when the time it buys has run out. Never completes while the decode is within it.
 */
const declaredBudget = (declared: Deferred.Deferred<number>, budget: Budget) =>
  Effect.flatMap(Deferred.await(declared), (seconds) => {
    const verdict = budget.onDeclaredDuration?.(seconds)
    if (verdict === undefined) return Effect.never
    if (verdict === "too_long") {
      return Effect.fail(new AudioRejected({ reason: "too_long", message: `the header declares ${seconds} s of audio` }))
    }
    const limitMs = Math.min(verdict, budget.timeLimitMs)
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.zipRight(
        Effect.sleep(Duration.millis(Math.max(0, budget.startedAt + limitMs - now))),
        Effect.fail(new AudioRejected({ reason: "timeout", message: `decoding took longer than ${limitMs} ms, the budget of the ${seconds} s its header declares` }))
      ))
  })

/**
 * Runs one ffmpeg decode to counted PCM, under `limits` and the budget its header's declared
 * length buys; the child is killed whenever this is interrupted or the budget fails it.
 */
const decode = (
  ffmpegPath: string,
  args: ReadonlyArray<string>,
  limits: ChildLimits,
  budget: Budget,
  input?: Stream.Stream<Uint8Array, BlobError>
) =>
  Effect.scoped(Effect.gen(function*() {
    let inputBytes = 0
    let pcmBytes = 0
    const declared = yield* Deferred.make<number>()
    const stderr = readStderr((seconds) => Deferred.unsafeDone(declared, Exit.succeed(seconds)))
    const cwd = yield* privateWorkDir
    const { child, closed } = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const limited = withLimits(ffmpegPath, args, limits)
        const child: ChildProcessWithoutNullStreams = spawn(limited.file, limited.args, { stdio: "pipe", windowsHide: true, cwd })
        // Listeners go on before anything can be emitted: the outcome is never missed.
        const closed = new Promise<Outcome>((resolve) => {
          child.once("close", (code, signal) => resolve({ _tag: "Exited", code, signal }))
          child.once("error", (error) => resolve({ _tag: "SpawnFailed", error }))
        })
        child.stdin.on("error", () => {}) // EPIPE when ffmpeg stops early: the exit status decides
        child.stdout.on("data", (chunk: Buffer) => { pcmBytes += chunk.length })
        child.stderr.setEncoding("utf8")
        child.stderr.on("data", stderr.push)
        return { child, closed }
      }),
      ({ child }) =>
        Effect.sync(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
          child.stdin.destroy()
        })
    )
    const feed = input === undefined
      ? Effect.sync(() => child.stdin.end())
      // Not `Stream.runForEachWhile`: in effect 3.22 it keeps every chunk it has seen until the
      // stream ends (its continuation nests per element), so a 200 MiB upload stayed in memory.
      : input.pipe(
        Stream.mapEffect((chunk) => {
          inputBytes += chunk.length
          return writeChunk(child.stdin, chunk)
        }),
        Stream.takeWhile((open) => open),
        Stream.runDrain,
        Effect.andThen(Effect.sync(() => child.stdin.end()))
      )
    // An input error or the declared length's verdict wins (and kills ffmpeg); ffmpeg exiting first stops the feed.
    // (raceFirst: the first to end, failures included; raceAll would wait for a success)
    const outcome = yield* Effect.promise(() => closed).pipe(
      Effect.raceFirst(Effect.zipRight(feed, Effect.never)),
      Effect.raceFirst(declaredBudget(declared, budget))
    )
    return { outcome, inputBytes, pcmBytes, stderr: stderr.errors() } satisfies Decoded
  }))

/** The first meaningful stderr line, without ffmpeg's "[demuxer @ 0x…]" and input-name prefixes. */
const firstError = (stderr: string) => {
  const line = stderr.split("\n")
    .map((l) => l.replace(/^\[[^\]]*@ 0x[0-9a-f]+\]\s*/i, "").replace(/^(pipe:0|file:\S+): /, "").trim())
    .find((l) => l.length > 0 && !l.startsWith("Last message repeated"))
  if (line === undefined) return "no error output"
  if (line.startsWith("Format not on whitelist")) return "container format not accepted"
  if (/^Protocol '.*' not on whitelist/.test(line)) return "the file refers to other resources, which are not followed"
  return line.slice(0, 300)
}

const NO_AUDIO = /matches no streams|does not contain any stream/

const classify = (ffmpegPath: string, d: Decoded): Effect.Effect<ProbeResult, AudioRejected> => {
  const { outcome } = d
  if (outcome._tag === "SpawnFailed") return Effect.die(missing(outcome.error))
  if (isCommandMissing(outcome.code, d.stderr)) return Effect.die(new Error(FFMPEG_MISSING_MESSAGE))
  // the host's fault, not the file's: the upload stays validating, as when ffmpeg is missing
  if (isSandboxFailure(d.stderr)) return Effect.die(new Error(`the ffmpeg sandbox failed: ${firstError(d.stderr)}`))
  // this probe kills only children it no longer waits for: a signal here came from the input
  if (isResourceKill(outcome.signal)) {
    return Effect.fail(new AudioRejected({ reason: "timeout", message: `ffmpeg hit its CPU or memory limit (${outcome.signal})` }))
  }
  if (outcome.signal !== null) {
    return Effect.fail(new AudioRejected({ reason: "undecodable", message: `${ffmpegPath} crashed on this input (${outcome.signal})` }))
  }
  if (outcome.code !== 0) {
    if (NO_AUDIO.test(d.stderr)) return Effect.fail(new AudioRejected({ reason: "no_audio", message: "the file contains no audio stream" }))
    if (d.inputBytes === 0) return Effect.fail(new AudioRejected({ reason: "empty", message: "the file is empty" }))
    return Effect.fail(new AudioRejected({ reason: "undecodable", message: `the file could not be decoded: ${firstError(d.stderr)}` }))
  }
  const samples = Math.floor(d.pcmBytes / 2)
  if (samples === 0) return Effect.fail(new AudioRejected({ reason: "empty", message: "no audio samples could be decoded" }))
  return Effect.succeed({ durationSeconds: Math.round((samples / PCM_RATE) * 1000) / 1000 })
}

/** Spools the stream to a private temporary file for the duration of `use`. */
const spooled = <A, E>(input: Stream.Stream<Uint8Array, BlobError>, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "hush-probe-"))),
    (dir) => {
      const path = join(dir, "input")
      return Effect.acquireUseRelease(
        Effect.promise(() => open(path, "wx", 0o600)),
        (file) => Stream.runForEach(input, (chunk) => Effect.promise(() => file.write(chunk))),
        (file) => Effect.promise(() => file.close())
      ).pipe(Effect.andThen(use(path)))
    },
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

export interface FfmpegAudioProbeOptions {
  readonly ffmpegPath?: string
  /**
   * The whole probe, input transfer included, when the caller gives none; past it ffmpeg is
   * killed and the upload rejected. Each ffmpeg child also gets as many seconds of CPU time.
   */
  readonly timeLimitMs?: number
  /** Each child's address space (RLIMIT_AS); default 2 GiB. */
  readonly addressSpaceBytes?: number
}

export const layerFfmpegAudioProbe = (options: FfmpegAudioProbeOptions = {}): Layer.Layer<AudioProbe> => {
  const ffmpegPath = options.ffmpegPath ?? "ffmpeg"
  const defaultTimeLimitMs = options.timeLimitMs ?? DEFAULT_PROBE_TIME_LIMIT_MS
  const addressSpaceBytes = options.addressSpaceBytes ?? DEFAULT_ADDRESS_SPACE_BYTES
  const args = (protocol: "pipe" | "file", url: string) => [
    // info: the input's dump tells the declared length before decoding starts (./stderr.ts)
    "-hide_banner", "-nostats", ...INFO_LOG_LEVEL,
    ...(protocol === "file" ? ["-nostdin"] : []), // with pipe:0 input ffmpeg already disables key interaction
    "-protocol_whitelist", protocol,
    "-format_whitelist", AUDIO_DEMUXERS.join(","),
    "-i", url,
    "-map", "0:a:0", "-vn", "-sn", "-dn",
    "-ac", "1", "-ar", String(PCM_RATE), "-f", "s16le", "pipe:1"
  ]
  const probe = (input: Stream.Stream<Uint8Array, BlobError>, probeOptions?: ProbeOptions) => Effect.flatMap(Clock.currentTimeMillis, (startedAt) => {
    const timeLimitMs = probeOptions?.timeLimitMs ?? defaultTimeLimitMs
    const limits: ChildLimits = { cpuSeconds: Math.ceil(timeLimitMs / 1000), addressSpaceBytes }
    const budget: Budget = { startedAt, timeLimitMs, onDeclaredDuration: probeOptions?.onDeclaredDuration }
    return decode(ffmpegPath, args("pipe", "pipe:0"), limits, budget, input).pipe(
      Effect.flatMap((d) =>
        // MP4/M4A with the index (moov) after the data cannot be read from a pipe: decode a
        // seekable copy instead. This runs the input stream a second time.
        d.pcmBytes === 0 && d.stderr.includes("partial file")
          ? spooled(input, (path) => decode(ffmpegPath, args("file", `file:${path}`), limits, budget))
          : Effect.succeed(d)
      ),
      Effect.flatMap((d) => classify(ffmpegPath, d)),
      Effect.timeoutFail({
        duration: Duration.millis(timeLimitMs),
        onTimeout: () => new AudioRejected({ reason: "timeout", message: `decoding took longer than ${timeLimitMs} ms` })
      })
    )
  })
  return Layer.succeed(AudioProbe, { probe })
}

/** For server start: the ffmpeg version, or an Error saying how to install it. */
export const checkFfmpegAvailable = (ffmpegPath = "ffmpeg"): Effect.Effect<string, Error> =>
  Effect.async<string, Error>((resume) => {
    const child = execFile(ffmpegPath, ["-hide_banner", "-version"], { timeout: 10_000 }, (error, stdout) => {
      if (error !== null) {
        return resume(Effect.fail(error.code === "ENOENT" ? missing(error as NodeJS.ErrnoException) : new Error(`${ffmpegPath} -version failed: ${error.message}`)))
      }
      const version = /^ffmpeg version (\S+)/.exec(stdout)?.[1]
      resume(version === undefined
        ? Effect.fail(new Error(`${ffmpegPath} does not look like ffmpeg: ${stdout.split("\n")[0] ?? ""}`))
        : Effect.succeed(version))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })
