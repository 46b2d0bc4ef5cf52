/**
 * Sends a file's bytes straight to the upload target the API planned (decisions.md, Files): one
 * signed PUT up to 100 MiB, else a multipart upload whose parts go up PART_CONCURRENCY at a time,
 * each retried with backoff when the network or the store fails it. Progress counts the bytes
 * sent (XMLHttpRequest's upload events: fetch has none for request bodies). The parts' ETags are
 * what complete needs.
 */
import type { Upload } from "../../../core/schema/file.js"

export const PART_CONCURRENCY = 3
/** Tries of one PUT (a part or the whole file) before the upload fails. */
export const MAX_TRIES = 4
const FIRST_RETRY_MS = 1_000

export interface CompletedPart {
  readonly part_number: number
  readonly etag: string
}

export class UploadFailed extends Error {}

/** Headers the browser sets itself and refuses from a script (the signature covers their values all the same). */
const FORBIDDEN_HEADERS = new Set(["content-length", "host", "connection"])

/** Whether a failed PUT is worth trying again: no answer, a timeout, or the store's 5xx or 429. */
const retryable = (status: number) => status === 0 || status === 429 || status >= 500

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One PUT of `body`, reporting bytes sent; resolves with the answer's ETag. */
const put = (url: string, headers: Record<string, string>, body: Blob, onSent: (bytes: number) => void, signal: AbortSignal) =>
  new Promise<{ readonly status: number; readonly etag: string | null }>((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open("PUT", url)
    for (const [name, value] of Object.entries(headers)) {
      if (!FORBIDDEN_HEADERS.has(name.toLowerCase())) request.setRequestHeader(name, value)
    }
    request.upload.onprogress = (event) => onSent(event.loaded)
    request.onload = () => resolve({ status: request.status, etag: request.getResponseHeader("etag") })
    request.onerror = () => resolve({ status: 0, etag: null })
    request.ontimeout = () => resolve({ status: 0, etag: null })
    request.onabort = () => reject(new UploadFailed("The upload was stopped."))
    signal.addEventListener("abort", () => request.abort(), { once: true })
    request.send(body)
  })

/** `put`, tried up to MAX_TRIES times with a doubling wait; its progress restarts from 0 on a retry. */
const putWithRetries = async (
  what: string, url: string, headers: Record<string, string>, body: Blob, onSent: (bytes: number) => void, signal: AbortSignal
) => {
  for (let attempt = 1; ; attempt++) {
    onSent(0)
    const answer = await put(url, headers, body, onSent, signal)
    if (answer.status >= 200 && answer.status < 300) {
      onSent(body.size)
      return answer.etag
    }
    if (!retryable(answer.status) || attempt >= MAX_TRIES) {
      throw new UploadFailed(answer.status === 0
        ? `Sending ${what} failed ${attempt} times: the connection to the storage was lost.`
        : `The storage refused ${what} (HTTP ${answer.status}).`)
    }
    await sleep(FIRST_RETRY_MS * 2 ** (attempt - 1))
  }
}

/**
 * Uploads `file` to `target`; `onProgress` gets the bytes sent so far of the whole file. Resolves
 * with the parts for complete (null for a PUT upload).
 */
export const sendFile = async (
  file: Blob,
  target: Upload,
  onProgress: (sent: number) => void,
  signal: AbortSignal
): Promise<ReadonlyArray<CompletedPart> | null> => {
  if (target.method === "PUT") {
    await putWithRetries("the file", target.url, target.headers, file, onProgress, signal)
    return null
  }
  // the first part that fails stops the others: the upload has failed
  const stop = new AbortController()
  signal.addEventListener("abort", () => stop.abort(), { once: true })
  const sent = new Map<number, number>()
  const report = () => onProgress([...sent.values()].reduce((sum, n) => sum + n, 0))
  const queue = [...target.parts]
  const done: Array<CompletedPart> = []
  const worker = async () => {
    for (let part = queue.shift(); part !== undefined; part = queue.shift()) {
      const number = part.part_number
      const start = (number - 1) * target.part_size
      const body = file.slice(start, Math.min(file.size, start + target.part_size))
      const etag = await putWithRetries(`part ${number} of ${target.parts.length}`, part.url, {}, body, (bytes) => {
        sent.set(number, bytes)
        report()
      }, stop.signal).catch((error: unknown) => {
        stop.abort()
        throw error
      })
      if (etag === null) throw new UploadFailed(`The storage did not answer part ${number}'s ETag: the upload cannot be completed.`)
      done.push({ part_number: number, etag })
    }
  }
  await Promise.all(Array.from({ length: Math.min(PART_CONCURRENCY, target.parts.length) }, worker))
  return done.sort((a, b) => a.part_number - b.part_number)
}
