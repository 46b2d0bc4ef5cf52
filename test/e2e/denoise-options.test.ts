/**
 * Denoise options over HTTP (decisions.md, Denoise options; issue 14): each option is
 * validated at the edge, recorded on the job, and honoured by the built-in worker on live
 * jobs, as measured on the downloads with ffprobe / ffmpeg (codec, channels, duration,
 * EBU R128 loudness and true peak), and never changes the price.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeToFloat, levelDb, makeNoisySpeech, probeAudio, RATE, spans } from "../support/audio-fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, credits, denoise, expectProblem, pollUntil, readyFile, type Reply } from "./helpers.js"

const run = promisify(execFile)

let dir = ""
let server: TestServer
const path = (name: string) => join(dir, name)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-denoise-options-"))
  await Promise.all([
    makeNoisySpeech(path("speech.wav"), { seconds: 12 }),
    makeNoisySpeech(path("stereo.wav"), { seconds: 10, channels: 2 }),
    (async () => {
      server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" } })
    })()
  ])
}, 120_000)

afterAll(async () => {
  await server?.close()
  await rm(dir, { recursive: true, force: true })
})

const CONTENT_TYPES = { "wav": "audio/wav", "flac": "audio/flac", "mp3": "audio/mpeg", "opus": "audio/ogg" } as const
const CODECS = { "wav": "pcm_s16le", "flac": "flac", "mp3": "mp3", "opus": "opus" } as const

/** EBU R128 integrated loudness and true peak, as ffmpeg's ebur128 measures them. */
const loudnessOf = async (file: string) => {
  const { stderr } = await run("ffmpeg", ["-hide_banner", "-nostats", "-nostdin", "-i", file, "-af", "ebur128=peak=true:framelog=verbose", "-f", "null", "-"],
    { maxBuffer: 64 * 1024 * 1024 })
  const summary = stderr.slice(stderr.lastIndexOf("Summary:"))
  const integrated = Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)?.[1])
  const truePeak = Number(/True peak:\s+Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary)?.[1])
  return { integrated, truePeak }
}

/** Uploads `input`, runs a live job with `options`; the finished job and the download's path. */
const liveJob = async (input: string, options: Record<string, unknown>, seconds: number, timeoutMs = 60_000) => {
  const { liveKey } = await server.createAccount(1_000_000)
  const bytes = new Uint8Array(await readFile(path(input)))
  const fileId = await readyFile(server, liveKey, bytes, { filename: input, content_type: input.endsWith(".flac") ? "audio/flac" : "audio/wav" })
  const created = await denoise(server, liveKey, { file: fileId, ...options })
  expect(created.status, created.text).toBe(202)
  // no option changes the price: max(ceil(seconds), 10) × 100 micros
  expect(created.json.cost.estimated_micros).toBe(Math.max(Math.ceil(seconds), 10) * 100)
  const done = await pollUntil(() => call(server, "GET", `/v1/jobs/${created.json.id}`, { key: liveKey }),
    (r: Reply) => ["succeeded", "failed", "canceled"].includes(r.json?.status), timeoutMs)
  const job = done.json
  expect(job.status, JSON.stringify(job)).toBe("succeeded")
  expect(job.cost.charged_micros).toBe(created.json.cost.estimated_micros)
  const format = (options.output as { format?: keyof typeof CODECS } | undefined)?.format ?? "mp3"
  const link = await call(server, "GET", `/v1/jobs/${job.id}/output`, { key: liveKey })
  expect(link.status, link.text).toBe(200)
  expect(link.json.filename).toBe(`${input.replace(/\.(wav|flac)$/, "")}.denoised.${format}`)
  const download = await fetch(link.json.url)
  expect(download.status).toBe(200)
  expect(download.headers.get("content-type")).toBe(CONTENT_TYPES[format])
  const body = new Uint8Array(await download.arrayBuffer())
  expect(body.length).toBe(job.output.size_bytes)
  expect(job.output.format).toBe(format)
  const out = path(`${job.id}.${format}`)
  await writeFile(out, body)
  return { job, out }
}

