/**
 * One JSON call to the GPU host, with a per-call timeout and retries: exponential backoff with
 * jitter for what may pass (connection errors, timeouts, 408, 429 honouring Retry-After, 5xx,
 * a malformed answer), bounded in attempts and in total time. What cannot pass (another 4xx, a
 * redirect) fails at once. Every wait is `Effect.sleep`, so it follows the fiber's Clock.
 */
import { HttpTraceContext } from "@effect/platform"
import { Clock, Duration, Effect, Either, Option, Random, Redacted } from "effect"
import { ProviderFailure } from "../../core/ports/denoise-provider.js"
import { PROTOCOL_HEADER, PROTOCOL_VERSION } from "./protocol.js"
import { recordedSpan } from "../../core/observability/spans.js"

export interface RetryPolicy {
  /** Attempts of one call in all, the first included. */
  readonly maxAttempts: number
  /** The first retry waits about this long; each next one twice as long (with jitter). */
  readonly baseDelayMs: number
  /** No single wait is longer (except as long as a Retry-After asks, within the budget). */
  readonly maxDelayMs: number
  /** No retry starts after this long since the first attempt began. */
  readonly budgetMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 10_000, budgetMs: 60_000 }

export interface ClientOptions {
  readonly baseUrl: string
  readonly token: Redacted.Redacted<string>
  /** Each HTTP exchange, the answer's body included. */
  readonly requestTimeoutMs: number
  readonly retry: RetryPolicy
}

