/**
 * A live job end to end over HTTP (issue acceptance): the built-in worker runs in the server
 * (as `npm start` does), RNNoise on this machine's CPUs. A noisy speech-like recording is made
 * here (test/support/audio-fixtures.ts: the fixture the pipeline tests established RNNoise
 * keeps as speech), uploaded, denoised, and the MP3 downloaded through the output link.
 *
 * Checked on the download: a valid MP3 that decodes without errors, the input's channel
 * count, its decoded duration within 50 ms of the input's, the noise-only stretches ≥ 30 dB
 * quieter, the speech level within 2 dB; and on the account: charged exactly the job's cost,
 * once (one `capture` ledger entry, the receipt's ledger_txn_id).
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WalletRepo } from "../../core/ports/repositories.js"
import {
  bestLag, channel, decodeToFloat, levelDb, makeNoisySpeech, probeAudio, RATE, spans
} from "../support/audio-fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, credits, denoise, expectJobShape, pollUntil, readyFile, type Reply } from "./helpers.js"

const run = promisify(execFile)

/** The MP3 encoder delay the output still carries (no LAME tag on a piped MP3): ≈ 1105 samples. */
const MAX_LAG = 1500

let dir = ""
let server: TestServer
const path = (name: string) => join(dir, name)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-live-denoise-"))
  await Promise.all([
    makeNoisySpeech(path("speech.wav"), { seconds: 12 }),
    makeNoisySpeech(path("stereo.wav"), { seconds: 10, channels: 2 }),
    (async () => {
      server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" } })
    })()
  ])
}, 60_000)

afterAll(async () => {
  await server?.close()
  await rm(dir, { recursive: true, force: true })
})

/** Polls the job until it ends, recording every progress value it showed on the way. */
const finish = async (key: string, jobId: string) => {
  const seen: Array<{ status: string; progress: number }> = []
  const done = await pollUntil(
    async () => {
      const reply = await call(server, "GET", `/v1/jobs/${jobId}`, { key })
      if (reply.status === 200) seen.push({ status: reply.json.status, progress: reply.json.progress })
      return reply
    },
    (r: Reply) => ["succeeded", "failed", "canceled"].includes(r.json?.status),
    45_000
  )
  return { job: done.json, seen }
}

/** Fails on any decoding error anywhere in the stream (not only in the header). */
const decodesCleanly = async (file: string) => {
  const { stderr } = await run("ffmpeg", ["-hide_banner", "-nostdin", "-v", "error", "-xerror", "-i", file, "-f", "null", "-"])
  return stderr.trim()
}

interface Measured {
  readonly noise: Array<number>
  readonly speech: Array<number>
}

/** Per stretch: how much quieter the output is than the input (noise), and |level change| (speech). */
const measure = (x: Float32Array, y: Float32Array, seconds: number): Measured => {
  const lag = bestLag(x, y, MAX_LAG, 2.2, 4.8)
  // aligned (decisions.md, Alignment): no added delay, 0 samples ± 1
  expect(Math.abs(lag)).toBeLessThanOrEqual(1)
  const aligned = y.subarray(Math.max(lag, 0))
  const { speech, noise } = spans(seconds)
  return {
    noise: noise.map(([a, b]) => levelDb(x, a, b) - levelDb(aligned, a, b)),
    speech: speech.map(([a, b]) => levelDb(aligned, a, b) - levelDb(x, a, b))
  }
}

const round = (values: Array<number>) => values.map((v) => Math.round(v * 10) / 10)

