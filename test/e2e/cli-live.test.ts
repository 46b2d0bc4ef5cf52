/**
 * `hush denoise` on a 150 MiB file in live mode (issue 13): a multipart upload in the
 * production part size (64 MiB, so 3 parts, sent in parallel), validation, a live job that is
 * charged, the download. The model runs on the fake GPU host (test/support/fake-gpu-provider.ts,
 * which answers the shipped sample MP3): RNNoise on 82 minutes of audio would take minutes of
 * this machine's shared CPUs and is covered by test/e2e/live-denoise.test.ts. The input is
 * 16 kHz mono PCM, the validator's own decode format, so validating it costs little.
 * And a run stopped while its job works: the same command follows that job, not a new one.
 */
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Redacted } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type FakeGpuProvider, SAMPLE_MP3, startFakeGpuProvider } from "../support/fake-gpu-provider.js"
import { hush, startHush } from "../support/cli.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { startStorageProxy, type StorageProxy } from "../support/storage-proxy.js"
import { call, tone } from "./helpers.js"

const MiB = 1024 * 1024

let dir = ""
let fake: FakeGpuProvider
let proxy: StorageProxy
let server: TestServer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-cli-live-"))
  fake = await startFakeGpuProvider()
  proxy = await startStorageProxy()
  const made = promisify(execFile)("ffmpeg", [
    "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000:duration=4916",
    "-ac", "1", "-c:a", "pcm_s16le", join(dir, "meeting.wav")
  ])
  server = await startTestServer({
    publicBaseUrl: proxy.url,
    worker: true,
    workerOptions: { pollInterval: "100 millis" },
    gpuProvider: {
      name: "gpu", url: fake.url, token: Redacted.make(fake.token), pollIntervalMs: 100, requestTimeoutMs: 30_000,
      deadlineMs: 120_000, retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 500, budgetMs: 10_000 }
    }
  })
  proxy.setTarget(server.baseUrl)
  await made
}, 120_000)

afterAll(async () => {
  await server?.close()
  await proxy?.close()
  await fake?.close()
  await rm(dir, { recursive: true, force: true })
})

it("denoises a 150 MiB file with one command: 3 parts of a multipart upload, a charged live job, the output saved", { timeout: 300_000 }, async () => {
  const input = join(dir, "meeting.wav")
  const size = (await stat(input)).size
  expect(size).toBeGreaterThanOrEqual(150 * MiB)
  const { liveKey } = await server.createAccount(2_000_000)

  const run = await hush(["denoise", input, "--model", "hush/denoise-pro", "--json"], {
    HUSH_API_KEY: liveKey, HUSH_BASE_URL: proxy.url, HUSH_CACHE_DIR: join(dir, "cache"), HUSH_POLL_INTERVAL_MS: "200"
  })
  expect(run.code, run.stderr).toBe(0)
  const result = JSON.parse(run.stdout)

  // the client's PUTs (the GPU host's output goes through the proxy too, to another key)
  const uploads = proxy.puts.filter((p) => p.path.includes(result.file.id))
  expect(uploads.map((p) => [p.partNumber, p.outcome]).sort()).toEqual([[1, 200], [2, 200], [3, 200]])
  expect(result.file).toMatchObject({ size_bytes: size, status: "ready", mode: "live" })
  expect(result.job).toMatchObject({ status: "succeeded", mode: "live", model: "hush/denoise-pro" })
  expect(result.job.cost.charged_micros).toBe(300 * result.job.receipt.billable_seconds)
  expect(result.job.receipt.billable_seconds).toBe(4916)
  expect(new Uint8Array(await readFile(result.output.path))).toEqual(SAMPLE_MP3)
  expect(run.stderr).toMatch(/^Uploading  100%  150\.\d MiB of 150\.\d MiB$/m)
})

it("Ctrl-C while the job runs, then the same command: it follows the same job, nothing is created or charged twice", { timeout: 120_000 }, async () => {
  const input = join(dir, "call.wav")
  await writeFile(input, tone(12))
  const { liveKey } = await server.createAccount(1_000_000)
  const env = { HUSH_API_KEY: liveKey, HUSH_BASE_URL: proxy.url, HUSH_CACHE_DIR: join(dir, "cache"), HUSH_POLL_INTERVAL_MS: "100" }
  fake.configure({ workMs: 4_000 })
  try {
    const first = startHush(["denoise", input, "--model", "hush/denoise-pro"], env)
    for (let i = 0; i < 600 && !/^Job job_/m.test(first.stderr()); i++) await new Promise((r) => setTimeout(r, 50))
    first.child.kill("SIGINT")
    const stopped = await first.done
    expect(stopped.code, stopped.stderr).toBe(130)
    const jobId = /^Job (job_\w+)/m.exec(stopped.stderr)![1]
    expect(stopped.stderr).toContain(`interrupted: job ${jobId} keeps running; see it with hush jobs get ${jobId}`)

    const second = await hush(["denoise", input, "--model", "hush/denoise-pro", "--json"], env)
    expect(second.code, second.stderr).toBe(0)
    const result = JSON.parse(second.stdout)
    expect(result.job).toMatchObject({ id: jobId, status: "succeeded" })
    const jobs = await call(server, "GET", "/v1/jobs", { key: liveKey })
    expect(jobs.json.data.map((job: { id: string }) => job.id)).toEqual([jobId])
    const credits = await call(server, "GET", "/v1/credits", { key: liveKey })
    expect(credits.json.balance_micros).toBe(1_000_000 - result.job.cost.charged_micros)
  } finally {
    fake.configure({})
  }
})
