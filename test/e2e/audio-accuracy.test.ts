/**
 * Audio a professional can drop into a timeline (issue 33; decisions.md, Denoise options:
 * Accuracy, Alignment, Report), over HTTP on live jobs of the built-in worker, measured on the
 * downloads as a user would: ffmpeg's `ebur128` (integrated loudness, true peak) and ffmpeg's
 * decoder (which honours an MP3's gapless header and an Opus pre-skip).
 *   - loudness: −16 and −23 LUFS within ±0.5 LU, true peak ≤ −1 dBTP, per format, on 12 s and
 *     on 10 minutes (made by ffmpeg lavfi in a few seconds; one long job per format);
 *   - alignment: a click track over noisy speech, at 48 and 44.1 kHz, stereo: each format
 *     decodes to exactly the input's length (at the output rate) with no lag;
 *   - report: present and plausible, its input loudness the input's as ffmpeg measures it;
 *   - the second model (GTCRN) end to end through the CLI.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loudnessOf, makeNoisySpeech, probeAudio } from "../support/audio-fixtures.js"
import { hush } from "../support/cli.js"
import { startStorageProxy, type StorageProxy } from "../support/storage-proxy.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, denoise, pollUntil, readyFile, type Reply } from "./helpers.js"

const run = promisify(execFile)
const FORMATS = ["mp3", "wav", "flac", "opus"] as const
type Format = (typeof FORMATS)[number]
const LONG_SECONDS = 600

let dir = ""
let server: TestServer
let proxy: StorageProxy
const path = (name: string) => join(dir, name)

/** Clicks every 0.7 s (one sample at full scale, then 0) added to the noisy speech: sharp marks for the alignment. */
const withClicks = async (from: string, to: string, rate: number) => {
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", from,
    "-af", `aresample=${rate},aeval='val(ch)+0.6*eq(mod(n\\,${Math.round(0.7 * rate)})\\,${Math.round(0.35 * rate)})':c=same`,
    "-c:a", "pcm_s16le", to])
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-audio-accuracy-"))
  proxy = await startStorageProxy()
  await Promise.all([
    makeNoisySpeech(path("speech.wav"), { seconds: 12 }),
    makeNoisySpeech(path("stereo.wav"), { seconds: 10, channels: 2 }),
    // a minute made, then looped to 10 (stream copy into FLAC: seconds, not the minutes aevalsrc takes for 600 s)
    makeNoisySpeech(path("minute.wav"), { seconds: 60 }).then(() =>
      run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-stream_loop", String(LONG_SECONDS / 60 - 1),
        "-i", path("minute.wav"), "-c:a", "flac", path("long.flac")])),
    (async () => {
      server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" }, publicBaseUrl: proxy.url })
      proxy.setTarget(server.baseUrl)
    })()
  ])
  await Promise.all([withClicks(path("stereo.wav"), path("clicks48.wav"), 48_000), withClicks(path("stereo.wav"), path("clicks44.wav"), 44_100)])
}, 300_000)

afterAll(async () => {
  await server?.close()
  await proxy?.close()
  await rm(dir, { recursive: true, force: true })
})

/** Decoded by ffmpeg at the file's own rate: interleaved floats. */
const decode = async (file: string) => {
  const { stdout } = await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", file, "-f", "f32le", "pipe:1"],
    { encoding: "buffer", maxBuffer: 512 * 1024 * 1024 })
  return new Float32Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length))
}

/** Uploads `input`, runs a live job, downloads its output: the job and the output's path. */
const liveJob = async (input: string, body: Record<string, unknown>, timeoutMs = 120_000) => {
  const { liveKey } = await server.createAccount(1_000_000)
  const bytes = new Uint8Array(await readFile(path(input)))
  const fileId = await readyFile(server, liveKey, bytes, { filename: input, content_type: input.endsWith(".flac") ? "audio/flac" : "audio/wav" })
  const created = await denoise(server, liveKey, { file: fileId, ...body })
  expect(created.status, created.text).toBe(202)
  expect(created.json.report).toBeNull()
  const done = await pollUntil(() => call(server, "GET", `/v1/jobs/${created.json.id}`, { key: liveKey }),
    (r: Reply) => ["succeeded", "failed", "canceled"].includes(r.json?.status), timeoutMs)
  expect(done.json.status, JSON.stringify(done.json)).toBe("succeeded")
  const link = await call(server, "GET", `/v1/jobs/${done.json.id}/output`, { key: liveKey })
  const download = await fetch(link.json.url)
  const format = (body.output as { format?: Format } | undefined)?.format ?? "mp3"
  const out = path(`${done.json.id}.${format}`)
  await writeFile(out, new Uint8Array(await download.arrayBuffer()))
  return { job: done.json, out }
}

/** The lag (samples, −maxLag…maxLag) at which `y` best matches `x`, channel 0 of stereo. */
const lagOf = (x: Float32Array, y: Float32Array, maxLag = 200) => {
  const n = Math.min(x.length, y.length) / 2
  let best = 0
  let bestScore = -Infinity
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let score = 0
    for (let i = maxLag; i < n - maxLag; i++) score += x[2 * i]! * y[2 * (i + lag)]!
    if (score > bestScore) {
      bestScore = score
      best = lag
    }
  }
  return best
}

