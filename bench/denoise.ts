/**
 * Denoising speed and memory for 1, 10 and 60 minutes of noisy speech (generated into a
 * temporary directory, deleted afterwards). Each case runs in its own process so that its
 * peak RSS is its own:
 *   - compute-only: time spent inside the RNNoise engine alone (PCM decoded by ffmpeg)
 *   - pipeline, 1 thread: decode → RNNoise in the main thread → MP3 encode
 *   - pipeline, all cores: the same with chunks on a pool of availableParallelism() threads
 * Speeds are × real time (audio seconds per wall second); the CPU columns (audio seconds
 * per CPU second of the Node process, all threads) do not depend on what else the machine
 * runs, the wall-clock ones do. The load average is printed with the table.
 *
 * Then, for the first length, the pooled pipeline once per output variant (issue 14: each
 * format, a loudness target, the adaptive default strength), with its speed relative to the
 * plain MP3 run of the same table and its peak RSS.
 *
 *   npx tsx bench/denoise.ts [minutes…]     (default: 1 10 60)
 *   npx tsx bench/denoise.ts --variants-only [minutes]
 *
 * The model is RNNoise; HUSH_BENCH_MODEL=gtcrn measures GTCRN (xiaobin-rong/gtcrn) instead:
 *   HUSH_BENCH_MODEL=gtcrn npm run bench:denoise -- 1 10
 */
import { execFile, spawn } from "node:child_process"
import { createReadStream } from "node:fs"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Denoiser, type EngineModel, SAMPLE_RATE } from "../adapters/rnnoise/engine.mjs"
import { FloatFrames } from "../adapters/rnnoise/pcm.js"
import { makeNoisySpeech } from "../test/support/audio-fixtures.js"

const run = promisify(execFile)
/** The engine's model under test (children inherit it through the environment). */
const MODEL: EngineModel = process.env.HUSH_BENCH_MODEL === "gtcrn" ? "gtcrn" : "rnnoise"

type Case = "compute" | "pipeline-1" | "pipeline-all" | `variant:${string}`

/** Output variants: format, loudness target (or none), strength (1, or "default" for the adaptive mix). */
const VARIANTS: ReadonlyArray<{ readonly name: string; readonly format: "mp3" | "wav" | "flac" | "opus"; readonly loudness: number | null; readonly strength: number | null }> = [
  { name: "mp3, strength 1", format: "mp3", loudness: null, strength: 1 },
  { name: "mp3, default strength", format: "mp3", loudness: null, strength: null },
  { name: "wav", format: "wav", loudness: null, strength: null },
  { name: "flac", format: "flac", loudness: null, strength: null },
  { name: "opus", format: "opus", loudness: null, strength: null },
  { name: "mp3, loudness −16", format: "mp3", loudness: -16, strength: null },
  { name: "flac, loudness −16", format: "flac", loudness: -16, strength: null }
]

interface Result {
  readonly seconds: number
  readonly wallSeconds: number
  /** CPU time of this Node process (all its threads), and of its ffmpeg children. */
  readonly cpuSeconds: number
  readonly childCpuSeconds: number
  readonly maxRssMb: number
}

/** CPU seconds of the reaped children (ffmpeg), from /proc (Linux); 0 elsewhere. */
const childCpuSeconds = async () => {
  try {
    const stat = await readFile("/proc/self/stat", "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[13]) + Number(fields[14])) / 100 // cutime + cstime, in USER_HZ ticks
  } catch {
    return 0
  }
}

/** Only the engine's time: PCM streamed from ffmpeg, the clock runs inside push/end. */
const computeOnly = async (path: string) => {
  const decoder = spawn("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-f", "f32le", "-ac", "1",
    "-ar", String(SAMPLE_RATE), "pipe:1"], { stdio: ["ignore", "pipe", "inherit"] })
  const frames = new FloatFrames(1)
  const denoiser = new Denoiser(1, 1, undefined, undefined, MODEL)
  let busy = 0
  for await (const bytes of decoder.stdout as AsyncIterable<Uint8Array>) {
    const samples = frames.push(bytes)
    const t0 = performance.now()
    denoiser.push(samples)
    busy += performance.now() - t0
  }
  const t0 = performance.now()
  denoiser.end()
  busy += performance.now() - t0
  denoiser.close()
  return { seconds: frames.samples / SAMPLE_RATE, wallSeconds: busy / 1000 }
}

/** Effect and the pipeline are imported here only, so that compute-only's RSS is the engine's. */
const pipeline = async (path: string, seconds: number, threads: number, variant: (typeof VARIANTS)[number] = VARIANTS[0]!) => {
  const { Effect, Stream } = await import("effect")
  const { denoiseToOutput } = await import("../adapters/rnnoise/pipeline.js")
  const { makeChunkPool } = await import("../adapters/rnnoise/pool.js")
  const fileStream = Stream.fromAsyncIterable(createReadStream(path, { highWaterMark: 256 * 1024 }), (e) => e).pipe(
    Stream.map((chunk) => chunk as Uint8Array)
  )
  return Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const pool = threads > 1 ? yield* makeChunkPool(threads) : undefined
    const t0 = performance.now()
    let bytes = 0
    yield* Stream.runForEach(
      denoiseToOutput(fileStream, {
        bitrateKbps: 192, durationSeconds: seconds, pool, format: variant.format, loudness: variant.loudness, strength: variant.strength, model: MODEL
      }),
      (chunk) => Effect.sync(() => void (bytes += chunk.length))
    )
    if (bytes === 0) throw new Error("no output")
    return { seconds, wallSeconds: (performance.now() - t0) / 1000 }
  })))
}