/** Uploads `input`, runs a live job on it and checks the job, the charge and the download; the output's path. */
const denoiseLive = async (input: string, seconds: number) => {
  const CREDIT = 1_000_000
  const { liveKey, account } = await server.createAccount(CREDIT)
  const bytes = new Uint8Array(await readFile(path(input)))
  const fileId = await readyFile(server, liveKey, bytes, { filename: input, content_type: "audio/wav" })
  const file = await call(server, "GET", `/v1/files/${fileId}`, { key: liveKey })
  expect(file.json.duration_seconds).toBeCloseTo(seconds, 2)

  const started = Date.now()
  const created = await denoise(server, liveKey, { file: fileId })
  expect(created.status, created.text).toBe(202)
  const cost = created.json.cost.estimated_micros as number
  // max(ceil(seconds), 10) × 100 micros
  expect(cost).toBe(Math.max(Math.ceil(seconds), 10) * 100)
  expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT, reserved_micros: cost })

  const { job, seen } = await finish(liveKey, created.json.id)
  const elapsedMs = Date.now() - started
  expect(job.status, JSON.stringify(job)).toBe("succeeded")
  expectJobShape(job)
  expect(job.progress).toBe(1)
  expect(job.error).toBeNull()
  // progress only rose, and reached 1 only with success
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThanOrEqual(seen[i - 1]!.progress)
  for (const s of seen) if (s.status !== "succeeded") expect(s.progress).toBeLessThan(1)

  // charged exactly the cost, once
  expect(job.cost).toMatchObject({ estimated_micros: cost, charged_micros: cost })
  expect(job.receipt.charged_micros).toBe(cost)
  expect(job.receipt.ledger_txn_id).toMatch(/^txn_[a-z2-7]{20,}$/)
  const after = await credits(server, liveKey)
  expect(after).toMatchObject({ balance_micros: CREDIT - cost, reserved_micros: 0, available_micros: CREDIT - cost })
  const ledger = await server.run(Effect.flatMap(WalletRepo, (wallets) => wallets.ledgerForJob(job.id)))
  expect(ledger.map((e) => e.kind)).toEqual(["hold", "capture"])
  const capture = ledger[1]!
  expect(capture.id).toBe(job.receipt.ledger_txn_id)
  expect(capture.accountId).toBe(account.id)
  expect([capture.balanceDelta, capture.reservedDelta, capture.balanceAfter, capture.reservedAfter]).toEqual([-cost, -cost, CREDIT - cost, 0])

  // the download, through the output link
  const link = await call(server, "GET", `/v1/jobs/${job.id}/output`, { key: liveKey })
  expect(link.status, link.text).toBe(200)
  expect(link.json.filename).toBe(`${input.replace(/\.wav$/, "")}.denoised.mp3`)
  const download = await fetch(link.json.url)
  expect(download.status).toBe(200)
  expect(download.headers.get("content-type")).toBe("audio/mpeg")
  const mp3 = new Uint8Array(await download.arrayBuffer())
  expect(mp3.length).toBe(job.output.size_bytes)
  expect(job.output).toMatchObject({ format: "mp3", bitrate_kbps: 192 })
  // about 192 kb/s: 24,000 bytes a second
  expect(mp3.length).toBeGreaterThan(0.9 * seconds * 24_000)
  const out = path(`${input}.denoised.mp3`)
  await writeFile(out, mp3)
  expect(await decodesCleanly(out)).toBe("")
  return { out, elapsedMs }
}

describe("a live job over HTTP with the built-in worker", () => {
  it("denoises noisy speech: a valid MP3 as long as the input, noise ≥ 30 dB quieter, speech within 2 dB, charged once", async () => {
    const { out, elapsedMs } = await denoiseLive("speech.wav", 12)
    expect(await probeAudio(out)).toEqual({ codec: "mp3", channels: 1, sampleRate: RATE })
    const x = await decodeToFloat(path("speech.wav"))
    const y = await decodeToFloat(out)
    const extraMs = ((y.length - x.length) / RATE) * 1000
    expect(Math.abs(extraMs)).toBeLessThan(50)
    const { noise, speech } = measure(x, y, 12)
    console.log(`mono 12 s: job ${elapsedMs} ms; duration +${extraMs.toFixed(1)} ms; noise −dB ${round(noise).join(", ")}; speech ΔdB ${round(speech).join(", ")}`)
    for (const drop of noise) expect(drop).toBeGreaterThanOrEqual(30)
    for (const change of speech) expect(Math.abs(change)).toBeLessThan(2)
  }, 60_000)

  it("stereo input stays stereo, each channel denoised on its own", async () => {
    const { out, elapsedMs } = await denoiseLive("stereo.wav", 10)
    expect(await probeAudio(out)).toEqual({ codec: "mp3", channels: 2, sampleRate: RATE })
    const x = await decodeToFloat(path("stereo.wav"))
    const y = await decodeToFloat(out)
    const extraMs = ((y.length - x.length) / 2 / RATE) * 1000
    expect(Math.abs(extraMs)).toBeLessThan(50)
    const report: Array<string> = []
    for (const c of [0, 1]) {
      const { noise, speech } = measure(channel(x, 2, c), channel(y, 2, c), 10)
      report.push(`ch${c} noise −dB ${round(noise).join(", ")}; speech ΔdB ${round(speech).join(", ")}`)
      for (const drop of noise) expect(drop).toBeGreaterThanOrEqual(30)
      for (const change of speech) expect(Math.abs(change)).toBeLessThan(2)
    }
    console.log(`stereo 10 s: job ${elapsedMs} ms; duration +${extraMs.toFixed(1)} ms; ${report.join(" | ")}`)
  }, 60_000)
})
