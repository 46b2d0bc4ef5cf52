import { Effect, Stream, Chunk } from "effect"
import { createReadStream, writeFileSync } from "node:fs"
import { denoiseToMp3 } from "../adapters/rnnoise/pipeline.ts"
import { makeChunkPool } from "../adapters/rnnoise/pool.ts"
const file = process.argv[2]!, threads = Number(process.argv[3] ?? 1)
const input = Stream.fromAsyncIterable(createReadStream(file, { highWaterMark: 65536 }), (e) => e as Error).pipe(Stream.map((b) => b as Uint8Array))
const prog: number[] = []
const program = Effect.scoped(Effect.gen(function*() {
  const pool = threads > 1 ? yield* makeChunkPool(threads) : undefined
  const t0 = performance.now()
  const out = yield* Stream.runCollect(denoiseToMp3(input, { bitrateKbps: 192, durationSeconds: 12, pool, chunkSeconds: 3, onProgress: (f) => Effect.sync(() => prog.push(f)) }))
  const bytes = Buffer.concat(Chunk.toArray(out))
  writeFileSync("/tmp/out.mp3", bytes)
  console.log("bytes", bytes.length, "ms", performance.now() - t0, "progress", prog.length, prog.at(-1))
}))
Effect.runPromiseExit(program).then((e) => console.log(e._tag === "Failure" ? String(e.cause) : "ok"))
