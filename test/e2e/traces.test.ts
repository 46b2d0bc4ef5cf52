/**
 * Traces (issue 15): an OTLP/HTTP receiver in the test collects what the server exports; one
 * job creation (under an inbound W3C traceparent) and one job run are checked: span names,
 * parent-child links, attributes. Without OTEL_EXPORTER_OTLP_ENDPOINT no tracer is installed.
 */
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadObservabilityConfig } from "../../apps/runtime/observability.js"
import { layerTracing } from "../../apps/runtime/tracing.js"
import { recordedSpan } from "../../core/observability/spans.js"
import { startFakeGpuProvider } from "../support/fake-gpu-provider.js"
import { freePort, startTestServer, type TestServer } from "../support/server.js"
import { createFile, denoise, readyFile, sleep, tone, waitForJob } from "./helpers.js"

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: Record<string, unknown>
  readonly start: bigint
  readonly end: bigint
}

const received: Array<Span> = []
let receiver: Server
let endpoint = ""

const valueOf = (value: Record<string, unknown>) => {
  const found = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue
  // OTLP/JSON writes 64-bit integers as strings
  return value.intValue !== undefined ? Number(found) : found
}

beforeAll(async () => {
  const port = await freePort()
  receiver = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      if (request.url === "/v1/traces") {
        const json = JSON.parse(body)
        for (const resource of json.resourceSpans ?? []) {
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              received.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                attributes: Object.fromEntries((span.attributes ?? []).map((a: any) => [a.key, valueOf(a.value)])),
                start: BigInt(span.startTimeUnixNano),
                end: BigInt(span.endTimeUnixNano)
              })
            }
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
  })
  await new Promise<void>((resolve) => receiver.listen(port, "127.0.0.1", resolve))
  endpoint = `http://127.0.0.1:${port}`
})

afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

const waitForSpan = async (find: (span: Span) => boolean, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const span = received.find(find)
    if (span !== undefined) return span
    if (Date.now() > deadline) throw new Error(`no such span among ${received.map((s) => s.name).join(", ")}`)
    await sleep(100)
  }
}

