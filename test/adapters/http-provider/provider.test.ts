/**
 * The HTTP GPU provider (adapters/http-provider) against the fake GPU host
 * (test/support/fake-gpu-provider.ts), over the local blob store whose signed URLs are served
 * by a real node:http server, as in production: the fake fetches the input and uploads the
 * output through them. Each failure mode ends in a success after retries or a ProviderFailure,
 * within a bounded time; interruption (a lost lease, shutdown) cancels the remote job.
 *
 * Timings are shrunk (poll 20 ms, per-call timeout 250 ms, retries from 10 ms within 2 s); the
 * waits are real time.
 */
import * as Fs from "node:fs/promises"
import { createServer } from "node:http"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, ConfigProvider, Context, Effect, Exit, Fiber, Layer, Logger, LogLevel, ManagedRuntime, Option, Redacted, Stream } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { makeHttpProviderService, makeRoutingProviderService, outputBound, parseRetryAfter } from "../../../adapters/http-provider/index.js"
import type { HttpProviderOptions } from "../../../adapters/http-provider/provider.js"
import { LocalStorageConfig, localStorageRouter, layerLocalStorage } from "../../../adapters/local-storage/index.js"
import { resolveConfig } from "../../../adapters/local-storage/config.js"
import { loadGpuProviderConfig } from "../../../apps/runtime/config.js"
import { configuredRunners } from "../../../apps/runtime/layers.js"
import { DEFAULT_MODEL_DEFINITIONS, DENOISE_PRO, makeCatalog, ModelCatalog, RNNOISE } from "../../../core/domain/catalog.js"
import { BlobStore } from "../../../core/ports/blob-store.js"
import { DenoiseProvider, type DenoiseRequest, ProviderFailure } from "../../../core/ports/denoise-provider.js"
import { bytes, readAll } from "../../contracts/blob-store.js"
import { type FakeGpuOptions, type FakeGpuProvider, SAMPLE_MP3, startFakeGpuProvider, times } from "../../support/fake-gpu-provider.js"

class StorageRoot extends Context.Tag("test/StorageRoot")<StorageRoot, string>() {}

/** The local store in a temp folder, its `/storage/*` URLs served on a random port of 127.0.0.1. */
const StorageLive: Layer.Layer<BlobStore | StorageRoot> = Layer.unwrapScoped(Effect.gen(function*() {
  const rootDir = yield* Effect.acquireRelease(
    Effect.promise(() => Fs.mkdtemp(NodePath.join(Os.tmpdir(), "hush-gpu-"))),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )
  const server = yield* NodeHttpServer.make(() => createServer(), { port: 0, host: "127.0.0.1" }).pipe(Effect.orDie)
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const options = { rootDir, publicBaseUrl: `http://127.0.0.1:${server.address.port}`, signingSecret: "gpu-test-secret" }
  yield* server.serve(localStorageRouter).pipe(Effect.provideService(LocalStorageConfig, resolveConfig(options)))
  return Layer.merge(layerLocalStorage(options), Layer.succeed(StorageRoot, rootDir))
}))

let runtime: ManagedRuntime.ManagedRuntime<BlobStore | StorageRoot, never>
beforeAll(async () => {
  runtime = ManagedRuntime.make(StorageLive.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.None))))
  await runtime.runPromise(Effect.void)
})
afterAll(async () => {
  await runtime.dispose()
})

const fakes: Array<FakeGpuProvider> = []
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close()
})
const startFake = async (options: FakeGpuOptions = {}) => {
  const fake = await startFakeGpuProvider(options)
  fakes.push(fake)
  return fake
}

const FAST = {
  pollIntervalMs: 20,
  requestTimeoutMs: 250,
  deadlineMs: 8_000,
  retry: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 100, budgetMs: 2_000 }
} satisfies Partial<HttpProviderOptions>

const INPUT = bytes(30_000, 5)
let sequence = 0

/** A request for a fresh job whose input object is stored; `progress` collects what it reports. */
const newRequest = async () => {
  const jobId = `job_gputest${++sequence}${Date.now().toString(36)}`
  const progress: Array<number> = []
  const request: DenoiseRequest = {
    jobId,
    model: DENOISE_PRO.id,
    inputKey: `inputs/${jobId}.wav`,
    outputKey: `outputs/${jobId}.mp3`,
    bitrateKbps: 192,
    durationSeconds: 12,
    strength: null,
    format: "mp3",
    loudness: null,
    onProgress: (fraction) => Effect.sync(() => void progress.push(fraction))
  }
  await runtime.runPromise(Effect.flatMap(BlobStore, (store) =>
    store.write(request.inputKey, Stream.make(INPUT), { contentType: "audio/wav" })))
  return { request, progress }
}

