/**
 * Denoising quality on a generated corpus (corpus.ts), through the pipeline the worker runs
 * (decode → RNNoise on the chunk pool → mix → MP3 192 kbps; no HTTP), scored against the
 * clean speech (score.ts). Configurations:
 *   - pass-through: the input encoded to MP3 and nothing else (the zero line);
 *   - strength 1: the model alone ("remove everything it can"), RNNoise (xiph/rnnoise) and GTCRN (xiaobin-rong/gtcrn);
 *   - default: strength absent, the adaptive mix (adapters/rnnoise/mix.mjs), each model.
 * `--models rnnoise` or `--models gtcrn` measures one model only.
 * Prints, per noise × SNR, SI-SDR in/out/Δ, noise-floor reduction and speech level change of
 * each configuration (means over the voices), then the means per SNR and the acceptance
 * checks of issue 14. The corpus is cached in the directory given (default: a temporary one).
 *
 *   npm run bench:quality -- [--dir DIR] [--voices N] [--noises a,b] [--snrs 0,20] [--models rnnoise,gtcrn]
 */
import { execFile } from "node:child_process"
import { createReadStream } from "node:fs"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Chunk, Effect, Stream } from "effect"
import { denoiseToOutput } from "../../adapters/rnnoise/pipeline.js"
import { makeChunkPool } from "../../adapters/rnnoise/pool.js"
import { buildCorpus, type Case, type Noise, NOISES, RATE, SNRS, STATIONARY } from "./corpus.js"
import { aligned, lagOf, score, type Scores, silentMask } from "./score.js"

const run = promisify(execFile)

const arg = (name: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at < 0 ? undefined : process.argv[at + 1]
}

const decode = async (bytes: Uint8Array): Promise<Float32Array> => {
  const child = execFile("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", "pipe:0", "-ac", "1", "-ar", String(RATE), "-f", "f32le", "pipe:1"],
    { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 })
  const done = new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    child.stdout!.on("data", (c: Buffer) => chunks.push(c))
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`decode failed (${code})`))))
  })
  child.stdin!.end(bytes)
  const all = await done
  return new Float32Array(all.buffer.slice(all.byteOffset, all.byteOffset + all.length))
}

const passThrough = async (c: Case) => {
  const { stdout } = await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", c.path, "-c:a", "libmp3lame", "-b:a", "192k", "-f", "mp3", "pipe:1"],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 })
  return new Uint8Array(stdout)
}

type Model = "rnnoise" | "gtcrn"
type Config = "pass-through" | `${Model} strength 1` | `${Model} default`
const MODELS: ReadonlyArray<Model> = (arg("models")?.split(",") as Array<Model> | undefined) ?? ["rnnoise", "gtcrn"]
const CONFIGS: ReadonlyArray<Config> = ["pass-through", ...MODELS.flatMap((m): Array<Config> => [`${m} strength 1`, `${m} default`])]
/** The configuration the per-case columns (SI-SDR out) and the acceptance checks are about. */
const DEFAULT: Config = `${MODELS[0]!} default`