describe("traces over OTLP/HTTP", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ worker: true, workerOptions: { pollInterval: "50 millis" }, observability: { otlpEndpoint: Option.some(endpoint) } })
  }, 60_000)
  afterAll(() => server?.close())

  it("a job creation under the caller's traceparent, and the job's run", async () => {
    const { liveKey } = await server.createAccount(5_000_000)
    const fileId = await readyFile(server, liveKey, tone(1))
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const callerSpan = "00f067aa0ba902b7"
    const created = await denoise(server, liveKey, { file: fileId }, { traceparent: `00-${traceId}-${callerSpan}-01` })
    expect(created.status, created.text).toBe(202)
    const requestId = created.headers.get("x-request-id")

    const request = await waitForSpan((s) => s.name === "POST /v1/audio/denoise" && s.traceId === traceId)
    expect(request.parentSpanId).toBe(callerSpan)
    expect(request.attributes["hush.request_id"]).toBe(requestId)
    expect(request.attributes["hush.account_id"]).toMatch(/^acct_/)
    expect(request.attributes["http.route"]).toBe("/v1/audio/denoise")
    expect(request.attributes["http.request.header.authorization"]).toBe("<redacted>")
    const useCase = await waitForSpan((s) => s.name === "createDenoiseJob" && s.traceId === traceId)
    expect(useCase.attributes["hush.account_id"]).toBe(request.attributes["hush.account_id"])
    // the use case runs under the request (through the edge's middleware spans, if any)
    const ancestors = (span: Span): Array<string> => {
      const parent = received.find((s) => s.spanId === span.parentSpanId)
      return parent === undefined ? [] : [parent.spanId, ...ancestors(parent)]
    }
    expect(ancestors(useCase)).toContain(request.spanId)

    const job = await waitForJob(server, liveKey, created.json.id)
    expect(job.json.status, job.text).toBe("succeeded")
    const run = await waitForSpan((s) => s.name === "runJob" && s.attributes["hush.job_id"] === created.json.id)
    expect(run.parentSpanId).toBeUndefined()
    expect(run.attributes["hush.account_id"]).toBe(request.attributes["hush.account_id"])
    expect(run.attributes["hush.model"]).toBe(created.json.model)
    const finish = await waitForSpan((s) => s.name === "job.finish" && s.traceId === run.traceId)
    expect(finish.parentSpanId).toBe(run.spanId)
    expect(finish.attributes["hush.outcome"]).toBe("succeeded")

    // the steps: children of the run, each once, carrying the job and what it handled
    const step = async (name: string) => {
      const span = await waitForSpan((s) => s.name === name && s.traceId === run.traceId)
      expect(received.filter((s) => s.name === name && s.traceId === run.traceId), name).toHaveLength(1)
      expect(span.parentSpanId, name).toBe(run.spanId)
      expect(span.attributes["hush.job_id"], name).toBe(created.json.id)
      expect(span.attributes["hush.model"], name).toBe(created.json.model)
      expect(span.start >= run.start && span.end <= run.end, `${name} within the run`).toBe(true)
      return span
    }
    const decode = await step("job.decode")
    const denoised = await step("job.denoise")
    const encode = await step("job.encode")
    const upload = await step("job.upload")
    for (const span of [decode, denoised, encode]) expect(span.attributes["hush.audio_seconds"], span.name).toBeCloseTo(1, 1)
    expect(decode.attributes["hush.channels"]).toBe(1)
    expect(denoised.attributes["hush.channels"]).toBe(1)
    // decoded at the input's rate (8 kHz here); denoised and fed to the encoder at 48 kHz
    expect(decode.attributes["hush.sample_rate"]).toBe(8_000)
    expect(decode.attributes["hush.pcm_bytes"]).toBe(Number(decode.attributes["hush.audio_seconds"]) * 8_000 * 4)
    expect(encode.attributes["hush.pcm_bytes"]).toBe(Number(encode.attributes["hush.audio_seconds"]) * 48_000 * 4)
    expect(encode.attributes["hush.format"]).toBe("mp3")
    expect(upload.attributes["hush.format"]).toBe("mp3")
    expect(upload.attributes["hush.bytes"]).toBe(job.json.output.size_bytes)
    // one pulled stream: the encoder starts, then the first frame is denoised before the
    // decoder's last byte, and the encoder's output ends after the last denoised frame; all
    // of it inside the output's put, which pulls it
    expect(encode.start).toBeLessThan(denoised.start)
    expect(denoised.start).toBeLessThan(decode.end)
    expect(denoised.end).toBeLessThanOrEqual(encode.end)
    for (const span of [decode, denoised, encode]) {
      expect(span.start >= upload.start && span.end <= upload.end, `${span.name} within the upload`).toBe(true)
    }
    // the storage calls of the run: the input's read under the decode, the output's put under the upload
    const read = await waitForSpan((s) => s.name === "BlobStore.read" && s.traceId === run.traceId)
    expect(read.parentSpanId).toBe(decode.spanId)
    const write = await waitForSpan((s) => s.name === "BlobStore.write" && s.traceId === run.traceId)
    expect(write.parentSpanId).toBe(upload.spanId)
  }, 60_000)
})

