/**
 * What the ffmpeg children's sandbox (bubblewrap, adapters/ffmpeg/process.ts) adds to each start:
 * `ffprobe -version` started as the service starts its children (the shell with its limits, then
 * the program, or bubblewrap then the program), 20 times each way, taking turns (a shared
 * machine's load comes and goes). Prints the mean and median wall time of a start, in ms.
 *
 *   npx tsx bench/ffmpeg-sandbox.ts [runs]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { DEFAULT_ADDRESS_SPACE_BYTES, type FfmpegSandbox, withLimits } from "../adapters/ffmpeg/process.js"

const RUNS = Number(process.argv[2] ?? 20)
const cwd = mkdtempSync(join(tmpdir(), "hush-bench-sandbox-"))

const start = (sandbox: FfmpegSandbox | undefined) =>
  new Promise<number>((resolve, reject) => {
    const limited = withLimits("ffprobe", ["-version"], { cpuSeconds: 10, addressSpaceBytes: DEFAULT_ADDRESS_SPACE_BYTES }, sandbox)
    const began = performance.now()
    const child = spawn(limited.file, limited.args, { cwd, stdio: ["ignore", "ignore", "ignore"] })
    child.once("error", reject)
    child.once("close", (code) => (code === 0 ? resolve(performance.now() - began) : reject(new Error(`exit ${code}`))))
  })

const summary = (ms: Array<number>) => {
  const sorted = [...ms].sort((a, b) => a - b)
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length
  return { mean: mean.toFixed(1), median: sorted[Math.floor(sorted.length / 2)]!.toFixed(1) }
}

const plain: Array<number> = []
const sandboxed: Array<number> = []
await start(undefined) // warm the page cache
await start({ bwrapPath: "bwrap" })
for (let i = 0; i < RUNS; i++) {
  plain.push(await start(undefined))
  sandboxed.push(await start({ bwrapPath: "bwrap" }))
}
rmSync(cwd, { recursive: true, force: true })
const [p, s] = [summary(plain), summary(sandboxed)]
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}, ${RUNS} starts each`)
console.log(`ffprobe -version, limits only:        mean ${p.mean} ms, median ${p.median} ms`)
console.log(`ffprobe -version, limits + bubblewrap: mean ${s.mean} ms, median ${s.median} ms`)
console.log(`bubblewrap adds: mean ${(Number(s.mean) - Number(p.mean)).toFixed(1)} ms, median ${(Number(s.median) - Number(p.median)).toFixed(1)} ms a child`)