describe("loudness on live jobs: ±0.5 LU of the target, true peak ≤ −1 dBTP, on the delivered file", () => {
  for (const format of FORMATS) {
    it(`${format}: −16 and −23 LUFS on 12 s, and on 10 minutes`, async () => {
      const longTarget = format === "mp3" || format === "flac" ? -16 : -23
      const [a, b, long] = await Promise.all([
        liveJob("speech.wav", { output: { format, loudness: -16 } }),
        liveJob("speech.wav", { output: { format, loudness: -23 } }),
        liveJob("long.flac", { output: { format, loudness: longTarget } }, 900_000)
      ])
      for (const [{ out, job }, target] of [[a, -16], [b, -23], [long, longTarget]] as const) {
        const measured = await loudnessOf(out)
        console.log(`${format} ${job.input.duration_seconds} s → ${target}: ${measured.integrated} LUFS, ${measured.truePeak} dBTP; report ${JSON.stringify(job.report)}`)
        expect(Math.abs(measured.integrated - target)).toBeLessThanOrEqual(0.5)
        expect(measured.truePeak).toBeLessThanOrEqual(-1)
        // the report says what the delivered file measures (one decimal; a lossy encoder moves it a little)
        expect(Math.abs(job.report.output_loudness_lufs - measured.integrated)).toBeLessThanOrEqual(0.3)
      }
      // the long one: exactly the input's length
      const x = await decode(path("long.flac"))
      const y = await decode(long.out)
      expect(y.length).toBe(x.length)
    }, 900_000)
  }
})

describe("alignment on live jobs: no added delay, the input's length, 44.1 kHz kept, channels kept", () => {
  for (const rate of [48_000, 44_100] as const) {
    for (const format of FORMATS) {
      it(`${format} from a ${rate / 1000} kHz stereo click track`, async () => {
        const input = path(`clicks${rate === 48_000 ? 48 : 44}.wav`)
        const { out } = await liveJob(`clicks${rate === 48_000 ? 48 : 44}.wav`, { output: { format } })
        // Opus has no 44.1 kHz mode: it stays at 48 kHz and lasts as long
        const outRate = format === "opus" ? 48_000 : rate
        expect(await probeAudio(out)).toMatchObject({ channels: 2, sampleRate: outRate })
        const x = await decode(input)
        const y = await decode(out)
        if (outRate === rate) expect(y.length).toBe(x.length)
        else expect(Math.abs(y.length / 2 / outRate - x.length / 2 / rate)).toBeLessThanOrEqual(0.001)
        if (outRate === rate) expect(Math.abs(lagOf(x, y))).toBeLessThanOrEqual(1)
      }, 120_000)
    }
  }
})

describe("report and the second model", () => {
  it("a live job reports the input's loudness as ffmpeg measures it, and plausible output levels", async () => {
    const { job, out } = await liveJob("speech.wav", {})
    const input = await loudnessOf(path("speech.wav"))
    const output = await loudnessOf(out)
    console.log(`report ${JSON.stringify(job.report)}; ffmpeg: input ${input.integrated}, output ${output.integrated} LUFS / ${output.truePeak} dBTP`)
    expect(Object.keys(job.report)).toEqual(["input_loudness_lufs", "output_loudness_lufs", "output_true_peak_dbtp", "noise_reduction_db"])
    expect(Math.abs(job.report.input_loudness_lufs - input.integrated)).toBeLessThanOrEqual(0.2)
    expect(Math.abs(job.report.output_loudness_lufs - output.integrated)).toBeLessThanOrEqual(0.3)
    expect(Math.abs(job.report.output_true_peak_dbtp - output.truePeak)).toBeLessThanOrEqual(0.5)
    // the fixture's noise sits ~23 dB under its speech: the model takes far more than 20 dB of it
    expect(job.report.noise_reduction_db).toBeGreaterThan(20)
    for (const value of Object.values(job.report) as Array<number>) expect(Math.round(value * 10) / 10).toBe(value)
  }, 120_000)

  it("a test job has no report", async () => {
    const { testKey } = await server.createAccount(0)
    const fileId = await readyFile(server, testKey)
    const created = await denoise(server, testKey, { file: fileId })
    const done = await pollUntil(() => call(server, "GET", `/v1/jobs/${created.json.id}`, { key: testKey }), (r) => r.json?.status === "succeeded")
    expect(done.json.report).toBeNull()
  })

  it("GTCRN through the CLI: listed, priced, run by the built-in worker, charged, its report printed", async () => {
    const model = await call(server, "GET", "/v1/models/xiaobin-rong/gtcrn")
    expect(model.json).toMatchObject({ id: "xiaobin-rong/gtcrn", status: "live" })
    const { liveKey } = await server.createAccount(1_000_000)
    const env = { HUSH_API_KEY: liveKey, HUSH_BASE_URL: proxy.url, HUSH_CACHE_DIR: path("cache"), HUSH_POLL_INTERVAL_MS: "100" }
    const cli = await hush(["denoise", path("speech.wav"), "--model", "xiaobin-rong/gtcrn", "-o", path("gtcrn.mp3"), "--json"], env)
    expect(cli.code, cli.stderr).toBe(0)
    const result = JSON.parse(cli.stdout)
    expect(result.job).toMatchObject({ model: "xiaobin-rong/gtcrn", status: "succeeded", mode: "live" })
    expect(result.job.cost.charged_micros).toBe(150 * result.job.receipt.billable_seconds)
    expect(result.job.report.noise_reduction_db).toBeGreaterThan(10)
    expect(cli.stderr).toMatch(/^Levels: loudness −[\d.]+ → −[\d.]+ LUFS, true peak −[\d.]+ dBTP, noise floor [\d.]+ dB lower$/m)
    const x = await decode(path("speech.wav"))
    const y = await decode(path("gtcrn.mp3"))
    expect(y.length).toBe(x.length)
  }, 180_000)
})
