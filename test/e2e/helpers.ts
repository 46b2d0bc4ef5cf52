/**
 * Shared pieces of the end-to-end tests: plain `fetch` calls against a running test server,
 * the RFC 9457 problem check, ffmpeg-made audio fixtures, and the upload flow.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "vitest"
import type { Reachable } from "../support/server.js"
import { jsonOrUndefined } from "../support/json.js"

export interface Reply<T = any> {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: T
}

export interface CallOptions {
  readonly key?: string | undefined
  /** Sent as JSON (`Content-Type: application/json`) unless `raw` is given. */
  readonly body?: unknown
  /** Sent as is. */
  readonly raw?: string | Uint8Array
  readonly headers?: Record<string, string>
}

export const call = async (server: Reachable, method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
  const headers: Record<string, string> = {}
  if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
  let body: string | Uint8Array | undefined
  if (options.raw !== undefined) body = options.raw
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers["content-type"] = "application/json"
  }
  Object.assign(headers, options.headers)
  const url = path.startsWith("http") ? path : `${server.baseUrl}${path}`
  const response = await fetch(url, { method, headers, body })
  const text = await response.text()
  const json: unknown = jsonOrUndefined(text)
  return { status: response.status, headers: response.headers, text, json }
}

/** The error page behind each problem `type`, fetched once per code and server. */
const checkedTypes = new Set<string>()

/**
 * An RFC 9457 problem of the spec's shape: `application/problem+json`, `type` =
 * `{base}/errors/<code>` (and that page answers 200 HTML), title, status, detail, code, and
 * `request_id` equal to the `X-Request-Id` header.
 */
export const expectProblem = async (server: Reachable, reply: Reply, status: number, code: string) => {
  expect({ status: reply.status, code: reply.json?.code }, reply.text).toEqual({ status, code })
  expect(reply.headers.get("content-type")).toMatch(/^application\/problem\+json/)
  const problem = reply.json
  expect(problem.type).toBe(`${server.baseUrl}/errors/${code}`)
  expect(problem.status).toBe(status)
  expect(typeof problem.title).toBe("string")
  expect(problem.title.length).toBeGreaterThan(0)
  expect(typeof problem.detail).toBe("string")
  expect(problem.detail.length).toBeGreaterThan(0)
  const requestId = reply.headers.get("x-request-id")
  expect(requestId).toMatch(/^req_/)
  expect(problem.request_id).toBe(requestId)
  if (!checkedTypes.has(problem.type)) {
    const page = await fetch(problem.type)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await page.text()).toContain(code)
    checkedTypes.add(problem.type)
  }
  return problem as { type: string; title: string; status: number; detail: string; code: string; request_id: string; field?: string; retry_after?: number }
}

// ---------------------------------------------------------------------------------------------
// Audio fixtures

const fixtureDir = mkdtempSync(join(tmpdir(), "hush-e2e-fixtures-"))
process.on("exit", () => rmSync(fixtureDir, { recursive: true, force: true }))
const fixtures = new Map<string, Uint8Array>()

const ffmpegFixture = (name: string, args: ReadonlyArray<string>): Uint8Array => {
  const cached = fixtures.get(name)
  if (cached !== undefined) return cached
  const path = join(fixtureDir, name)
  execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...args, path])
  const bytes = new Uint8Array(readFileSync(path))
  fixtures.set(name, bytes)
  return bytes
}

const CODECS = {
  wav: ["-c:a", "pcm_s16le"],
  mp3: ["-c:a", "libmp3lame", "-b:a", "32k"],
  // AAC in MP4 with the index (moov) at the end, as ffmpeg writes it by default
  m4a: ["-c:a", "aac", "-b:a", "32k", "-f", "mp4"]
} as const

/** A sine tone made by ffmpeg: `wav` (8 kHz mono PCM), `mp3` or `m4a`. Cached per process. */
export const tone = (seconds: number, format: keyof typeof CODECS = "wav"): Uint8Array =>
  ffmpegFixture(`tone-${seconds}.${format}`, [
    "-f", "lavfi", "-i", `sine=frequency=440:sample_rate=8000:duration=${seconds}`, "-ac", "1", ...CODECS[format]
  ])

/** A short MP4 with a video stream and no audio stream. */
export const silentVideo = (): Uint8Array =>
  ffmpegFixture("silent.mp4", ["-f", "lavfi", "-i", "testsrc=size=32x32:rate=5:duration=0.4", "-c:v", "mpeg4", "-an", "-f", "mp4"])

