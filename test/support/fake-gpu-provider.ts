/**
 * A fake GPU host speaking docs/gpu-provider-protocol.md on 127.0.0.1 (random port), for tests
 * of adapters/http-provider. Well behaved, it does what a real host does: fetches the signed
 * input URL, then PUTs an MP3 (the shipped sample, assets/test-mode-sample.mp3) to the signed
 * output URL and reports the ETag it was answered with. It can also be told to fail in every
 * way a real one does:
 *
 * - `faults`: per endpoint (`submit`, `poll`, `cancel`), answers used up one per request, in
 *   order, before the normal ones: an HTTP status (5xx, 429 with Retry-After, 4xx), a slow
 *   answer (the request is handled, the answer comes late: past the client's timeout), a 200
 *   whose body is not JSON or not the protocol's, a dropped connection, or (poll) forgetting
 *   the job (404 from then on, its idempotency key forgotten too).
 * - `outcome`: what the job does: `succeed`, `fail` (status failed with an error), `no-output`
 *   (reports success with an ETag but never uploads), `no-etag` (reports success with no
 *   output at all), `empty-output` (uploads 0 bytes), `hang` (runs forever).
 *
 * Everything it sees is recorded (`requests`, `submissions`, `cancels`, `inputs`, `outputs`).
 */
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { TEST_MODE_SAMPLE_PATH } from "../../adapters/ffmpeg/sample.js"
import type { Submission } from "../../adapters/http-provider/protocol.js"

export type Fault =
  | { readonly kind: "status"; readonly status: number; readonly retryAfter?: string; readonly body?: string }
  /** Handles the request normally but answers only after `delayMs`. */
  | { readonly kind: "slow"; readonly delayMs: number }
  /** 200 with a body that is not JSON. */
  | { readonly kind: "malformed" }
  /** 200 with JSON that is not a job. */
  | { readonly kind: "wrong-shape" }
  /** Closes the connection without an answer (and without handling the request). */
  | { readonly kind: "reset" }
  /** Poll only: forgets the job and its idempotency key, then answers 404. */
  | { readonly kind: "forget" }

export type Outcome = "succeed" | "fail" | "no-output" | "no-etag" | "empty-output" | "hang"

export interface FakeGpuOptions {
  /** The bearer token it accepts; others get 401. Default `fake-gpu-token`. */
  readonly token?: string
  readonly outcome?: Outcome
  /** From submission to the job's end (it runs from half of it). Default 100 ms. */
  readonly workMs?: number
  readonly faults?: {
    readonly submit?: ReadonlyArray<Fault>
    readonly poll?: ReadonlyArray<Fault>
    readonly cancel?: ReadonlyArray<Fault>
  }
  /** The error message of a failed job. */
  readonly failMessage?: string
  /** The bytes it uploads as the output. Default: the shipped sample MP3. */
  readonly output?: Uint8Array
}

/** `n` times the same fault. */
export const times = (n: number, fault: Fault): ReadonlyArray<Fault> => Array.from({ length: n }, () => fault)

export const SAMPLE_MP3 = new Uint8Array(readFileSync(TEST_MODE_SAMPLE_PATH))

type Endpoint = "submit" | "poll" | "cancel"

interface FakeJob {
  readonly id: string
  readonly key: string
  readonly submission: Submission
  status: "queued" | "running" | "succeeded" | "failed"
  progress: number
  error: { code: string; message: string } | null
  output: { etag: string | null; ref: string } | null
  canceled: boolean
  readonly timers: Array<NodeJS.Timeout>
}

export interface RecordedRequest {
  readonly endpoint: Endpoint | "other"
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly idempotencyKey: string | undefined
  readonly protocol: string | undefined
  /** W3C trace context the caller sent (set when the caller traces). */
  readonly traceparent: string | undefined
}