/** Level of the noise-only stretches, dB (the lag of an MP3 does not matter at this scale). */
const noiseLevel = (x: Float32Array, seconds: number) => {
  const { noise } = spans(seconds)
  return noise.map(([a, b]) => levelDb(x, a, b))
}

describe("denoise options: validation at the edge", () => {
  const bad: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ["strength above 1", { strength: 1.5 }, "strength"],
    ["strength below 0", { strength: -0.1 }, "strength"],
    ["strength not a number", { strength: "high" }, "strength"],
    ["an unknown format", { output: { format: "aac" } }, "format"],
    ["a loudness target below −31 LUFS", { output: { loudness: -40 } }, "loudness"],
    ["a loudness target above −9 LUFS", { output: { loudness: -8 } }, "loudness"],
    ["an unknown output field", { output: { bitrate: 320 } }, "bitrate"],
    ["output not an object", { output: "mp3" }, "output"]
  ]
  for (const [what, options, field] of bad) {
    it(`refuses ${what}: 422 invalid_request naming the field, no job, no hold`, async () => {
      const { liveKey } = await server.createAccount(1_000_000)
      const fileId = await readyFile(server, liveKey)
      const reply = await denoise(server, liveKey, { file: fileId, ...options })
      const problem = await expectProblem(server, reply, 422, "invalid_request")
      expect(problem.detail).toContain(field)
      expect(await credits(server, liveKey)).toMatchObject({ reserved_micros: 0, balance_micros: 1_000_000 })
      const jobs = await call(server, "GET", "/v1/jobs", { key: liveKey })
      expect(jobs.json.data).toEqual([])
    })
  }

  it("shows the options on the job: defaults when absent or null, as asked otherwise; same price", async () => {
    const { liveKey } = await server.createAccount(1_000_000)
    const fileId = await readyFile(server, liveKey)
    const plain = await denoise(server, liveKey, { file: fileId })
    expect(plain.status, plain.text).toBe(202)
    expect(plain.json.options).toEqual({ strength: null, output: { format: "mp3", loudness: null } })
    const nulls = await denoise(server, liveKey, { file: fileId, strength: null, output: null })
    expect(nulls.json.options).toEqual({ strength: null, output: { format: "mp3", loudness: null } })
    const asked = await denoise(server, liveKey, { file: fileId, strength: 0.25, output: { format: "opus", loudness: -16 } })
    expect(asked.status, asked.text).toBe(202)
    expect(asked.json.options).toEqual({ strength: 0.25, output: { format: "opus", loudness: -16 } })
    expect(asked.json.cost).toEqual(plain.json.cost)
    const read = await call(server, "GET", `/v1/jobs/${asked.json.id}`, { key: liveKey })
    expect(read.json.options).toEqual(asked.json.options)
    for (const id of [plain.json.id, nulls.json.id, asked.json.id]) await call(server, "POST", `/v1/jobs/${id}/cancel`, { key: liveKey })
  })

  it("the OpenAPI description has the options", async () => {
    const doc = (await call(server, "GET", "/v1/openapi.json")).json
    const text = JSON.stringify(doc)
    for (const word of ["strength", "loudness", "\"flac\"", "\"opus\"", "JobOptions"]) expect(text).toContain(word)
  })
})

describe("denoise options: test mode", () => {
  for (const format of ["wav", "flac", "opus"] as const) {
    it(`returns the sample as ${format}: its name, content type and codec`, async () => {
      const { testKey } = await server.createAccount(0)
      const fileId = await readyFile(server, testKey, undefined, { filename: "take.wav", content_type: "audio/wav" })
      const created = await denoise(server, testKey, { file: fileId, output: { format } })
      expect(created.status, created.text).toBe(202)
      const done = await pollUntil(() => call(server, "GET", `/v1/jobs/${created.json.id}`, { key: testKey }), (r) => r.json?.status === "succeeded")
      expect(done.json.output.format).toBe(format)
      const link = await call(server, "GET", `/v1/jobs/${created.json.id}/output`, { key: testKey })
      expect(link.json.filename).toBe(`take.denoised.${format}`)
      const download = await fetch(link.json.url)
      expect(download.headers.get("content-type")).toBe(CONTENT_TYPES[format])
      const out = path(`sample-${format}.${format}`)
      await writeFile(out, new Uint8Array(await download.arrayBuffer()))
      expect((await probeAudio(out)).codec).toBe(CODECS[format])
    })
  }
})

