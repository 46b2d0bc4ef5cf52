/**
 * spawnChild's stdout pieces: with `stdoutChunkBytes` a child's many small writes come out as
 * pieces of that size (the encoders' MP3 packets: one stream element each otherwise), the
 * bytes unchanged. Needs dd on PATH.
 */
import { randomBytes } from "node:crypto"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { spawnChild } from "../../../adapters/rnnoise/child.js"

const LIMITS = { cpuSeconds: 60, addressSpaceBytes: 2 * 1024 * 1024 * 1024 }
const BYTES = 300_001
let dir = ""
let data = new Uint8Array(0)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-child-"))
  data = new Uint8Array(randomBytes(BYTES))
  await writeFile(join(dir, "data"), data)
})

afterAll(() => rm(dir, { recursive: true, force: true }))

/** The child writes the file in 997-byte writes, as an encoder writes packet by packet. */
const pieces = (stdoutChunkBytes?: number) =>
  Effect.scoped(Effect.gen(function*() {
    const child = yield* spawnChild("dd", [`if=${join(dir, "data")}`, "bs=997", "status=none"], LIMITS, { stdoutChunkBytes })
    child.stdin.end()
    const out = yield* Stream.runCollect(child.stdout)
    expect((yield* child.outcome)).toMatchObject({ _tag: "Exited", code: 0 })
    return Chunk.toReadonlyArray(out)
  }))

const joined = (parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) (out.set(p, at), at += p.length)
  return out
}

describe("spawnChild stdout", () => {
  it.effect("with stdoutChunkBytes: whole pieces of that size, a shorter last one, the same bytes", () =>
    Effect.gen(function*() {
      // more than a pipe read ever gives (64 KiB): such pieces can only be joined ones
      const parts = yield* pieces(100_000)
      expect(parts.map((p) => p.length)).toEqual([100_000, 100_000, 100_000, 1])
      expect(Buffer.from(joined(parts)).equals(Buffer.from(data))).toBe(true)
    }))

  it.effect("without: the same bytes, in pieces as the pipe gave them", () =>
    Effect.gen(function*() {
      const parts = yield* pieces()
      expect(parts.every((p) => p.length <= 65_536)).toBe(true)
      expect(Buffer.from(joined(parts)).equals(Buffer.from(data))).toBe(true)
    }))
})
