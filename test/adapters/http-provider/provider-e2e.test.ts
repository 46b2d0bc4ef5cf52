/**
 * The GPU model over the HTTP API: a Hush test server configured with a GPU provider (as
 * GPU_PROVIDER_URL & co. configure one: the catalog lists `hush/denoise-pro` as live and the
 * worker runs it through the HTTP provider, beside RNNoise), pointed at the fake GPU host
 * (test/support/fake-gpu-provider.ts). The worker loop, the lease, the wallet and the local blob
 * store with its signed URLs are the real ones.
 *
 * A GPU job succeeds and is charged exactly once; every failure mode of the host ends the job
 * `succeeded` (retried) or `failed` with `provider_error`, never charged (the hold released,
 * the credits back), never stuck. Without a GPU provider the model is `retired`.
 *
 * A succeeded GPU job has its report, measured by Hush on the stored input and output (the host
 * writes the output straight to storage); a report that cannot be measured leaves it null.
 *
 * Timings are shrunk (poll 50 ms, per-call timeout 300 ms, retries from 20 ms within 3 s).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, LogLevel, Redacted } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { DENOISE_PRO } from "../../../core/domain/catalog.js"
import { JobRules } from "../../../core/rules/index.js"
import { WalletRepo } from "../../../core/ports/repositories.js"
import { type Fault, type FakeGpuOptions, type FakeGpuProvider, SAMPLE_MP3, startFakeGpuProvider, times } from "../../support/fake-gpu-provider.js"
import { loudnessOf } from "../../support/audio-fixtures.js"
import { startTestServer, type TestServer } from "../../support/server.js"
import { call, credits, denoise, expectJobShape, expectProblem, junk, readyFile, tone, waitForJob } from "../../e2e/helpers.js"

const CREDIT = 1_000_000
/** 12 s of audio at 300 micros a second. */
const COST = 12 * 300

let fake: FakeGpuProvider
let server: TestServer
/** The server's log (collected, not printed): where a failure's details go. */
const logs: Array<string> = []

beforeAll(async () => {
  fake = await startFakeGpuProvider()
  server = await startTestServer({
    logs,
    worker: true,
    workerOptions: { pollInterval: "50 millis" },
    gpuProvider: {
      name: "gpu",
      url: fake.url,
      token: Redacted.make(fake.token),
      pollIntervalMs: 50,
      requestTimeoutMs: 300,
      deadlineMs: 10_000,
      retry: { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 200, budgetMs: 3_000 }
    }
  })
})

afterAll(async () => {
  await server?.close()
  await fake?.close()
})

beforeEach(() => {
  fake.configure({})
  fake.clearRecords()
})

const ledgerKinds = (jobId: string) =>
  server.run(Effect.map(Effect.flatMap(WalletRepo, (wallets) => wallets.ledgerForJob(jobId)), (entries) => entries.map((e) => e.kind)))

/** A funded account with a ready 12-second file and a live GPU job on it, run to its end. */
const runGpuJob = async (behaviour: FakeGpuOptions = {}) => {
  fake.configure(behaviour)
  const { liveKey } = await server.createAccount(CREDIT)
  const fileId = await readyFile(server, liveKey, tone(12))
  const created = await denoise(server, liveKey, { file: fileId, model: DENOISE_PRO.id })
  expect(created.status, created.text).toBe(202)
  expect(created.json.model).toBe(DENOISE_PRO.id)
  expect(created.json.cost.estimated_micros).toBe(COST)
  expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT, reserved_micros: COST })
  // waitForJob gives up after 15 s: a job stuck in processing fails the test
  const done = await waitForJob(server, liveKey, created.json.id)
  return { liveKey, job: done.json }
}

/** Succeeded, charged exactly once, the output the host uploaded. */
const expectSucceededCharged = async (liveKey: string, job: any) => {
  expectJobShape(job)
  expect(job.status, JSON.stringify(job)).toBe("succeeded")
  expect(job.progress).toBe(1)
  expect(job.error).toBeNull()
  expect(job.cost).toMatchObject({ estimated_micros: COST, charged_micros: COST })
  expect(job.receipt).toMatchObject({ charged_micros: COST, unit_price_micros: 300, billable_seconds: 12, pricing_version: 1 })
  expect(job.output).toMatchObject({ format: "mp3", bitrate_kbps: 192, size_bytes: SAMPLE_MP3.length })
  expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT - COST, reserved_micros: 0, available_micros: CREDIT - COST })
  expect(await ledgerKinds(job.id)).toEqual(["hold", "capture"])
  const link = await call(server, "GET", `/v1/jobs/${job.id}/output`, { key: liveKey })
  expect(link.status, link.text).toBe(200)
  const download = await fetch(link.json.url)
  expect(download.status).toBe(200)
  expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(SAMPLE_MP3))).toBe(true)
  expect(job.report).not.toBeNull()
}