/** Child side: runs one case and prints its result as JSON. */
const runCase = async (kind: Case, path: string, seconds: number) => {
  const cpu = process.cpuUsage()
  const timing = kind === "compute"
    ? await computeOnly(path)
    : kind.startsWith("variant:")
    ? await pipeline(path, seconds, availableParallelism(), VARIANTS.find((v) => `variant:${v.name}` === kind))
    : await pipeline(path, seconds, kind === "pipeline-1" ? 1 : availableParallelism())
  const { user, system } = process.cpuUsage(cpu)
  const result: Result = {
    ...timing,
    cpuSeconds: (user + system) / 1e6,
    childCpuSeconds: await childCpuSeconds(),
    maxRssMb: process.resourceUsage().maxRSS / 1024
  }
  console.log(JSON.stringify(result))
}

/** Parent side: the case in a fresh Node process (same loader flags, so tsx applies). */
const inChild = async (kind: Case, path: string, seconds: number): Promise<Result> => {
  const self = fileURLToPath(import.meta.url)
  const { stdout } = await run(process.execPath, [...process.execArgv, self, "--case", kind, path, String(seconds)], {
    maxBuffer: 1024 * 1024
  })
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as Result
}

/** A one-minute fixture, looped to length (stream copy: fast, and the content stays speech-like). */
const makeInput = async (dir: string, minutes: number) => {
  const unit = join(dir, "unit.wav")
  const path = join(dir, `${minutes}min.wav`)
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-stream_loop", String(minutes - 1),
    "-i", unit, "-c", "copy", path])
  return path
}

/** The pooled pipeline per output variant, at one length; speeds relative to the first variant (the plain MP3). */
const variants = async (dir: string, minutes: number) => {
  const path = await makeInput(dir, minutes)
  const rows: Array<string> = []
  let base = 0
  for (const variant of VARIANTS) {
    const result = await inChild(`variant:${variant.name}`, path, minutes * 60)
    const speed = result.seconds / result.wallSeconds
    if (base === 0) base = speed
    rows.push(`| ${minutes} min | ${variant.name} | ${speed.toFixed(1)} (${(speed / base).toFixed(2)}) | ${(result.seconds / result.cpuSeconds).toFixed(1)} + ffmpeg ${(result.childCpuSeconds / result.seconds * 100).toFixed(1)} % | ${result.maxRssMb.toFixed(0)} |`)
  }
  await rm(path)
  console.log(`model: ${MODEL}; load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  console.log(`| input | variant | pipeline ${availableParallelism()} threads ×RT (÷ first) | audio ÷ Node CPU, + ffmpeg CPU | peak RSS MB |\n|---|---|---|---|---|`)
  for (const row of rows) console.log(row)
}

const main = async (minutesList: ReadonlyArray<number>, variantsOnly: boolean) => {
  const dir = await mkdtemp(join(tmpdir(), "hush-bench-"))
  try {
    await makeNoisySpeech(join(dir, "unit.wav"), { seconds: 60 })
    if (variantsOnly) return await variants(dir, minutesList[0] ?? 10)
    const threads = availableParallelism()
    const rows: Array<Array<string>> = []
    for (const minutes of minutesList) {
      const path = await makeInput(dir, minutes)
      const seconds = minutes * 60
      const compute = await inChild("compute", path, seconds)
      const one = await inChild("pipeline-1", path, seconds)
      const all = await inChild("pipeline-all", path, seconds)
      const speed = (r: Result) => r.seconds / r.wallSeconds
      const cpu = (r: Result) => `${(r.seconds / r.cpuSeconds).toFixed(1)} + ffmpeg ${(r.childCpuSeconds / r.seconds * 100).toFixed(1)} %`
      rows.push([
        `${minutes} min`,
        speed(compute).toFixed(1),
        `${speed(one).toFixed(1)} (${(speed(one) / speed(compute)).toFixed(2)})`,
        `${speed(all).toFixed(1)} (${(speed(all) / speed(one)).toFixed(2)})`,
        cpu(one),
        cpu(all),
        `${compute.maxRssMb.toFixed(0)} / ${one.maxRssMb.toFixed(0)} / ${all.maxRssMb.toFixed(0)}`
      ])
      await rm(path)
    }
    const header = [
      "input", "compute-only ×RT", "pipeline 1 thread ×RT (÷ compute)", `pipeline ${threads} threads ×RT (÷ 1 thread)`,
      "1 thread: audio ÷ Node CPU, + ffmpeg CPU", `${threads} threads: audio ÷ Node CPU, + ffmpeg CPU`,
      "peak RSS MB: compute / 1 thread / all"
    ]
    console.log(`model: ${MODEL}; load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
    console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`)
    for (const row of rows) console.log(`| ${row.join(" | ")} |`)
    await variants(dir, minutesList[0] ?? 1)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const args = process.argv.slice(2)
if (args[0] === "--case") {
  await runCase(args[1] as Case, args[2]!, Number(args[3]))
} else if (args[0] === "--variants-only") {
  await main(args.slice(1).map(Number), true)
} else {
  await main(args.length > 0 ? args.map(Number) : [1, 10, 60], false)
}
