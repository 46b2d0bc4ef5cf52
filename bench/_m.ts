import { createReadStream } from "node:fs"
import { Effect, Stream } from "effect"
import { denoiseToMp3 } from "../adapters/rnnoise/pipeline.js"
import { makeChunkPool } from "../adapters/rnnoise/pool.js"
const path = process.argv[2]!, seconds = Number(process.argv[3]), threads = Number(process.argv[4])
const mb = (n: number) => (n / 1048576).toFixed(0)
const m0 = process.memoryUsage(); console.log("base", mb(m0.rss), "heap", mb(m0.heapUsed), "ext", mb(m0.external), "ab", mb(m0.arrayBuffers))
const timer = setInterval(() => { if (process.env.GC) (globalThis as any).gc(); const m = process.memoryUsage(); console.log("rss", mb(m.rss), "heap", mb(m.heapTotal), "ext", mb(m.external), "ab", mb(m.arrayBuffers)) }, 2000)
const input = Stream.fromAsyncIterable(createReadStream(path, { highWaterMark: 256 * 1024 }), (e) => e).pipe(Stream.map((c) => c as Uint8Array))
const t0 = performance.now()
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const pool = threads > 1 ? yield* makeChunkPool(threads) : undefined
  yield* Stream.runDrain(denoiseToMp3(input, { bitrateKbps: 192, durationSeconds: seconds, pool }))
})))
clearInterval(timer)
console.log("xRT", seconds / ((performance.now() - t0) / 1000), "maxRSS", (process.resourceUsage().maxRSS / 1024).toFixed(0))