const main = Effect.scoped(Effect.gen(function*() {
  const dir = arg("dir") ?? join(tmpdir(), "hush-quality-corpus")
  const voices = arg("voices") === undefined ? undefined : Number(arg("voices"))
  const noises = arg("noises")?.split(",") as Array<Noise> | undefined
  const snrs = arg("snrs")?.split(",").map(Number)
  const started = Date.now()
  const cases = yield* Effect.promise(() => buildCorpus(dir, { voices, noises, snrs }))
  console.log(`corpus: ${cases.length} cases of 13 s in ${dir} (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  const pool = yield* makeChunkPool(availableParallelism())
  const results = new Map<Config, Array<{ c: Case; s: Scores }>>(CONFIGS.map((config) => [config, []]))
  const t0 = Date.now()
  for (const c of cases) {
    const mask = silentMask(c.clean)
    for (const config of CONFIGS) {
      const bytes = config === "pass-through"
        ? yield* Effect.promise(() => passThrough(c))
        : yield* Stream.runCollect(denoiseToOutput(
          NodeStream.fromReadable(() => createReadStream(c.path), (e) => e as Error),
          { bitrateKbps: 192, durationSeconds: c.noisy.length / RATE, pool, strength: config.endsWith("default") ? null : 1, model: config.split(" ")[0] as Model, format: "mp3" }
        )).pipe(Effect.map((chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks))), Effect.orDie)
      const decoded = yield* Effect.promise(() => decode(bytes))
      const output = aligned(decoded, lagOf(c.noisy, decoded), c.noisy.length)
      results.get(config)!.push({ c, s: score(c.clean, c.noisy, output, mask) })
    }
  }
  const seconds = (Date.now() - t0) / 1000
  report(results, cases)
  console.log(`\n${cases.length} cases × ${CONFIGS.length} configurations in ${seconds.toFixed(0)} s; load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${availableParallelism()} cores`)
}))

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
const f = (x: number, digits = 1) => (x >= 0 ? `+${x.toFixed(digits)}` : `−${(-x).toFixed(digits)}`)

const report = (results: Map<Config, Array<{ c: Case; s: Scores }>>, cases: ReadonlyArray<Case>) => {
  const pick = (config: Config, noise?: Noise, snr?: number) =>
    results.get(config)!.filter((x) => (noise === undefined || x.c.noise === noise) && (snr === undefined || x.c.snr === snr)).map((x) => x.s)
  const delta = (s: ReadonlyArray<Scores>) => mean(s.map((x) => x.siSdrOut - x.siSdrIn))
  const noises = NOISES.filter((n) => cases.some((c) => c.noise === n))
  const snrs = SNRS.filter((snr) => cases.some((c) => c.snr === snr))

  console.log(`\nPer noise × SNR (means over voices). ΔSI-SDR, noise-floor reduction and speech level change per configuration: ${CONFIGS.join(" / ")}`)
  console.log("| noise | SNR | SI-SDR in | SI-SDR out (default) | ΔSI-SDR | floor reduction (dB) | speech level (dB) |")
  console.log("|---|---|---|---|---|---|---|")
  for (const noise of noises) {
    for (const snr of snrs) {
      const per = CONFIGS.map((config) => pick(config, noise, snr))
      const d = per[CONFIGS.indexOf(DEFAULT)]!
      console.log(`| ${noise} | ${snr} | ${mean(d.map((x) => x.siSdrIn)).toFixed(1)} | ${mean(d.map((x) => x.siSdrOut)).toFixed(1)} | ${per.map((s) => f(delta(s))).join(" / ")} | ${per.map((s) => mean(s.map((x) => x.floorReductionDb)).toFixed(1)).join(" / ")} | ${per.map((s) => f(mean(s.map((x) => x.speechLevelDb)))).join(" / ")} |`)
    }
  }
  console.log(`\nMeans per SNR: ${CONFIGS.join(" / ")}`)
  console.log("| SNR | ΔSI-SDR (dB) | noise-floor reduction, all (dB) | …stationary noises | speech level change (dB) |")
  console.log("|---|---|---|---|---|")
  for (const snr of snrs) {
    const per = CONFIGS.map((config) => pick(config, undefined, snr))
    const stationary = CONFIGS.map((config) => pick(config, undefined, snr).filter((_, i) => STATIONARY.includes(results.get(config)!.filter((x) => x.c.snr === snr)[i]!.c.noise)))
    console.log(`| ${snr} | ${per.map((s) => f(delta(s))).join(" / ")} | ${per.map((s) => mean(s.map((x) => x.floorReductionDb)).toFixed(1)).join(" / ")} | ${stationary.map((s) => mean(s.map((x) => x.floorReductionDb)).toFixed(1)).join(" / ")} | ${per.map((s) => f(mean(s.map((x) => x.speechLevelDb)))).join(" / ")} |`)
  }
  const all = CONFIGS.map((config) => pick(config))
  console.log(`| all | ${all.map((s) => f(delta(s))).join(" / ")} | ${all.map((s) => mean(s.map((x) => x.floorReductionDb)).toFixed(1)).join(" / ")} | | ${all.map((s) => f(mean(s.map((x) => x.speechLevelDb)))).join(" / ")} |`)

  // Issue 14's acceptance, on the default
  const low = (config: Config) => delta(results.get(config)!.filter((x) => x.c.snr <= 10).map((x) => x.s))
  const model = DEFAULT.split(" ")[0]
  const alone: Config = `${model as Model} strength 1`
  console.log(`\nAcceptance (${DEFAULT}):`)
  if (snrs.includes(20)) {
    for (const noise of noises) console.log(`  ΔSI-SDR at 20 dB, ${noise}: ${f(delta(pick(DEFAULT, noise, 20)), 2)} (≥ 0 wanted; strength 1: ${f(delta(pick(alone, noise, 20)), 2)})`)
  }
  console.log(`  mean ΔSI-SDR over 0–10 dB: default ${f(low(DEFAULT), 2)}, strength 1 ${f(low(alone), 2)} (default ≥ strength 1 − 0.3 wanted)`)
  if (noises.includes("babble")) {
    for (const config of CONFIGS) console.log(`  babble ΔSI-SDR over 0–10 dB, ${config}: ${f(delta(results.get(config)!.filter((x) => x.c.noise === "babble" && x.c.snr <= 10).map((x) => x.s)), 2)} (issue 33: ≥ +2 wanted of the default)`)
  }
  console.log(`  mean speech level change: ${f(mean(pick(DEFAULT).map((x) => x.speechLevelDb)), 2)} dB (within ±0.5 wanted)`)
  for (const noise of noises.filter((n) => STATIONARY.includes(n))) {
    console.log(`  noise floor reduction, ${noise}: ${mean(pick(DEFAULT, noise).map((x) => x.floorReductionDb)).toFixed(1)} dB (min ${Math.min(...pick(DEFAULT, noise).map((x) => x.floorReductionDb)).toFixed(1)}; ≥ 30 wanted)`)
  }
}

Effect.runPromise(main).catch((error) => {
  console.error(error)
  process.exit(1)
})