describe("denoise options on live jobs (built-in worker)", () => {
  it("strength 0 returns the input's samples unchanged (WAV out)", async () => {
    const { job, out } = await liveJob("speech.wav", { strength: 0, output: { format: "wav" } }, 12)
    expect(job.options.strength).toBe(0)
    expect(await probeAudio(out)).toEqual({ codec: "pcm_s16le", channels: 1, sampleRate: RATE })
    const x = await decodeToFloat(path("speech.wav"))
    const y = await decodeToFloat(out)
    expect(y.length).toBe(x.length)
    let worst = 0
    for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i]! - y[i]!))
    expect(worst).toBe(0)
  }, 90_000)

  it("strength 0.5 keeps measurably more noise than 1: about −6 dB of it, against ≥ 30 dB removed", async () => {
    const [full, half] = await Promise.all([
      liveJob("speech.wav", { strength: 1 }, 12),
      liveJob("speech.wav", { strength: 0.5 }, 12)
    ])
    const x = noiseLevel(await decodeToFloat(path("speech.wav")), 12)
    const f = noiseLevel(await decodeToFloat(full.out), 12)
    const h = noiseLevel(await decodeToFloat(half.out), 12)
    console.log(`noise-only stretches, dB: input ${x.map((v) => v.toFixed(1))}; strength 1 ${f.map((v) => v.toFixed(1))}; 0.5 ${h.map((v) => v.toFixed(1))}`)
    for (let i = 0; i < x.length; i++) {
      expect(x[i]! - f[i]!).toBeGreaterThanOrEqual(30)
      // (1 − 0.5) of the noise in amplitude: −6.0 dB
      expect(h[i]! - x[i]!).toBeGreaterThan(-7.5)
      expect(h[i]! - x[i]!).toBeLessThan(-4.5)
    }
  }, 90_000)

  it("each format decodes as that format, exactly as long as the input, with its channels", async () => {
    const cases = [
      ["speech.wav", "wav", 1, 12], ["stereo.wav", "flac", 2, 10], ["stereo.wav", "opus", 2, 10], ["speech.wav", "mp3", 1, 12]
    ] as const
    const results = await Promise.all(cases.map(([input, format, , seconds]) => liveJob(input, { output: { format } }, seconds)))
    for (const [i, [input, format, channels]] of cases.entries()) {
      const { out, job } = results[i]!
      expect(await probeAudio(out)).toEqual({ codec: CODECS[format], channels, sampleRate: RATE })
      const x = await decodeToFloat(path(input))
      const y = await decodeToFloat(out)
      // WAV and FLAC by their sample count, MP3 by its gapless header, Opus by its pre-skip and last granule
      expect(y.length, format).toBe(x.length)
      // the container's own header tells the same length (a piped WAV or FLAC would not)
      const { stdout } = await run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", out])
      expect(Math.abs(Number(stdout) - x.length / channels / RATE), `${format} header`).toBeLessThan(0.05)
      if (format === "wav") expect(job.output.bitrate_kbps).toBe(768)
      if (format === "opus") expect(job.output.bitrate_kbps).toBe(96)
    }
  }, 120_000)

  // loudness targets on every format, short and 10 minutes long: test/e2e/audio-accuracy.test.ts

  it("a loud target on peaky audio: the true-peak ceiling wins (≤ −1 dBTP), the level never passes the target", async () => {
    // the fixture's crest factor is high: +10 dB of gain puts its peaks far over 0 dBFS, which the limiter holds down
    const { out } = await liveJob("speech.wav", { strength: 1, output: { format: "wav", loudness: -9 } }, 12)
    const measured = await loudnessOf(out)
    console.log(`−9 LUFS asked: ${measured.integrated} LUFS / ${measured.truePeak} dBTP`)
    expect(measured.truePeak).toBeLessThanOrEqual(-1)
    expect(measured.integrated).toBeLessThanOrEqual(-8)
    expect(measured.integrated).toBeGreaterThan((await loudnessOf(path("speech.wav"))).integrated)
  }, 90_000)
})
