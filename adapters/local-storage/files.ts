import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Chunk, Data, Effect, Option, Stream } from "effect"
import { BlobError } from "../../core/ports/blob-store.js"
import { DIR_MODE, FILE_MODE } from "./config.js"

/** A write stopped because more bytes came than allowed. */
export class SizeLimitExceeded extends Data.TaggedError("SizeLimitExceeded")<{
  readonly limit: number
}> {}

/** A write ended with another byte count than required. */
export class SizeMismatch extends Data.TaggedError("SizeMismatch")<{
  readonly expected: number
  readonly actual: number
}> {}

const messageOf = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

export const errnoOf = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined

/** Runs a node:fs promise, turning a rejection into a BlobError. */
export const io = <A>(what: string, f: () => Promise<A>): Effect.Effect<A, BlobError> =>
  Effect.tryPromise({
    try: f,
    catch: (cause) => new BlobError({ message: `${what}: ${messageOf(cause)}`, cause })
  })

/** Like `io`, but "no such file" (and "a path component is not a directory") becomes None. */
export const ioOptional = <A>(what: string, f: () => Promise<A>): Effect.Effect<Option.Option<A>, BlobError> =>
  Effect.tryPromise({ try: f, catch: (cause) => cause }).pipe(
    Effect.map(Option.some),
    Effect.catchAll((cause) => {
      const code = errnoOf(cause)
      return code === "ENOENT" || code === "ENOTDIR"
        ? Effect.succeed(Option.none<A>())
        : Effect.fail(new BlobError({ message: `${what}: ${messageOf(cause)}`, cause }))
    })
  )

/** The size of a regular file, or None when there is none at `path`. */
export const statFile = (path: string): Effect.Effect<Option.Option<{ readonly sizeBytes: number }>, BlobError> =>
  ioOptional("stat", () => Fs.stat(path)).pipe(
    Effect.map(Option.flatMap((stats) => stats.isFile() ? Option.some({ sizeBytes: stats.size }) : Option.none()))
  )

/** Removes a file; a missing one is fine. */
export const removeFile = (path: string): Effect.Effect<void, BlobError> =>
  Effect.tryPromise({ try: () => Fs.unlink(path), catch: (cause) => cause }).pipe(
    Effect.catchAll((cause) => {
      const code = errnoOf(cause)
      // EISDIR / EPERM: a directory, so no object under that key.
      return code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR" || code === "EPERM"
        ? Effect.void
        : Effect.fail(new BlobError({ message: `delete: ${messageOf(cause)}`, cause }))
    })
  )

export interface WriteResult {
  readonly sizeBytes: number
  /** MD5 of the bytes written, lower-case hex. */
  readonly md5Hex: string
}

interface TempFile {
  readonly path: string
  readonly handle: Fs.FileHandle
  closed: boolean
  renamed: boolean
}

const writeAll = async (handle: Fs.FileHandle, buffers: ReadonlyArray<Uint8Array>): Promise<void> => {
  for (const buffer of buffers) {
    let offset = 0
    while (offset < buffer.byteLength) {
      const { bytesWritten } = await handle.write(buffer, offset, buffer.byteLength - offset)
      offset += bytesWritten
    }
  }
}

/**
 * Streams `body` into a temp file under `tmpDir` (pulling the next chunk only once the previous
 * one is written), then flushes it and renames it to `dest` (a path, or one computed from the size
 * and MD5 of what was written): readers see the whole object or none.
 * Fails without touching `dest` (and removes the temp file) when the body fails, when more than
 * `maxBytes` arrive, or when `exactBytes` is given and the count differs.
 */
