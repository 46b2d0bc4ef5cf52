/**
 * Sends a file's bytes to its upload target: one PUT, or the parts of a multipart upload in
 * parallel, each retried on its own. Each finished part's ETag is written at once to a small
 * resume file (in the cache dir, keyed by the input's path, size and mtime, the server and the
 * key), so a run stopped by Ctrl-C or a dropped connection re-sends only the parts that had
 * not finished.
 */
import { createHash } from "node:crypto"
import { createReadStream, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import { homedir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { HushApiError, retrying, type RetryOptions } from "../../client/index.js"
import type { MultipartUpload, PutUpload } from "../../../core/schema/file.js"

/** What a run keeps between attempts at one input. */
export interface ResumeState {
  readonly version: 1
  readonly fileId: string
  readonly upload: PutUpload | MultipartUpload
  /** The ETag of each part that finished, by part number. */
  readonly parts: Record<string, string>
}

export interface InputIdentity {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  readonly baseUrl: string
  readonly apiKey: string
}

/** `HUSH_CACHE_DIR`, else `$XDG_CACHE_HOME/hush`, else `~/.cache/hush`. */
export const cacheDir = (env: NodeJS.ProcessEnv): string =>
  env.HUSH_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "hush")

/** The resume file of an input: a hash of what identifies it (never the key itself). */
export const resumePath = (env: NodeJS.ProcessEnv, input: InputIdentity): string => {
  const id = createHash("sha256")
    .update(JSON.stringify([input.path, input.size, Math.floor(input.mtimeMs), input.baseUrl, createHash("sha256").update(input.apiKey).digest("hex")]))
    .digest("hex")
    .slice(0, 32)
  return join(cacheDir(env), "uploads", `${id}.json`)
}

export const readResumeState = (path: string): ResumeState | undefined => {
  try {
    const state = JSON.parse(readFileSync(path, "utf8")) as ResumeState
    return state.version === 1 && typeof state.fileId === "string" ? state : undefined
  } catch {
    return undefined
  }
}

/** Written whole to a temp file, then renamed over the old one: a crash leaves one or the other. */
export const writeResumeState = (path: string, state: ResumeState) => {
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 })
  const temp = `${path}.${process.pid}.tmp`
  writeFileSync(temp, JSON.stringify(state), { mode: 0o600 })
  renameSync(temp, path)
}

export const removeResumeState = (path: string) => rmSync(path, { force: true })

const transportError = (detail: string) =>
  new HushApiError({ status: 0, code: "network_error", title: "Network error", detail, requestId: undefined, retryAfterSeconds: undefined, field: undefined })

/** A stalled upload (no bytes moving either way for this long) is dropped and retried. */
const IDLE_TIMEOUT_MS = 60_000

/**
 * PUTs `length` bytes of `path` from `start` to a signed URL, streamed from disk (memory stays
 * bounded whatever the part size); succeeds with the answer's ETag. `onBytes` hears each chunk
 * sent, and a negative count when an attempt's bytes are to be counted again.
 */
export const putRange = (
  url: string,
  headers: Readonly<Record<string, string>>,
  file: { readonly path: string; readonly start: number; readonly length: number },
  onBytes: (delta: number) => void
): Effect.Effect<string, HushApiError> =>
  Effect.async<string, HushApiError>((resume) => {
    let sent = 0
    let settled = false
    const settle = (effect: Effect.Effect<string, HushApiError>) => {
      if (settled) return
      settled = true
      if (sent > 0) onBytes(-sent)
      resume(effect)
    }
    const target = new URL(url)
    const request = (target.protocol === "https:" ? https : http).request(target, {
      method: "PUT",
      headers: { ...headers, "content-length": String(file.length) },
      timeout: IDLE_TIMEOUT_MS
    })
    const body = createReadStream(file.path, { start: file.start, end: file.start + file.length - 1 })
    body.on("data", (chunk) => {
      sent += chunk.length
      onBytes(chunk.length)
    })
    body.on("error", (error) => {
      request.destroy()
      settle(Effect.fail(transportError(`reading the input: ${error.message}`)))
    })
    request.on("timeout", () => request.destroy(new Error(`no progress for ${IDLE_TIMEOUT_MS / 1000} s`)))
    request.on("error", (error) => settle(Effect.fail(transportError(`upload interrupted: ${error.message}`))))
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", (error) => settle(Effect.fail(transportError(`upload interrupted: ${error.message}`))))
      response.on("end", () => {
        const status = response.statusCode ?? 0
        const etag = response.headers.etag
        if (status >= 200 && status < 300) {
          if (typeof etag === "string" && etag !== "") {
            settled = true
            resume(Effect.succeed(etag))
          } else settle(Effect.fail(transportError(`the upload answered ${status} without an ETag`)))
          return
        }
        const text = Buffer.concat(chunks).toString("utf8")
        let problem: Record<string, unknown> = {}
        try {
          problem = JSON.parse(text)
        } catch {
          // storage answers XML (S3) or text
        }
        const retryAfter = response.headers["retry-after"]
        settle(Effect.fail(new HushApiError({
          status,
          code: typeof problem.code === "string" ? problem.code : `storage_${status}`,
          title: typeof problem.title === "string" ? problem.title : `The upload was refused (HTTP ${status})`,
          detail: typeof problem.detail === "string" ? problem.detail : text.slice(0, 300) || "no detail",
          requestId: typeof problem.request_id === "string" ? problem.request_id : undefined,
          retryAfterSeconds: retryAfter !== undefined && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined,
          field: undefined
        })))
      })
    })
    body.pipe(request)
    return Effect.sync(() => {
      settled = true
      body.destroy()
      request.destroy()
    })
  })

export interface UploadOptions {
  readonly path: string
  readonly size: number
  readonly statePath: string
  readonly concurrency: number
  readonly retry?: RetryOptions
  /** Bytes sent so far (finished parts included) of `size`. */
  readonly onProgress: (sent: number) => void
}

/**
 * Sends whatever of the file its state does not mark finished; answers the parts for
 * `complete` (empty for a PUT upload). Interrupting it leaves the state of the finished parts.
 */
export const sendFile = (state: ResumeState, options: UploadOptions): Effect.Effect<ReadonlyArray<{ part_number: number; etag: string }>, HushApiError> =>
  Effect.gen(function*() {
    const upload = state.upload
    let sent = 0
    const count = (delta: number) => {
      sent += delta
      options.onProgress(sent)
    }
    if (upload.method === "PUT") {
      yield* retrying(putRange(upload.url, upload.headers, { path: options.path, start: 0, length: options.size }, count), options.retry)
      return []
    }
    const parts = { ...state.parts }
    const lengthOf = (partNumber: number) =>
      Math.min(upload.part_size, options.size - (partNumber - 1) * upload.part_size)
    for (const partNumber of Object.keys(parts)) count(lengthOf(Number(partNumber)))
    const missing = upload.parts.filter((part) => parts[String(part.part_number)] === undefined)
    yield* Effect.forEach(missing, (part) =>
      retrying(
        putRange(part.url, {}, { path: options.path, start: (part.part_number - 1) * upload.part_size, length: lengthOf(part.part_number) }, count),
        options.retry
      ).pipe(Effect.tap((etag) =>
        Effect.sync(() => {
          parts[String(part.part_number)] = etag
          writeResumeState(options.statePath, { ...state, parts: { ...parts } })
        })
      )), { concurrency: options.concurrency, discard: true })
    return upload.parts.map((part) => ({ part_number: part.part_number, etag: parts[String(part.part_number)]! }))
  })