/** Deterministic bytes that are no audio format. */
export const junk = (size: number, seed = 7): Uint8Array => {
  const bytes = new Uint8Array(size)
  let x = seed
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    bytes[i] = (x >>> 16) & 0xff
  }
  return bytes
}

/** `duration` of a media file as ffprobe reads it (written to a temp file first). */
export const ffprobeDuration = (bytes: Uint8Array, name = "probe.bin"): { formatName: string; duration: number } => {
  const dir = mkdtempSync(join(tmpdir(), "hush-e2e-probe-"))
  try {
    const path = join(dir, name)
    execFileSync("sh", ["-c", "cat > \"$0\"", path], { input: bytes })
    const out = execFileSync("ffprobe", ["-v", "error", "-show_entries", "format=format_name,duration", "-of", "json", path]).toString()
    const format = JSON.parse(out).format as { format_name: string; duration: string }
    return { formatName: format.format_name, duration: Number(format.duration) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------
// Flows

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Calls `get` until `done` holds for its reply (or fails after `timeoutMs`). */
export const pollUntil = async (get: () => Promise<Reply>, done: (reply: Reply) => boolean, timeoutMs = 45_000): Promise<Reply> => {
  const started = Date.now()
  for (;;) {
    const reply = await get()
    if (done(reply)) return reply
    if (Date.now() - started > timeoutMs) throw new Error(`gave up waiting; last reply ${reply.status} ${reply.text}`)
    await sleep(25)
  }
}

export const createFile = (server: Reachable, key: string, file: { filename?: string; size_bytes: number; content_type?: string }, headers?: Record<string, string>) =>
  call(server, "POST", "/v1/files", {
    key,
    body: { filename: file.filename ?? "interview.wav", size_bytes: file.size_bytes, content_type: file.content_type ?? "audio/wav" },
    ...(headers === undefined ? {} : { headers })
  })

/** Sends bytes to a PUT upload target with its headers. */
export const putUpload = (upload: { url: string; headers: Record<string, string> }, bytes: Uint8Array) =>
  fetch(upload.url, { method: "PUT", headers: upload.headers, body: bytes })

export const complete = (server: Reachable, key: string, fileId: string, body?: unknown) =>
  call(server, "POST", `/v1/files/${fileId}/complete`, body === undefined ? { key } : { key, body })

export const getFile = (server: Reachable, key: string, fileId: string) => call(server, "GET", `/v1/files/${fileId}`, { key })

export const waitForFile = (server: Reachable, key: string, fileId: string) =>
  pollUntil(() => getFile(server, key, fileId), (r) => r.json?.status === "ready" || r.json?.status === "rejected")

/** create → PUT → complete; returns the file id (the file is `validating` or later). */
export const uploadFile = async (
  server: Reachable,
  key: string,
  bytes: Uint8Array,
  meta: { filename?: string; content_type?: string } = {}
): Promise<string> => {
  const created = await createFile(server, key, { ...meta, size_bytes: bytes.length })
  expect(created.status, created.text).toBe(201)
  const put = await putUpload(created.json.upload, bytes)
  expect(put.status).toBe(200)
  await put.arrayBuffer()
  const completed = await complete(server, key, created.json.id)
  expect(completed.status, completed.text).toBe(202)
  return created.json.id as string
}

/** A `ready` file of a 1-second tone (or the bytes given). */
export const readyFile = async (
  server: Reachable,
  key: string,
  bytes: Uint8Array = tone(1),
  meta: { filename?: string; content_type?: string } = {}
): Promise<string> => {
  const id = await uploadFile(server, key, bytes, meta)
  const file = await waitForFile(server, key, id)
  expect(file.json.status, file.text).toBe("ready")
  return id
}

export const denoise = (server: Reachable, key: string, body: unknown, headers?: Record<string, string>) =>
  call(server, "POST", "/v1/audio/denoise", { key, body, ...(headers === undefined ? {} : { headers }) })

export const credits = async (server: Reachable, key: string) => {
  const reply = await call(server, "GET", "/v1/credits", { key })
  expect(reply.status, reply.text).toBe(200)
  return reply.json as { balance_micros: number; reserved_micros: number; available_micros: number; currency: string; display: string }
}

export const waitForJob = (server: Reachable, key: string, jobId: string) =>
  pollUntil(
    () => call(server, "GET", `/v1/jobs/${jobId}`, { key }),
    (r) => ["succeeded", "failed", "canceled"].includes(r.json?.status)
  )

// ---------------------------------------------------------------------------------------------
// Shapes (spec, Resources)

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

export const expectIso = (value: unknown) => expect(value).toMatch(ISO)
export const expectIsoOrNull = (value: unknown) => {
  if (value !== null) expectIso(value)
}

const JOB_FIELDS = [
  "id", "object", "task", "model", "status", "progress", "input", "options", "output", "cost", "receipt", "report", "error", "mode",
  "created_at", "started_at", "finished_at"
]

export const expectJobShape = (job: any) => {
  expect(Object.keys(job).sort()).toEqual([...JOB_FIELDS].sort())
  expect(job.id).toMatch(/^job_[a-z2-7]{20,}$/)
  expect(job.object).toBe("job")
  expect(job.task).toBe("denoise")
  expect(typeof job.model).toBe("string")
  expect(["queued", "processing", "succeeded", "failed", "canceled"]).toContain(job.status)
  expect(typeof job.progress).toBe("number")
  expect(Object.keys(job.input).sort()).toEqual(["duration_seconds", "file"])
  expect(typeof job.input.file).toBe("string")
  expect(typeof job.input.duration_seconds).toBe("number")
  expect(Object.keys(job.options).sort()).toEqual(["output", "strength"])
  expect(Object.keys(job.options.output).sort()).toEqual(["format", "loudness"])
  expect(["mp3", "wav", "flac", "opus"]).toContain(job.options.output.format)
  if (job.options.strength !== null) expect(job.options.strength).toBeGreaterThanOrEqual(0)
  if (job.output !== null) {
    expect(Object.keys(job.output).sort()).toEqual(["bitrate_kbps", "expires_at", "format", "size_bytes"])
    expect(Number.isInteger(job.output.bitrate_kbps)).toBe(true)
    expect(Number.isInteger(job.output.size_bytes)).toBe(true)
    expectIsoOrNull(job.output.expires_at)
  }
  expect(Object.keys(job.cost).sort()).toEqual(["charged_micros", "display", "estimated_micros"])
  expect(Number.isInteger(job.cost.estimated_micros)).toBe(true)
  expect(job.cost.charged_micros === null || Number.isInteger(job.cost.charged_micros)).toBe(true)
  expect(job.cost.display).toMatch(/^-?\$\d+\.\d{2,}$/)
  expect(Object.keys(job.receipt).sort()).toEqual(
    ["billable_seconds", "charged_micros", "ledger_txn_id", "minimum_applied", "pricing_version", "unit_price_micros"]
  )
  expect(Number.isInteger(job.receipt.billable_seconds)).toBe(true)
  expect(typeof job.receipt.minimum_applied).toBe("boolean")
  expect(Number.isInteger(job.receipt.unit_price_micros)).toBe(true)
  expect(Number.isInteger(job.receipt.pricing_version)).toBe(true)
  if (job.error !== null) expect(Object.keys(job.error).sort()).toEqual(["code", "message"])
  expect(["live", "test"]).toContain(job.mode)
  expectIso(job.created_at)
  expectIsoOrNull(job.started_at)
  expectIsoOrNull(job.finished_at)
}

const FILE_FIELDS = [
  "id", "object", "filename", "content_type", "size_bytes", "status", "duration_seconds", "error", "mode",
  "created_at", "ready_at", "expires_at"
]

export const expectFileShape = (file: any) => {
  expect(Object.keys(file).sort()).toEqual([...FILE_FIELDS].sort())
  expect(file.id).toMatch(/^file_[a-z2-7]{20,}$/)
  expect(file.object).toBe("file")
  expect(typeof file.filename).toBe("string")
  expect(typeof file.content_type).toBe("string")
  expect(Number.isInteger(file.size_bytes)).toBe(true)
  expect(["uploading", "validating", "ready", "rejected"]).toContain(file.status)
  expect(file.duration_seconds === null || typeof file.duration_seconds === "number").toBe(true)
  if (file.error !== null) expect(Object.keys(file.error).sort()).toEqual(["code", "message"])
  expect(["live", "test"]).toContain(file.mode)
  expectIso(file.created_at)
  expectIsoOrNull(file.ready_at)
  expectIsoOrNull(file.expires_at)
}

export const expectCreditsShape = (credits: any) => {
  expect(Object.keys(credits).sort()).toEqual(["available_micros", "balance_micros", "currency", "display", "reserved_micros"])
  for (const field of ["available_micros", "balance_micros", "reserved_micros"]) expect(Number.isInteger(credits[field])).toBe(true)
  expect(credits.currency).toBe("usd")
  expect(credits.display).toMatch(/^\$\d+\.\d{2,}$/)
}