/** Why one attempt did not give a usable answer. */
interface AttemptFailure {
  readonly message: string
  readonly retryable: boolean
  /** A 2xx whose body is not the protocol's JSON: retried, and not worth another job attempt if it lasts. */
  readonly malformed?: boolean
  readonly retryAfterMs?: number | undefined
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

export interface CallSpec<A> {
  /** For messages: "submit", "poll", "cancel". */
  readonly what: string
  readonly method: "GET" | "POST"
  /** Below the base URL, starting with `/`. */
  readonly path: string
  readonly body?: unknown
  readonly idempotencyKey?: string
  /** A status the caller handles itself (e.g. 404 on poll): its reply is returned as is. */
  readonly accept?: (status: number) => boolean
  /** Reads a 2xx body; Left says what is wrong with it. */
  readonly decode: (json: unknown) => Either.Either<A, string>
}

export type CallResult<A> =
  | { readonly _tag: "Ok"; readonly status: number; readonly value: A }
  | { readonly _tag: "Accepted"; readonly reply: Reply }

const RETRYABLE_STATUS = (status: number) => status === 408 || status === 429 || status >= 500

/** `Retry-After`: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export const parseRetryAfter = (header: string | null, now: number): number | undefined => {
  if (header === null) return undefined
  const text = header.trim()
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** A short, single-line excerpt of a body the host sent, for a message. */
const excerpt = (text: string, max = 200): string => {
  let message = text
  try {
    const json = JSON.parse(text) as any
    const found = json?.error?.message ?? json?.message ?? json?.detail ?? json?.error
    if (typeof found === "string") message = found
  } catch {
    // not JSON: the text itself
  }
  // eslint-disable-next-line no-control-regex
  const clean = message.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return clean.length > max ? `${clean.slice(0, max)}…` : clean
}

const describeCause = (cause: unknown): string => {
  const error = cause as { message?: unknown; cause?: { code?: unknown; message?: unknown } }
  const code = typeof error?.cause?.code === "string" ? error.cause.code : undefined
  const message = typeof error?.message === "string" ? error.message : String(cause)
  return code === undefined ? message : `${message} (${code})`
}

export const makeClient = (options: ClientOptions) => {
  const base = options.baseUrl.replace(/\/+$/, "")

  /** One HTTP exchange under the per-call timeout; interruption aborts it. */
  const exchange = (spec: CallSpec<unknown>): Effect.Effect<Reply, AttemptFailure> => {
    const headers: Record<string, string> = {
      accept: "application/json",
      authorization: `Bearer ${Redacted.value(options.token)}`,
      [PROTOCOL_HEADER]: PROTOCOL_VERSION
    }
    if (spec.body !== undefined) headers["content-type"] = "application/json"
    if (spec.idempotencyKey !== undefined) headers["idempotency-key"] = spec.idempotencyKey
    // W3C trace context out: the provider's work joins the job's trace (a no-op without a tracer)
    const sent = Effect.flatMap(recordedSpan, (span) => {
      if (Option.isSome(span)) Object.assign(headers, HttpTraceContext.toHeaders(span.value))
      return send
    })
    const send = Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(`${base}${spec.path}`, {
          method: spec.method,
          headers,
          body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
          redirect: "manual",
          signal
        })
        return { status: response.status, headers: response.headers, text: await response.text() }
      },
      catch: (cause): AttemptFailure => ({ message: `cannot reach the GPU provider: ${describeCause(cause)}`, retryable: true })
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(options.requestTimeoutMs),
        onTimeout: (): AttemptFailure => ({ message: `no answer within ${options.requestTimeoutMs} ms`, retryable: true })
      })
    )
    return sent.pipe(Effect.withSpan(`gpu_provider ${spec.method}`, { kind: "client", attributes: { "url.path": spec.path } }))
  }

  /** Sorts one reply into a result or a failure. */
  const interpret = <A>(spec: CallSpec<A>, reply: Reply, now: number): Either.Either<CallResult<A>, AttemptFailure> => {
    if (spec.accept?.(reply.status) === true) return Either.right({ _tag: "Accepted", reply })
    if (reply.status >= 200 && reply.status < 300) {
      let json: unknown
      try {
        json = JSON.parse(reply.text)
      } catch {
        return Either.left({ message: `HTTP ${reply.status} with a body that is not JSON`, retryable: true, malformed: true })
      }
      return Either.match(spec.decode(json), {
        onLeft: (problem) => Either.left({ message: `HTTP ${reply.status} with an unexpected body: ${problem}`, retryable: true, malformed: true }),
        onRight: (value) => Either.right({ _tag: "Ok" as const, status: reply.status, value })
      })
    }
    const said = excerpt(reply.text)
    const message = `HTTP ${reply.status}${said === "" ? "" : `: ${said}`}`
    if (RETRYABLE_STATUS(reply.status)) {
      return Either.left({ message, retryable: true, retryAfterMs: parseRetryAfter(reply.headers.get("retry-after"), now) })
    }
    return Either.left({ message, retryable: false })
  }

  /** Exponential backoff with equal jitter: half the step fixed, half random. */
  const backoff = (attempt: number) =>
    Effect.map(Random.next, (random) => {
      const step = Math.min(options.retry.maxDelayMs, options.retry.baseDelayMs * 2 ** (attempt - 1))
      return Math.round(step / 2 + random * step / 2)
    })

  /** The call with its retries; a failure that will not pass is a ProviderFailure. */
  const call = <A>(spec: CallSpec<A>): Effect.Effect<CallResult<A>, ProviderFailure> =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      for (let attempt = 1; ; attempt++) {
        const outcome = yield* Effect.either(exchange(spec as CallSpec<unknown>))
        const now = yield* Clock.currentTimeMillis
        const result = Either.flatMap(outcome, (reply) => interpret(spec, reply, now))
        if (Either.isRight(result)) return result.right
        const failure = result.left
        const giveUp = (why: string) =>
          new ProviderFailure({
            message: `GPU provider ${spec.what} failed: ${failure.message}${why}`,
            retryable: failure.retryable && failure.malformed !== true
          })
        if (!failure.retryable) return yield* Effect.fail(giveUp(""))
        if (attempt >= options.retry.maxAttempts) return yield* Effect.fail(giveUp(` (after ${attempt} attempts)`))
        const delay = failure.retryAfterMs ?? (yield* backoff(attempt))
        if (now + delay - started > options.retry.budgetMs) {
          const asked = failure.retryAfterMs === undefined ? "" : `, asked to wait ${Math.ceil(delay / 1000)} s`
          return yield* Effect.fail(giveUp(` (after ${attempt} attempts in ${now - started} ms${asked}; retry budget ${options.retry.budgetMs} ms)`))
        }
        yield* Effect.logDebug(`GPU provider ${spec.what}: ${failure.message}; retry ${attempt} in ${delay} ms`)
        yield* Effect.sleep(Duration.millis(delay))
      }
    })

  /** One attempt only, failures swallowed (for best-effort calls such as cancel). */
  const tryOnce = (spec: CallSpec<unknown>): Effect.Effect<Option.Option<Reply>> =>
    exchange(spec).pipe(
      Effect.map(Option.some),
      Effect.catchAll((failure) => Effect.as(Effect.logWarning(`GPU provider ${spec.what}: ${failure.message}`), Option.none()))
    )

  return { call, tryOnce }
}

export type Client = ReturnType<typeof makeClient>