export const writeAtomically = <E>(
  tmpDir: string,
  dest: string | ((written: WriteResult) => string),
  body: Stream.Stream<Uint8Array, E>,
  options?: {
    readonly maxBytes?: number | undefined
    readonly exactBytes?: number | undefined
    /** Create the destination's folder when missing (default true). */
    readonly createDirs?: boolean | undefined
  }
): Effect.Effect<WriteResult, E | BlobError | SizeLimitExceeded | SizeMismatch> => {
  const limits = [options?.maxBytes, options?.exactBytes].filter((n): n is number => n !== undefined)
  const limit = limits.length === 0 ? undefined : Math.min(...limits)
  return Effect.acquireUseRelease(
    Effect.gen(function*() {
      yield* io("create temp dir", () => Fs.mkdir(tmpDir, { recursive: true, mode: DIR_MODE }))
      const path = NodePath.join(tmpDir, `${randomBytes(12).toString("hex")}.tmp`)
      // owner-only, whatever the umask (docs/security.md)
      const handle = yield* io("create temp file", () => Fs.open(path, "wx", FILE_MODE))
      return { path, handle, closed: false, renamed: false } satisfies TempFile as TempFile
    }),
    (tmp) =>
      Effect.gen(function*() {
        const hash = createHash("md5")
        let size = 0
        yield* Stream.runForEachChunk(body, (chunk) =>
          Effect.suspend((): Effect.Effect<void, BlobError | SizeLimitExceeded> => {
            const buffers = Chunk.toReadonlyArray(chunk)
            let n = 0
            for (const buffer of buffers) n += buffer.byteLength
            if (limit !== undefined && size + n > limit) {
              return Effect.fail(new SizeLimitExceeded({ limit }))
            }
            size += n
            for (const buffer of buffers) hash.update(buffer)
            return io("write", () => writeAll(tmp.handle, buffers))
          }))
        if (options?.exactBytes !== undefined && size !== options.exactBytes) {
          return yield* Effect.fail(new SizeMismatch({ expected: options.exactBytes, actual: size }))
        }
        yield* io("flush", () => tmp.handle.datasync())
        tmp.closed = true
        yield* io("close", () => tmp.handle.close())
        const written: WriteResult = { sizeBytes: size, md5Hex: hash.digest("hex") }
        const target = typeof dest === "string" ? dest : dest(written)
        if (options?.createDirs !== false) {
          yield* io("create object dir", () => Fs.mkdir(NodePath.dirname(target), { recursive: true, mode: DIR_MODE }))
        }
        yield* io("rename", () => Fs.rename(tmp.path, target))
        tmp.renamed = true
        return written
      }),
    (tmp) =>
      Effect.promise(async () => {
        if (!tmp.closed) await tmp.handle.close().catch(() => undefined)
        if (!tmp.renamed) await Fs.unlink(tmp.path).catch(() => undefined)
      })
  )
}

/**
 * The bytes of a file as a stream read from disk chunk by chunk (never whole). `start`/`end` are
 * inclusive byte offsets. With `expectedSize`, a file whose size changed since it was measured
 * (replaced meanwhile) fails the stream instead of sending other bytes.
 */
export const fileStream = (
  path: string,
  options?: {
    readonly start?: number | undefined
    readonly end?: number | undefined
    readonly expectedSize?: number | undefined
    readonly notFoundMessage?: string | undefined
  }
): Stream.Stream<Uint8Array, BlobError> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const handle = yield* Effect.acquireRelease(
        ioOptional("open", () => Fs.open(path, "r")).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new BlobError({ message: options?.notFoundMessage ?? `no such file: ${path}` })),
            onSome: Effect.succeed
          }))
        ),
        (handle) => Effect.promise(() => handle.close().catch(() => undefined))
      )
      if (options?.expectedSize !== undefined) {
        const stats = yield* io("stat", () => handle.stat())
        if (stats.size !== options.expectedSize) {
          return yield* Effect.fail(new BlobError({ message: "the object changed while it was being read" }))
        }
      }
      return NodeStream.fromReadable<BlobError, Uint8Array>(
        () => handle.createReadStream({ start: options?.start, end: options?.end, autoClose: false }),
        (cause) => new BlobError({ message: `read: ${messageOf(cause)}`, cause })
      )
    })
  )
