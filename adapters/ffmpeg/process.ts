/** What every ffmpeg child process of the project needs: the install hint and back-pressured stdin writes. */
import type { Writable } from "node:stream"
import { Effect } from "effect"

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
