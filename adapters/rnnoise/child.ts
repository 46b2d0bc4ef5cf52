/**
 * One ffmpeg child process in an Effect scope: closing the scope kills it, whatever state
 * the pipeline is in (interruption, failure downstream). Back-pressure both ways: stdin
 * writes wait for 'drain', and stdout is read only as fast as it is pulled.
 */
import { type ChildProcess, spawn } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Stream } from "effect"
import { type ChildLimits, FFMPEG_MISSING_MESSAGE, isCommandMissing, privateWorkDir, withLimits, writeChunk } from "../ffmpeg/process.js"


const STDERR_TAIL = 8 * 1024

export type Outcome =
  | { readonly _tag: "Exited"; readonly code: number | null; readonly signal: NodeJS.Signals | null }
  | { readonly _tag: "SpawnFailed"; readonly error: NodeJS.ErrnoException }

export interface Child {
  readonly stdin: Writable
  readonly stdout: Stream.Stream<Uint8Array>
  /** Waits for the process to end (and its pipes to close). */
  readonly outcome: Effect.Effect<Outcome>
  /** The last 8 KiB of its stderr. */
  readonly stderr: () => string
  readonly kill: Effect.Effect<void>
}

export interface ChildOptions {
  /**
   * Its stdout in pieces of this many bytes (the last one shorter) rather than one piece per
   * pipe read. An encoder writes each packet as it is made (an MP3 frame is ~600 bytes): read
   * as they come, 10 minutes of MP3 were ~6,000 stream elements, and each costs the Effect
   * runtime tens of KB of garbage (the pooled pipeline's main thread allocated 465 MB over a
   * 10-minute job, 171 MB with 64 KiB pieces; README, bench:denoise). Not for the decoder: its
   * reads are ~60 KB already, and joining them would copy every PCM byte once more.
   */
  readonly stdoutChunkBytes?: number | undefined
}

/** Starts `command` under `limits` (../ffmpeg/process.ts), in a private empty working folder. */
export const spawnChild = (command: string, args: ReadonlyArray<string>, limits: ChildLimits, options: ChildOptions = {}) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.map(privateWorkDir, (cwd) => {
        const limited = withLimits(command, args, limits)
        const child = spawn(limited.file, limited.args, { stdio: "pipe", windowsHide: true, cwd })
        let stderr = ""
        // Listeners go on before anything can be emitted: the outcome is never missed.
        const closed = new Promise<Outcome>((resolve) => {
          child.once("close", (code, signal) => resolve({ _tag: "Exited", code, signal }))
          child.once("error", (error) => resolve({ _tag: "SpawnFailed", error }))
        })
        child.stdin.on("error", () => {}) // EPIPE when ffmpeg stops early: its exit status decides
        child.stderr.on("data", (chunk: Buffer) => { stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL) })
        return { child, closed, stderr: () => stderr }
      }),
      ({ child }) =>
        Effect.sync(() => {
          kill(child)
          child.stdin.destroy()
          child.stdout.destroy()
        })
    ),
    ({ child, closed, stderr }): Child => ({
      stdin: child.stdin,
      stdout: readableStream(child.stdout, options.stdoutChunkBytes),
      outcome: Effect.promise(() => closed),
      stderr,
      kill: Effect.sync(() => kill(child))
    })
  )

/** Its stdout then ends as usual (an EOF, not an error), so that a reader sees the end. */
const kill = (child: ChildProcess) => {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

/**
 * A Readable as a Stream that reads only when pulled. Not `Stream.fromAsyncIterable`: closing
 * it while a read is pending would wait for that read (an async generator's `return` queues
 * behind its pending `next`), forever when the child waits for input that no longer comes.
 */
const readableStream = (readable: Readable, chunkSize: number | undefined): Stream.Stream<Uint8Array> =>
  NodeStream.fromReadable<Error, Uint8Array>(() => readable, (error) => error as Error, { chunkSize }).pipe(Stream.orDie)

/** Writes one chunk, waiting for 'drain' when the pipe is full; false once the child stopped reading. */
/**
 * Feeds the stream to stdin, then closes it. Stops early (without error) if the child stops
 * reading. Not `Stream.runForEachWhile`: in effect 3.22 it keeps every chunk it has seen
 * until the stream ends (its continuation nests per element), so memory grows with the input.
 */
export const feed = <E, R>(
  stdin: Writable,
  input: Stream.Stream<Uint8Array, E, R>,
  /** Called once a chunk has been handed to the OS: its buffer may then be reused. */
  onWritten: (chunk: Uint8Array) => void = () => {}
) =>
  input.pipe(
    Stream.mapEffect((chunk) => writeChunk(stdin, chunk, onWritten)),
    Stream.takeWhile((open) => open),
    Stream.runDrain,
    Effect.andThen(Effect.sync(() => void stdin.end()))
  )

/** The first meaningful stderr line, without ffmpeg's "[demuxer @ 0x…]" and input-name prefixes. */
export const firstError = (stderr: string) => {
  const line = stderr.split("\n")
    .map((l) => l.replace(/^\[[^\]]*@ 0x[0-9a-f]+\]\s*/i, "").replace(/^(pipe:0|file:\S+): /, "").trim())
    .find((l) => l.length > 0 && !l.startsWith("Last message repeated"))
  return line === undefined ? "no error output" : line.slice(0, 300)
}

/** A child that did not start or was killed (e.g. at its CPU limit) is a fault of this service, not of the audio. */
export const unexpected = (command: string, outcome: Outcome, stderr: string): Error | undefined => {
  if (outcome._tag === "SpawnFailed") {
    return outcome.error.code === "ENOENT" ? new Error(FFMPEG_MISSING_MESSAGE, { cause: outcome.error }) : outcome.error
  }
  if (isCommandMissing(outcome.code, stderr)) return new Error(FFMPEG_MISSING_MESSAGE)
  if (outcome.signal !== null) return new Error(`${command} was killed by ${outcome.signal}`)
  return undefined
}
