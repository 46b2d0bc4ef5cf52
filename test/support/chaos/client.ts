/**
 * The chaos workload's HTTP client: a well-behaved API client behind a load balancer of two
 * API nodes. Each attempt waits at most CLIENT_TIMEOUT_MS; a refused or reset connection goes
 * to the other node; `503` and `429` are retried after `Retry-After`, everything else is the
 * answer. A request with an `Idempotency-Key` is sent again with the same key, so a retry never
 * does the work twice (decisions.md, Requests). Every answer is tallied, and what the issue
 * forbids is recorded as a violation: a 5xx other than 503, a 503 without `Retry-After`, or no
 * answer within the client's timeout (a hang).
 */

import { RUNNING_TAKEOVER_MS } from "../../../apps/api/server/edge/idempotency.js"
import { jsonOrUndefined } from "../json.js"

/** How long one attempt waits for its answer. */
export const CLIENT_TIMEOUT_MS = 30_000

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

/**
 * An answer as the report counts it: its status, its code, and for a quota which one (open
 * uploads, retained bytes, validations an hour), since each has another cause.
 */
export const answerLabel = (answer: Answer) => {
  if (!(answer.status >= 400 && typeof answer.json?.code === "string")) return String(answer.status)
  const label = `${answer.status} ${answer.json.code}`
  if (answer.json.code !== "quota_exceeded") return label
  const detail = String(answer.json.detail ?? "")
  const which = /uploads are already open/.test(detail) ? "open uploads" : /retained input/.test(detail) ? "retained bytes" : /validations/.test(detail) ? "validations an hour" : "other"
  return `${label} (${which})`
}

export interface AnswerTally {
  /** Answers by status (`net` for a refused or reset connection). */
  readonly byStatus: Map<string, number>
  readonly violations: Array<string>
  requests: number
}

export const newTally = (): AnswerTally => ({ byStatus: new Map(), violations: [], requests: 0 })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface RequestOptions {
  readonly key?: string | undefined
  readonly body?: unknown
  readonly form?: URLSearchParams | undefined
  readonly headers?: Record<string, string> | undefined
  readonly idempotencyKey?: string | undefined
  /** Give up (undefined) after this long in all; default 90 s. */
  readonly deadlineMs?: number | undefined
  /** The node to send it to (an index; default round robin). */
  readonly node?: number | undefined
}

export class ChaosClient {
  private next = 0
  constructor(readonly nodes: () => ReadonlyArray<string>, readonly tally: AnswerTally, readonly stopped: () => boolean) {}

  /** One attempt on one node; `net` when the connection failed, `timeout` when no answer came in time. */
  private async attempt(base: string, method: string, path: string, options: RequestOptions): Promise<Answer | "net" | "timeout"> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
    let body: string | undefined
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers["content-type"] = "application/json"
    } else if (options.form !== undefined) {
      body = options.form.toString()
      headers["content-type"] = "application/x-www-form-urlencoded"
    }
    const url = path.startsWith("http") ? path : `${base}${path}`
    this.tally.requests++
    try {
      const response = await fetch(url, { method, headers, body, redirect: "manual", signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      const text = await response.text()
      const json = jsonOrUndefined(text)
      return { status: response.status, headers: response.headers, text, json }
    } catch (error) {
      const name = (error as { name?: string }).name
      return name === "TimeoutError" || name === "AbortError" ? "timeout" : "net"
    }
  }

  private count(label: string) {
    this.tally.byStatus.set(label, (this.tally.byStatus.get(label) ?? 0) + 1)
  }

  /**
   * The request, retried as the module says: its answer, or the last retryable one (503, 429,
   * a key still running) when the deadline passed or the workload stopped; undefined when no
   * answer ever came.
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer | undefined> {
    let deadline = Date.now() + (options.deadlineMs ?? 90_000)
    let extended = false
    let last: Answer | undefined
    for (let attempt = 1; Date.now() < deadline; attempt++) {
      const nodes = this.nodes()
      const base = nodes[(options.node ?? this.next++) % nodes.length]!
      const answer = await this.attempt(base, method, path, options)
      if (answer === "net") {
        this.count("net")
        await sleep(Math.min(2_000, 100 * attempt))
        continue
      }
      if (answer === "timeout") {
        this.count("timeout")
        this.tally.violations.push(`no answer within ${CLIENT_TIMEOUT_MS} ms: ${method} ${path.replace(/[?].*/, "")} on ${base}`)
        continue
      }
      this.count(answerLabel(answer))
      if (answer.status >= 500 && answer.status !== 503) {
        this.tally.violations.push(`${answer.status} ${answer.json?.code ?? ""}: ${method} ${path.replace(/[?].*/, "")}: ${answer.text.slice(0, 200)}`)
      }
      const retryAfter = Number(answer.headers.get("retry-after"))
      if (answer.status === 503 && !(retryAfter > 0)) {
        this.tally.violations.push(`503 without Retry-After: ${method} ${path.replace(/[?].*/, "")}`)
      }
      const stillRunning = answer.status === 409 && answer.json?.code === "idempotency_key_reused" && /still running/.test(answer.json?.detail ?? "")
      if (answer.status === 503 || answer.status === 429 || stillRunning || answer.status >= 500) {
        // the workload is over: the client walks away (the caller records it as stopped)
        if (this.stopped()) return answer
        // a key held by a request that was killed is free again after RUNNING_TAKEOVER_MS
        if (stillRunning && !extended) {
          extended = true
          deadline = Math.max(deadline, Date.now() + RUNNING_TAKEOVER_MS + 15_000)
        }
        last = answer
        await sleep(Math.min(5_000, (retryAfter > 0 ? retryAfter : 1) * 1_000))
        continue
      }
      return answer
    }
    return last
  }
}