const providerFor = (fake: FakeGpuProvider, options: Partial<HttpProviderOptions> = {}) =>
  runtime.runPromise(makeHttpProviderService({ baseUrl: fake.url, token: fake.token, ...FAST, ...options }))

/** Runs one request to its end; times it. */
const denoiseWith = async (fake: FakeGpuProvider, options: Partial<HttpProviderOptions> = {}) => {
  const provider = await providerFor(fake, options)
  const { request, progress } = await newRequest()
  const started = Date.now()
  const exit = await runtime.runPromise(Effect.exit(provider.denoise(request)))
  return { exit, elapsedMs: Date.now() - started, request, progress, provider }
}

const failureOf = (exit: Exit.Exit<unknown, ProviderFailure>): ProviderFailure => {
  if (Exit.isSuccess(exit)) throw new Error("expected a ProviderFailure, got a success")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a ProviderFailure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

const storedOutput = (key: string) =>
  runtime.runPromise(Effect.flatMap(BlobStore, (store) => store.stat(key)))

const expectOutput = async (result: Awaited<ReturnType<typeof denoiseWith>>) => {
  expect(Exit.isSuccess(result.exit), Exit.isFailure(result.exit) ? Cause.pretty(result.exit.cause) : "").toBe(true)
  // INPUT is no audio, so its levels cannot be measured: no report (the report over HTTP: http-provider-e2e)
  if (Exit.isSuccess(result.exit)) expect(result.exit.value).toEqual({ sizeBytes: SAMPLE_MP3.length, report: null })
  expectSameBytes(await runtime.runPromise(readAll(result.request.outputKey)), SAMPLE_MP3)
}

const expectSameBytes = (actual: Uint8Array, expected: Uint8Array) =>
  expect(Buffer.from(actual).equals(Buffer.from(expected)), `${actual.length} bytes vs ${expected.length}`).toBe(true)

const expectNoOutput = async (key: string) => expect(await storedOutput(key)).toEqual(Option.none())

/** Polls a condition of the fake (up to 5 s). */
const until = async (condition: () => boolean) => {
  const started = Date.now()
  while (!condition()) {
    if (Date.now() - started > 5_000) throw new Error("gave up waiting")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("HTTP GPU provider: a well-behaved host", () => {
  it("submits with the job id as idempotency key, the token and signed URLs; polls; stores the MP3", async () => {
    const fake = await startFake({ workMs: 120 })
    const result = await denoiseWith(fake)
    await expectOutput(result)
    const { request } = result
    expect(fake.submissions).toHaveLength(1)
    const [submitted] = fake.submissions
    expect(submitted.key).toBe(request.jobId)
    expect(submitted.status).toBe(201)
    expect(submitted.body).toMatchObject({
      model: "hush/denoise-pro",
      input: { duration_seconds: 12 },
      output: { method: "PUT", headers: { "Content-Type": "audio/mpeg" }, format: "mp3", bitrate_kbps: 192, max_bytes: outputBound(request) }
    })
    expect(Date.parse(submitted.body.expires_at)).toBeGreaterThan(Date.now())
    for (const sent of fake.requests) {
      expect(sent.authorization).toBe(`Bearer ${fake.token}`)
      expect(sent.protocol).toBe("1")
    }
    // the host read the input through its signed URL, byte for byte
    expect(fake.inputs).toHaveLength(1)
    expectSameBytes(fake.inputs[0].bytes, INPUT)
    expect(fake.outputs).toEqual([expect.objectContaining({ status: 200, sizeBytes: SAMPLE_MP3.length })])
    // progress came from the polls, rising
    expect(result.progress).toContain(0.5)
    expect([...result.progress].sort()).toEqual(result.progress)
    expect(fake.count("poll")).toBeGreaterThanOrEqual(2)
    expect(fake.cancels).toEqual([])
  })

  it("its URLs are its only access: another token is refused (401) at once, a ProviderFailure", async () => {
    const fake = await startFake({ token: "the-right-token" })
    const result = await denoiseWith(fake, { token: Redacted.make("a-wrong-token") })
    const failure = failureOf(result.exit)
    expect(failure.retryable).toBe(false)
    expect(failure.message).toMatch(/submit failed: HTTP 401/)
    expect(failure.message).not.toContain("a-wrong-token")
    expect(fake.count("submit")).toBe(1)
    await expectNoOutput(result.request.outputKey)
  })
})

describe("HTTP GPU provider: failures that pass are retried", () => {
  it.each([
    ["503, 502 on submit", { submit: [{ kind: "status", status: 503 }, { kind: "status", status: 502 }] }, "submit", 3],
    ["500 on polls", { poll: times(3, { kind: "status", status: 500 }) }, "poll", 0],
    ["a malformed JSON answer", { poll: [{ kind: "malformed" }] }, "poll", 0],
    ["an answer of another shape", { submit: [{ kind: "wrong-shape" }] }, "submit", 2],
    ["a dropped connection", { submit: [{ kind: "reset" }], poll: [{ kind: "reset" }] }, "submit", 2],
    ["a 408", { poll: [{ kind: "status", status: 408 }] }, "poll", 0]
  ] as const)("%s → success", async (_, faults, endpoint, calls) => {
    const fake = await startFake({ faults })
    const result = await denoiseWith(fake)
    await expectOutput(result)
    if (calls > 0) expect(fake.count(endpoint)).toBe(calls)
    // well inside the deadline (8 s): the retries did not wait it out
    expect(result.elapsedMs).toBeLessThan(FAST.deadlineMs / 2)
  })

  it("429 with Retry-After: waits as long as asked (not the 10 ms backoff), then succeeds", async () => {
    const fake = await startFake({ faults: { submit: [{ kind: "status", status: 429, retryAfter: "1" }] } })
    const result = await denoiseWith(fake)
    await expectOutput(result)
    expect(fake.count("submit")).toBe(2)
    expect(result.elapsedMs).toBeGreaterThanOrEqual(950)
  })

  it("429 with Retry-After as an HTTP date is honoured too", async () => {
    const at = new Date(Date.now() + 1_500).toUTCString()
    const fake = await startFake({ faults: { poll: [{ kind: "status", status: 429, retryAfter: at }] } })
    const result = await denoiseWith(fake)
    await expectOutput(result)
    expect(result.elapsedMs).toBeGreaterThanOrEqual(400)
  })

  it("an answer slower than the per-call timeout is abandoned and retried; the idempotency key keeps one remote job", async () => {
    const fake = await startFake({ faults: { submit: [{ kind: "slow", delayMs: 3_000 }], poll: [{ kind: "slow", delayMs: 3_000 }] } })
    const result = await denoiseWith(fake)
    await expectOutput(result)
    // the slow submit was handled by the host: the retry found its job (200), no second job
    expect(fake.submissions.map((s) => s.status)).toEqual([201, 200])
    expect(new Set(fake.submissions.map((s) => s.jobId)).size).toBe(1)
    expect(fake.jobs.size).toBe(1)
    expect(result.elapsedMs).toBeLessThan(3_000) // waiting out both slow answers would take 6 s
  })

  it("a job the host forgets (404 on poll) is submitted again with the same key, once", async () => {
    const fake = await startFake({ workMs: 200, faults: { poll: [{ kind: "forget" }] } })
    const result = await denoiseWith(fake)
    await expectOutput(result)
    expect(fake.submissions.map((s) => [s.key, s.status])).toEqual([[result.request.jobId, 201], [result.request.jobId, 201]])
    expect(fake.cancels).toEqual([])
  })
})

describe("HTTP GPU provider: failures that do not pass are a ProviderFailure, in bounded time", () => {
  it("5xx on every try: gives up after maxAttempts", async () => {
    const fake = await startFake({ faults: { submit: times(10, { kind: "status", status: 503 }) } })
    const result = await denoiseWith(fake)
    const failure = failureOf(result.exit)
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure.message).toMatch(/submit failed: HTTP 503.*after 4 attempts/)
    expect(failure.retryable).toBe(true)
    expect(fake.count("submit")).toBe(4)
    expect(result.elapsedMs).toBeLessThan(FAST.retry.budgetMs) // the backoff stays within its bounds
    await expectNoOutput(result.request.outputKey)
  })

  it("a Retry-After beyond the retry budget: gives up at once rather than wait", async () => {
    const fake = await startFake({ faults: { submit: [{ kind: "status", status: 429, retryAfter: "120" }] } })
    const result = await denoiseWith(fake)
    expect(failureOf(result.exit).message).toMatch(/HTTP 429.*asked to wait 120 s.*retry budget/)
    expect(fake.count("submit")).toBe(1)
    expect(result.elapsedMs).toBeLessThan(20_000) // not the 120 s asked for
  })

  it("retries stop at the retry budget even when attempts remain", async () => {
    const fake = await startFake({ faults: { submit: times(10, { kind: "status", status: 503 }) } })
    const result = await denoiseWith(fake, { retry: { maxAttempts: 100, baseDelayMs: 100, maxDelayMs: 400, budgetMs: 1_000 } })
    expect(failureOf(result.exit).message).toMatch(/retry budget 1000 ms/)
    expect(result.elapsedMs).toBeLessThan(10_000) // 100 attempts at up to 400 ms apart would take 40 s
  })

  it("answers always slower than the timeout: gives up, and cancels the job it could not follow", async () => {
    const fake = await startFake({ faults: { poll: times(10, { kind: "slow", delayMs: 2_000 }) } })
    const result = await denoiseWith(fake)
    expect(failureOf(result.exit).message).toMatch(/poll failed: no answer within 250 ms \(after 4 attempts\)/)
    expect(result.elapsedMs).toBeLessThan(6_000) // not 4 × 2 s: each try was abandoned at 250 ms
    expect(fake.cancels).toEqual([fake.submissions[0].jobId])
  })

  it("malformed JSON on every try: a ProviderFailure (not worth another try), the job canceled", async () => {
    const fake = await startFake({ faults: { poll: times(10, { kind: "malformed" }) } })
    const result = await denoiseWith(fake)
    const failure = failureOf(result.exit)
    expect(failure.message).toMatch(/not JSON.*after 4 attempts/)
    expect(failure.retryable).toBe(false)
    expect(fake.cancels).toHaveLength(1)
  })

  it("nobody listening: connection errors, retried, then a ProviderFailure", async () => {
    const fake = await startFake()
    const url = fake.url
    await fake.close()
    fakes.splice(fakes.indexOf(fake), 1)
    const provider = await runtime.runPromise(makeHttpProviderService({ baseUrl: url, token: "t", ...FAST }))
    const { request } = await newRequest()
    const started = Date.now()
    const exit = await runtime.runPromise(Effect.exit(provider.denoise(request)))
    const failure = failureOf(exit)
    expect(failure.message).toMatch(/cannot reach the GPU provider.*after 4 attempts/)
    expect(failure.retryable).toBe(true)
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it.each([
    ["400", 400],
    ["422", 422],
    ["404 on submit", 404]
  ])("a %s refusal is not retried", async (_, status) => {
    const fake = await startFake({ faults: { submit: [{ kind: "status", status, body: JSON.stringify({ error: { message: "model 'hush/denoise-pro' unknown here" } }) }] } })
    const result = await denoiseWith(fake)
    const failure = failureOf(result.exit)
    expect(failure.retryable).toBe(false)
    expect(failure.message).toBe(`GPU provider submit failed: HTTP ${status}: model 'hush/denoise-pro' unknown here`)
    expect(fake.count("submit")).toBe(1)
  })

  it("a job the host forgets twice fails", async () => {
    const fake = await startFake({ workMs: 400, faults: { poll: [{ kind: "forget" }, { kind: "forget" }] } })
    const result = await denoiseWith(fake)
    expect(failureOf(result.exit).message).toBe("the GPU provider lost the job twice")
    expect(fake.count("submit")).toBe(2)
    expect(fake.cancels).toEqual([])
  })

  it("the host fails the job: its message, not retryable, no output", async () => {
    const fake = await startFake({ outcome: "fail", failMessage: "CUDA out of memory" })
    const result = await denoiseWith(fake)
    const failure = failureOf(result.exit)
    expect(failure).toMatchObject({ message: "the GPU provider failed the job: CUDA out of memory", retryable: false })
    expect(fake.cancels).toEqual([])
    await expectNoOutput(result.request.outputKey)
  })

  it.each([
    ["with an ETag of nothing uploaded", "no-output", /wrote no output \(its upload could not be completed\)/],
    ["with no output at all", "no-etag", /wrote no output \(no output ETag\)/],
    ["after uploading 0 bytes", "empty-output", /wrote no output \(the output is empty\)/]
  ] as const)("success reported %s: 'provider reported success but wrote no output'", async (_, outcome, message) => {
    const fake = await startFake({ outcome })
    const result = await denoiseWith(fake)
    const failure = failureOf(result.exit)
    expect(failure.message).toMatch(/^the GPU provider reported success but wrote no output/)
    expect(failure.message).toMatch(message)
    await expectNoOutput(result.request.outputKey)
  })

  it("past the deadline: canceled, a ProviderFailure", async () => {
    const fake = await startFake({ outcome: "hang" })
    const result = await denoiseWith(fake, { deadlineMs: 400 })
    expect(failureOf(result.exit).message).toBe("the GPU provider did not finish the job within 400 ms")
    expect(result.elapsedMs).toBeLessThan(FAST.deadlineMs) // the 400 ms deadline, not the default
    expect(fake.cancels).toEqual([fake.submissions[0].jobId])
  })
})

describe("HTTP GPU provider: interruption", () => {
  it("interrupted (lease lost, shutdown) while the host runs it: cancel sent, promptly", async () => {
    const fake = await startFake({ outcome: "hang" })
    const provider = await providerFor(fake)
    const { request } = await newRequest()
    const fiber = runtime.runFork(provider.denoise(request))
    await until(() => [...fake.jobs.values()].some((job) => job.key === request.jobId && job.status === "running"))
    const started = Date.now()
    await runtime.runPromise(Fiber.interrupt(fiber))
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(fake.cancels).toEqual([fake.submissions[0].jobId])
    expect(fake.jobs.get(fake.submissions[0].jobId)).toMatchObject({ status: "failed", canceled: true })
    // the next attempt of the job submits again under the same key: the canceled job freed it
    fake.configure({})
    const again = await runtime.runPromise(Effect.exit(provider.denoise(request)))
    expect(Exit.isSuccess(again)).toBe(true)
    expect(fake.submissions.map((s) => s.status)).toEqual([201, 201])
  })

  it("a cancel that does not arrive leaves the host's job running: the next attempt adopts it and its upload", async () => {
    const fake = await startFake({ outcome: "hang", faults: { cancel: [{ kind: "reset" }] } })
    const provider = await providerFor(fake)
    const { request } = await newRequest()
    const fiber = runtime.runFork(provider.denoise(request))
    await until(() => [...fake.jobs.values()].some((job) => job.key === request.jobId && job.status === "running"))
    await runtime.runPromise(Fiber.interrupt(fiber))
    expect(fake.count("cancel")).toBe(1)
    const first = fake.submissions[0]
    const job = fake.jobs.get(first.jobId)!
    expect(job.status).toBe("running")
    // attempt 2 submits under the same key: the host answers with the job it has (200)
    const second = runtime.runFork(provider.denoise(request))
    await until(() => fake.submissions.length === 2)
    // the host finishes it, uploading where it was told first, and says so
    const put = await fetch(first.body.output.url, { method: "PUT", headers: first.body.output.headers, body: SAMPLE_MP3 })
    expect(put.status).toBe(200)
    Object.assign(job, { status: "succeeded", progress: 1, output: { etag: put.headers.get("etag"), ref: first.body.output.ref } })
    const exit = await runtime.runPromise(Fiber.await(second))
    expect(Exit.isSuccess(exit), Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toBe(true)
    expect(fake.submissions.map((s) => [s.status, s.jobId])).toEqual([[201, first.jobId], [200, first.jobId]])
    // attempt 2 opened an upload of its own; the object is the one completed from attempt 1's
    expect(fake.submissions[1].body.output.ref).not.toBe(first.body.output.ref)
    expectSameBytes(await runtime.runPromise(readAll(request.outputKey)), SAMPLE_MP3)
  })
})

describe("routing and configuration", () => {
  const member = (runner: string, seen: Array<string>): DenoiseProvider["Type"] => ({
    providers: [runner],
    denoise: (request) => Effect.sync(() => (seen.push(`${runner}:${request.model}`), { sizeBytes: 1 }))
  })
  const request = (model: string): DenoiseRequest => ({
    jobId: "job_x", model, inputKey: "inputs/x", outputKey: "outputs/x.mp3", bitrateKbps: 192, durationSeconds: 1,
    strength: null, format: "mp3", loudness: null, onProgress: () => Effect.void
  })

  it("sends each model to the provider of its runner; providers is the union", async () => {
    const seen: Array<string> = []
    const router = await Effect.runPromise(makeRoutingProviderService([member("builtin", seen), member("gpu", seen)]).pipe(
      Effect.provideService(ModelCatalog, makeCatalog(DEFAULT_MODEL_DEFINITIONS, ["builtin", "gpu"]))
    ))
    expect(router.providers).toEqual(["builtin", "gpu"])
    await Effect.runPromise(router.denoise(request(RNNOISE.id)))
    await Effect.runPromise(router.denoise(request(DENOISE_PRO.id)))
    expect(seen).toEqual(["builtin:xiph/rnnoise", "gpu:hush/denoise-pro"])
    const unknown = await Effect.runPromise(Effect.flip(router.denoise(request("acme/nothing"))))
    expect(unknown).toMatchObject({ _tag: "ProviderFailure", retryable: false })
  })

  it("the GPU model is retired unless its runner is configured", () => {
    const find = (runners: Array<string>) => makeCatalog(DEFAULT_MODEL_DEFINITIONS, runners).models.find((m) => m.id === DENOISE_PRO.id)
    expect(find(["builtin"])?.status).toBe("retired")
    expect(find(["builtin", "gpu"])?.status).toBe("live")
    expect(DENOISE_PRO).toMatchObject({ runner: "gpu", pricing: { unitPriceMicros: 300, minUnits: 10, pricingVersion: 1 }, output: { format: "mp3", bitrateKbps: 192 } })
  })

  const load = (env: Record<string, string>) =>
    Effect.runPromise(Effect.either(loadGpuProviderConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))))

  it("GPU_PROVIDER_URL configures it (token required, name default gpu); the runners follow", async () => {
    expect(await load({})).toMatchObject({ _tag: "Right", right: undefined })
    expect(await load({ GPU_PROVIDER_URL: "  " })).toMatchObject({ _tag: "Right", right: undefined })
    const loaded = await load({ GPU_PROVIDER_URL: "https://gpu.example/", GPU_PROVIDER_TOKEN: "s3cret", GPU_PROVIDER_POLL_MS: "500" })
    if (loaded._tag !== "Right" || loaded.right === undefined) throw new Error("expected a configuration")
    expect(loaded.right).toMatchObject({ name: "gpu", url: "https://gpu.example/", pollIntervalMs: 500, deadlineMs: undefined })
    expect(Redacted.value(loaded.right.token)).toBe("s3cret")
    expect(String(loaded.right.token)).not.toContain("s3cret")
    const base = { port: 1, dataDir: "/tmp", publicBaseUrl: "http://x", env: "test", store: "memory", databaseUrl: Option.none(), blobStore: "local", redisUrl: Option.none() } as const
    expect(configuredRunners(base)).toEqual(["builtin"])
    expect(configuredRunners({ ...base, gpuProvider: loaded.right })).toEqual(["builtin", "gpu"])
    const named = await load({ GPU_PROVIDER_URL: "http://10.0.0.5:9000", GPU_PROVIDER_TOKEN: "t", GPU_PROVIDER_NAME: "lambda" })
    expect(named).toMatchObject({ _tag: "Right", right: { name: "lambda" } })
  })

  it.each([
    ["no token", { GPU_PROVIDER_URL: "https://gpu.example" }],
    ["an empty token", { GPU_PROVIDER_URL: "https://gpu.example", GPU_PROVIDER_TOKEN: " " }],
    ["not a URL", { GPU_PROVIDER_URL: "gpu.example", GPU_PROVIDER_TOKEN: "t" }],
    ["the builtin name", { GPU_PROVIDER_URL: "https://gpu.example", GPU_PROVIDER_TOKEN: "t", GPU_PROVIDER_NAME: "builtin" }],
    ["a bad poll interval", { GPU_PROVIDER_URL: "https://gpu.example", GPU_PROVIDER_TOKEN: "t", GPU_PROVIDER_POLL_MS: "0" }]
  ])("refuses %s", async (_, env) => {
    expect((await load(env))._tag).toBe("Left")
  })

  it("Retry-After: seconds or an HTTP date", () => {
    const now = Date.parse("2030-01-01T00:00:00Z")
    expect(parseRetryAfter("3", now)).toBe(3_000)
    expect(parseRetryAfter("Tue, 01 Jan 2030 00:00:05 GMT", now)).toBe(5_000)
    expect(parseRetryAfter("Mon, 31 Dec 2029 00:00:00 GMT", now)).toBe(0)
    expect(parseRetryAfter("soon", now)).toBeUndefined()
    expect(parseRetryAfter(null, now)).toBeUndefined()
  })

  it("the output bound leaves room for the MP3 and stays within one upload part", () => {
    expect(outputBound({ durationSeconds: 12, bitrateKbps: 192 })).toBeGreaterThan(12 * 24_000)
    expect(outputBound({ durationSeconds: 0, bitrateKbps: 192 })).toBe(1024 * 1024)
    expect(outputBound({ durationSeconds: 1e9, bitrateKbps: 320 })).toBe(5 * 1024 ** 3)
  })
})