export const startFakeGpuProvider = async (initial: FakeGpuOptions = {}) => {
  let options: FakeGpuOptions = initial
  let faults: Record<Endpoint, Array<Fault>> = { submit: [], poll: [], cancel: [] }
  const setFaults = () => {
    faults = {
      submit: [...(options.faults?.submit ?? [])],
      poll: [...(options.faults?.poll ?? [])],
      cancel: [...(options.faults?.cancel ?? [])]
    }
  }
  setFaults()
  const jobs = new Map<string, FakeJob>()
  const keys = new Map<string, string>()
  let nextId = 0
  const requests: Array<RecordedRequest> = []
  const submissions: Array<{ readonly key: string; readonly body: Submission; readonly status: number; readonly jobId: string }> = []
  const cancels: Array<string> = []
  const inputs: Array<{ readonly jobId: string; readonly bytes: Uint8Array; readonly contentDisposition: string | null }> = []
  const outputs: Array<{ readonly jobId: string; readonly status: number; readonly etag: string | null; readonly sizeBytes: number }> = []
  const pending = new Set<AbortController>()
  const timers = new Set<NodeJS.Timeout>()

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      run()
    }, ms)
    timers.add(timer)
    return timer
  }

  const view = (job: FakeJob) => ({
    id: job.id,
    status: job.status,
    progress: job.progress,
    ...(job.error === null ? {} : { error: job.error }),
    ...(job.output === null ? {} : { output: job.output })
  })

  const fail = (job: FakeJob, code: string, message: string) => {
    if (job.canceled || job.status === "succeeded" || job.status === "failed") return
    job.status = "failed"
    job.error = { code, message }
  }

  /** What a real host does once the model has run: fetch the input, upload the output. */
  const finish = async (job: FakeJob) => {
    const outcome = options.outcome ?? "succeed"
    if (outcome === "hang" || job.canceled) return
    if (outcome === "fail") return fail(job, "model_error", options.failMessage ?? "the model crashed on this input")
    const abort = new AbortController()
    pending.add(abort)
    try {
      const input = await fetch(job.submission.input.url, { signal: abort.signal })
      const bytes = new Uint8Array(await input.arrayBuffer())
      inputs.push({ jobId: job.id, bytes, contentDisposition: input.headers.get("content-disposition") })
      if (!input.ok) return fail(job, "input_unreadable", `GET input: HTTP ${input.status}`)
      if (outcome === "no-output") {
        if (!job.canceled) Object.assign(job, { status: "succeeded", progress: 1, output: { etag: "\"0123456789abcdef0123456789abcdef\"", ref: job.submission.output.ref } })
        return
      }
      if (outcome === "no-etag") {
        if (!job.canceled) Object.assign(job, { status: "succeeded", progress: 1 })
        return
      }
      const body = outcome === "empty-output" ? new Uint8Array(0) : (options.output ?? SAMPLE_MP3)
      const put = await fetch(job.submission.output.url, {
        method: job.submission.output.method,
        headers: job.submission.output.headers,
        body,
        signal: abort.signal
      })
      await put.arrayBuffer()
      const etag = put.headers.get("etag")
      outputs.push({ jobId: job.id, status: put.status, etag, sizeBytes: body.length })
      if (!put.ok) return fail(job, "output_refused", `PUT output: HTTP ${put.status}`)
      if (job.canceled) return
      Object.assign(job, { status: "succeeded", progress: 1, output: { etag, ref: job.submission.output.ref } })
    } catch (error) {
      fail(job, "io_error", String(error))
    } finally {
      pending.delete(abort)
    }
  }

  const createJob = (key: string, submission: Submission): FakeJob => {
    const job: FakeJob = {
      id: `gpujob_${++nextId}`,
      key,
      submission,
      status: "queued",
      progress: 0,
      error: null,
      output: null,
      canceled: false,
      timers: []
    }
    jobs.set(job.id, job)
    keys.set(key, job.id)
    const workMs = options.workMs ?? 100
    job.timers.push(later(workMs / 2, () => {
      if (job.status === "queued") Object.assign(job, { status: "running", progress: 0.5 })
    }))
    job.timers.push(later(workMs, () => void finish(job)))
    return job
  }

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return
    const text = typeof body === "string" ? body : JSON.stringify(body)
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
    res.end(text)
  }

  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      let text = ""
      req.setEncoding("utf8")
      req.on("data", (chunk: string) => (text += chunk))
      req.on("end", () => resolve(text))
      req.on("error", reject)
    })

  /** The normal answer of an endpoint: [status, body]. */
  const handle = (endpoint: Endpoint, id: string | undefined, key: string | undefined, text: string): [number, unknown] => {
    switch (endpoint) {
      case "submit": {
        if (key === undefined || key === "") return [400, { error: { code: "invalid_request", message: "Idempotency-Key is required" } }]
        let submission: Submission
        try {
          submission = JSON.parse(text) as Submission
        } catch {
          return [400, { error: { code: "invalid_request", message: "the body is not JSON" } }]
        }
        if (typeof submission?.input?.url !== "string" || typeof submission?.output?.url !== "string") {
          return [422, { error: { code: "invalid_request", message: "input.url and output.url are required" } }]
        }
        const existing = keys.get(key)
        const known = existing === undefined ? undefined : jobs.get(existing)
        // a canceled job frees its key: the same key starts a new job
        if (known !== undefined && !known.canceled) {
          submissions.push({ key, body: submission, status: 200, jobId: known.id })
          return [200, view(known)]
        }
        const job = createJob(key, submission)
        submissions.push({ key, body: submission, status: 201, jobId: job.id })
        return [201, view(job)]
      }
      case "poll": {
        const job = id === undefined ? undefined : jobs.get(id)
        return job === undefined ? [404, { error: { code: "not_found", message: "no such job" } }] : [200, view(job)]
      }
      case "cancel": {
        const job = id === undefined ? undefined : jobs.get(id)
        if (job === undefined) return [404, { error: { code: "not_found", message: "no such job" } }]
        cancels.push(job.id)
        if (job.status === "queued" || job.status === "running") {
          job.canceled = true
          job.status = "failed"
          job.error = { code: "canceled", message: "canceled by the client" }
          for (const timer of job.timers) clearTimeout(timer)
        }
        return [200, view(job)]
      }
    }
  }

  const forget = (id: string | undefined) => {
    const job = id === undefined ? undefined : jobs.get(id)
    if (job === undefined) return
    for (const timer of job.timers) clearTimeout(timer)
    job.canceled = true
    jobs.delete(job.id)
    if (keys.get(job.key) === job.id) keys.delete(job.key)
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://fake")
      const path = url.pathname
      const match = /^\/v1\/jobs\/([^/]+)(\/cancel)?$/.exec(path)
      const endpoint: Endpoint | "other" = req.method === "POST" && path === "/v1/jobs"
        ? "submit"
        : req.method === "GET" && match !== null && match[2] === undefined
        ? "poll"
        : req.method === "POST" && match !== null && match[2] === "/cancel"
        ? "cancel"
        : "other"
      const header = (name: string) => {
        const value = req.headers[name]
        return Array.isArray(value) ? value[0] : value
      }
      const key = header("idempotency-key")
      requests.push({
        endpoint, method: req.method ?? "", path, authorization: header("authorization"), idempotencyKey: key, protocol: header("hush-gpu-protocol"),
        traceparent: header("traceparent")
      })
      const text = await readBody(req)
      if (header("authorization") !== `Bearer ${options.token ?? "fake-gpu-token"}`) {
        return send(res, 401, { error: { code: "unauthorized", message: "bad or missing bearer token" } })
      }
      if (endpoint === "other") return send(res, 404, { error: { code: "not_found", message: "no such endpoint" } })
      const id = match === null ? undefined : decodeURIComponent(match[1])
      const fault = faults[endpoint].shift()
      if (fault !== undefined) {
        switch (fault.kind) {
          case "status":
            return send(res, fault.status, fault.body ?? { error: { code: "fault", message: `injected HTTP ${fault.status}` } },
              fault.retryAfter === undefined ? {} : { "retry-after": fault.retryAfter })
          case "malformed":
            return send(res, 200, "{\"id\": \"gpujob_1\", \"status\": ")
          case "wrong-shape":
            return send(res, 200, { job: "running", percent: 50 })
          case "reset":
            return req.socket.destroy()
          case "forget":
            forget(id)
            return send(res, 404, { error: { code: "not_found", message: "no such job" } })
          case "slow": {
            const [status, body] = handle(endpoint, id, key, text)
            later(fault.delayMs, () => send(res, status, body))
            return
          }
        }
      }
      const [status, body] = handle(endpoint, id, key, text)
      send(res, status, body)
    })().catch((error) => send(res, 500, { error: { code: "fake_error", message: String(error) } }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    get token() {
      return options.token ?? "fake-gpu-token"
    },
    requests,
    submissions,
    cancels,
    inputs,
    outputs,
    jobs,
    /** Requests to one endpoint so far. */
    count: (endpoint: Endpoint) => requests.filter((r) => r.endpoint === endpoint).length,
    /** New behaviour from now on (faults start afresh; jobs and records are kept). */
    configure: (next: FakeGpuOptions) => {
      options = next
      setFaults()
    },
    /** Forgets the records (between tests sharing the fake). */
    clearRecords: () => {
      for (const list of [requests, submissions, cancels, inputs, outputs] as Array<Array<unknown>>) list.splice(0)
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      for (const abort of pending) abort.abort()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export type FakeGpuProvider = Awaited<ReturnType<typeof startFakeGpuProvider>>
