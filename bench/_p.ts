import { createReadStream } from "node:fs"
import { Effect, Stream } from "effect"
import { denoiseToMp3 } from "../adapters/rnnoise/pipeline.js"
const path = process.argv[2]!, seconds = Number(process.argv[3])
const input = Stream.fromAsyncIterable(createReadStream(path, { highWaterMark: 256 * 1024 }), (e) => e).pipe(Stream.map((c) => c as Uint8Array))
const c0 = process.cpuUsage(); const t0 = performance.now()
let n = 0, chunks = 0
await Effect.runPromise(Stream.runForEach(denoiseToMp3(input, { bitrateKbps: 192, durationSeconds: seconds }), (c) => Effect.sync(() => { n += c.length; chunks++ })))
const wall = (performance.now() - t0) / 1000; const cpu = process.cpuUsage(c0)
console.log({ xRT: seconds / wall, wall, cpuUser: cpu.user / 1e6, cpuSys: cpu.system / 1e6, n, chunks })