describe("traces into the GPU provider", () => {
  it("each call to the provider carries the job run's traceparent, under a client span", async () => {
    const fake = await startFakeGpuProvider()
    const server = await startTestServer({
      worker: true,
      workerOptions: { pollInterval: "50 millis" },
      observability: { otlpEndpoint: Option.some(endpoint) },
      gpuProvider: { name: "gpu", url: fake.url, token: Redacted.make(fake.token), pollIntervalMs: 50, deadlineMs: 10_000 }
    })
    try {
      const { liveKey } = await server.createAccount(50_000_000)
      const fileId = await readyFile(server, liveKey, tone(1))
      const created = await denoise(server, liveKey, { file: fileId, model: "hush/denoise-pro" })
      expect(created.status, created.text).toBe(202)
      expect((await waitForJob(server, liveKey, created.json.id)).json.status).toBe("succeeded")
      const run = await waitForSpan((s) => s.name === "runJob" && s.attributes["hush.job_id"] === created.json.id)
      const submit = fake.requests.find((r) => r.endpoint === "submit")
      expect(submit?.traceparent).toMatch(new RegExp(`^00-${run.traceId}-[0-9a-f]{16}-01$`))
      const clientSpanId = submit!.traceparent!.split("-")[2]!
      const client = await waitForSpan((s) => s.spanId === clientSpanId)
      expect(client.name).toBe("gpu_provider POST")
      expect(client.traceId).toBe(run.traceId)

      // the steps this worker sees: submit, wait (the host decodes, denoises, encodes and puts), upload completed
      const step = async (name: string) => {
        const span = await waitForSpan((s) => s.name === name && s.traceId === run.traceId)
        expect(span.parentSpanId, name).toBe(run.spanId)
        expect(span.attributes["hush.job_id"], name).toBe(created.json.id)
        expect(span.attributes["hush.model"], name).toBe("hush/denoise-pro")
        return span
      }
      const submitted = await step("job.submit")
      expect(client.parentSpanId).toBe(submitted.spanId)
      expect(submitted.attributes["hush.remote_job_id"]).toEqual(expect.any(String))
      const waited = await step("job.wait")
      expect(waited.attributes["hush.audio_seconds"]).toBeCloseTo(1, 1)
      expect(waited.attributes["hush.polls"]).toBe(fake.requests.filter((r) => r.endpoint === "poll").length)
      expect(waited.start).toBeGreaterThanOrEqual(submitted.end)
      const uploaded = await step("job.upload")
      expect(uploaded.start).toBeGreaterThanOrEqual(waited.end)
      const job = await waitForJob(server, liveKey, created.json.id)
      expect(uploaded.attributes["hush.bytes"]).toBe(job.json.output.size_bytes)
    } finally {
      await server.close()
      await fake.close()
    }
  }, 60_000)
})

describe("without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("tracing is off: spans are no-ops, none is current, none propagates", async () => {
    const config = await Effect.runPromise(loadObservabilityConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))))
    expect(Option.isNone(config.otlpEndpoint)).toBe(true)
    const currentInSpan = recordedSpan.pipe(Effect.withSpan("a use case"))
    // Effect's default tracer makes a real span…
    expect(Option.isSome(await Effect.runPromise(currentInSpan))).toBe(true)
    // …which the tracing layer turns off when there is nowhere to send it: a no-op, with no ids to pass on
    expect(Option.isNone(await Effect.runPromise(currentInSpan.pipe(Effect.provide(layerTracing(config, "1.0.0")))))).toBe(true)
  })

  it("a server without it exports nothing", async () => {
    const before = received.length
    const server = await startTestServer()
    try {
      const { liveKey } = await server.createAccount(5_000_000)
      await readyFile(server, liveKey, tone(1))
      await sleep(1_500)
      expect(received.length).toBe(before)
    } finally {
      await server.close()
    }
  })
})

describe("sampling (OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0)", () => {
  it("keeps only the traces a caller marked sampled, each whole; the rest export nothing", async () => {
    const server = await startTestServer({
      observability: { otlpEndpoint: Option.some(endpoint), sampler: { ratio: 0, parentBased: true } }
    })
    try {
      const { liveKey } = await server.createAccount(5_000_000)
      const before = received.length
      const dropped = "0af7651916cd43dd8448eb211c80319c"
      const kept = "b7ad6b7169203331b7ad6b7169203331"
      const file = { filename: "a.wav", size_bytes: 1_000, content_type: "audio/wav" }
      // a new trace (sampled at ratio 0) and a caller's unsampled one: dropped, with their use case and SQL spans
      expect((await createFile(server, liveKey, file)).status).toBe(201)
      expect((await createFile(server, liveKey, file, { traceparent: `00-${dropped}-00f067aa0ba902b7-00` })).status).toBe(201)
      // a caller's sampled trace: kept, children and all
      expect((await createFile(server, liveKey, file, { traceparent: `00-${kept}-00f067aa0ba902b7-01` })).status).toBe(201)
      const request = await waitForSpan((s) => s.name === "POST /v1/files" && s.traceId === kept)
      const useCase = await waitForSpan((s) => s.name === "createFile" && s.traceId === kept)
      expect(useCase.spanId).not.toBe(request.spanId)
      await sleep(1_500)
      const since = received.slice(before)
      expect(since.every((s) => s.traceId === kept)).toBe(true)
      // the kept trace is whole: the request, its use case and the use case's storage call
      expect(since.map((s) => s.name).sort()).toEqual(["BlobStore.createUpload", "POST /v1/files", "createFile"])
    } finally {
      await server.close()
    }
  }, 60_000)
})