/** Failed with provider_error, never charged: the hold released, the credits back. */
const expectFailedUncharged = async (liveKey: string, job: any) => {
  expectJobShape(job)
  expect(job.status, JSON.stringify(job)).toBe("failed")
  expect(job.error.code).toBe("provider_error")
  expect(job.output).toBeNull()
  expect(job.cost).toMatchObject({ estimated_micros: COST, charged_micros: null })
  expect(job.receipt).toMatchObject({ charged_micros: null, ledger_txn_id: null })
  expect(job.finished_at).not.toBeNull()
  expect(await credits(server, liveKey)).toMatchObject({ balance_micros: CREDIT, reserved_micros: 0, available_micros: CREDIT })
  expect(await ledgerKinds(job.id)).toEqual(["hold", "release"])
  await expectProblem(server, await call(server, "GET", `/v1/jobs/${job.id}/output`, { key: liveKey }), 409, "job_not_succeeded")
}

describe("the GPU model over HTTP, GPU provider configured", () => {
  it("is listed live with its own price", async () => {
    const reply = await call(server, "GET", "/v1/models/hush/denoise-pro")
    expect(reply.status, reply.text).toBe(200)
    expect(reply.json).toMatchObject({
      id: "hush/denoise-pro", status: "live", task: "denoise",
      pricing: { unit: "second", unit_price_micros: 300, min_units: 10, pricing_version: 1 },
      output: { format: "mp3", bitrate_kbps: 192 }
    })
    const list = await call(server, "GET", "/v1/models")
    expect(list.json.data.map((m: any) => [m.id, m.status])).toEqual(expect.arrayContaining([["xiph/rnnoise", "live"], ["hush/denoise-pro", "live"]]))
  })

  it("a job with model hush/denoise-pro runs on the GPU host, succeeds, and is charged exactly once", async () => {
    const { liveKey, job } = await runGpuJob({ workMs: 200 })
    await expectSucceededCharged(liveKey, job)
    expect(fake.submissions).toHaveLength(1)
    expect(fake.submissions[0]).toMatchObject({ key: job.id, status: 201, body: { model: "hush/denoise-pro", output: { bitrate_kbps: 192 } } })
    // the host read the uploaded WAV through its signed link
    expect(fake.inputs).toHaveLength(1)
    expect(Buffer.from(fake.inputs[0].bytes).equals(Buffer.from(tone(12)))).toBe(true)
    expect(fake.cancels).toEqual([])
  })

  it("a succeeded GPU job reports the input's and the host's output's levels as ffmpeg measures them, to one decimal", async () => {
    const { job } = await runGpuJob()
    expect(job.status, JSON.stringify(job)).toBe("succeeded")
    const dir = await mkdtemp(join(tmpdir(), "hush-gpu-report-"))
    try {
      // the input was the 12 s tone; the fake host's output is the sample MP3
      await writeFile(join(dir, "input.wav"), tone(12))
      await writeFile(join(dir, "output.mp3"), SAMPLE_MP3)
      const input = await loudnessOf(join(dir, "input.wav"))
      const output = await loudnessOf(join(dir, "output.mp3"))
      console.log(`GPU report ${JSON.stringify(job.report)}; ffmpeg: input ${input.integrated}, output ${output.integrated} LUFS / ${output.truePeak} dBTP`)
      expect(Object.keys(job.report)).toEqual(["input_loudness_lufs", "output_loudness_lufs", "output_true_peak_dbtp", "noise_reduction_db"])
      // the tone is ffmpeg's sine (amplitude 1/8) at 440 Hz, where K-weighting is flat: −0.691 + 10·log10(1/128) LUFS
      // (ffmpeg's meter reads 0.2 LU above that, so it is held to 0.3)
      const toneLufs = -0.691 + 10 * Math.log10(1 / 128)
      expect(Math.abs(job.report.input_loudness_lufs - toneLufs), JSON.stringify({ report: job.report, toneLufs })).toBeLessThanOrEqual(0.1)
      expect(Math.abs(job.report.input_loudness_lufs - input.integrated), JSON.stringify({ report: job.report, input })).toBeLessThanOrEqual(0.3)
      expect(Math.abs(job.report.output_loudness_lufs - output.integrated), JSON.stringify({ report: job.report, output })).toBeLessThanOrEqual(0.2)
      expect(Math.abs(job.report.output_true_peak_dbtp - output.truePeak), JSON.stringify({ report: job.report, output })).toBeLessThanOrEqual(0.5)
      for (const value of Object.values(job.report) as Array<number>) {
        expect(Number.isFinite(value)).toBe(true)
        expect(Math.round(value * 10) / 10).toBe(value)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("an output that cannot be measured (not audio) leaves the job succeeded and charged, without a report", async () => {
    const { job } = await runGpuJob({ output: junk(4096) })
    expect(job.status, JSON.stringify(job)).toBe("succeeded")
    expect(job.cost.charged_micros).toBe(COST)
    expect(job.report).toBeNull()
    expect(logs.filter((line) => line.includes(`jobId=${job.id}`)).some((line) => /report could not be measured/.test(line))).toBe(true)
  })

  it("an RNNoise job on the same deployment still runs on the built-in worker, not the GPU host", async () => {
    const { liveKey } = await server.createAccount(CREDIT)
    const fileId = await readyFile(server, liveKey, tone(2))
    const created = await denoise(server, liveKey, { file: fileId })
    expect(created.status, created.text).toBe(202)
    expect(created.json.model).toBe("xiph/rnnoise")
    const done = await waitForJob(server, liveKey, created.json.id)
    expect(done.json).toMatchObject({ status: "succeeded", cost: { charged_micros: 1_000 } })
    expect(fake.requests).toEqual([])
  })
})

const retried: ReadonlyArray<readonly [string, FakeGpuOptions]> = [
  ["5xx on submit, twice", { faults: { submit: [{ kind: "status", status: 503 }, { kind: "status", status: 500 }] } }],
  ["429 with Retry-After on submit", { faults: { submit: [{ kind: "status", status: 429, retryAfter: "1" }] } }],
  ["an answer slower than the timeout", { faults: { submit: [{ kind: "slow", delayMs: 1_000 }], poll: [{ kind: "slow", delayMs: 1_000 }] } }],
  ["malformed JSON once", { faults: { poll: [{ kind: "malformed" }] } }],
  ["a dropped connection", { faults: { poll: [{ kind: "reset" }] } }],
  ["a job forgotten once (404 on poll)", { workMs: 200, faults: { poll: [{ kind: "forget" }] } }]
]

describe("GPU host failures that pass: the job succeeds, charged once", () => {
  it.each(retried)("%s", async (_, behaviour) => {
    const { liveKey, job } = await runGpuJob(behaviour)
    await expectSucceededCharged(liveKey, job)
  })
})

const failing: ReadonlyArray<readonly [string, FakeGpuOptions, RegExp]> = [
  ["5xx on every try", { faults: { submit: times(20, { kind: "status", status: 503 }) } }, /submit failed: HTTP 503/],
  ["429 asking for longer than the retry budget", { faults: { submit: [{ kind: "status", status: 429, retryAfter: "600" }] } }, /HTTP 429/],
  ["answers always past the timeout", { faults: { poll: times(20, { kind: "slow", delayMs: 1_000 } as Fault) } }, /no answer within 300 ms/],
  ["malformed JSON on every try", { faults: { poll: times(20, { kind: "malformed" }) } }, /not JSON/],
  ["a 400 refusal", { faults: { submit: [{ kind: "status", status: 400 }] } }, /submit failed: HTTP 400/],
  ["a token the host refuses (401)", { token: "another-token" }, /HTTP 401/],
  ["a job forgotten twice", { workMs: 400, faults: { poll: [{ kind: "forget" }, { kind: "forget" }] } }, /lost the job twice/],
  ["the host fails the job", { outcome: "fail", failMessage: "unsupported sample rate" }, /failed the job: unsupported sample rate/],
  ["success reported without an upload", { outcome: "no-output" }, /reported success but wrote no output/],
  ["success reported without any output", { outcome: "no-etag" }, /reported success but wrote no output/],
  ["an empty output", { outcome: "empty-output" }, /reported success but wrote no output/]
]

describe("GPU host failures that do not pass: failed provider_error, never charged, never stuck", () => {
  it.each(failing)("%s", async (_, behaviour, message) => {
    // never stuck: runGpuJob gives up on a job still processing after 15 s
    const { liveKey, job } = await runGpuJob(behaviour)
    await expectFailedUncharged(liveKey, job)
    // the public message is the code's own; what the host did is in the log only
    expect(job.error.message).toBe(JobRules.JOB_ERROR_MESSAGES.provider_error)
    expect(job.error.message).not.toMatch(message)
    expect(logs.filter((line) => line.includes(`jobId=${job.id}`)).some((line) => message.test(line))).toBe(true)
  })
})

describe("the GPU model without a GPU provider", () => {
  let plain: TestServer
  beforeAll(async () => {
    plain = await startTestServer({ logLevel: LogLevel.None })
  })
  afterAll(async () => {
    await plain?.close()
  })

  it("is listed retired and refused: 422 model_not_available, nothing held", async () => {
    const list = await call(plain, "GET", "/v1/models")
    expect(list.json.data.find((m: any) => m.id === "hush/denoise-pro")?.status).toBe("retired")
    expect(list.json.data.find((m: any) => m.id === "xiph/rnnoise")?.status).toBe("live")
    expect((await call(plain, "GET", "/v1/models/hush/denoise-pro")).json.status).toBe("retired")
    const { liveKey } = await plain.createAccount(CREDIT)
    const fileId = await readyFile(plain, liveKey, tone(1))
    await expectProblem(plain, await denoise(plain, liveKey, { file: fileId, model: "hush/denoise-pro" }), 422, "model_not_available")
    expect(await credits(plain, liveKey)).toMatchObject({ balance_micros: CREDIT, reserved_micros: 0 })
  })
})
