/**
 * The typed Hush client for programs, derived from the same `HttpApi` the server is built
 * from (apps/api/contract/definition.ts), so a request or answer that drifts from the API does not
 * compile. On top of HttpApiClient it:
 *
 * - sends the API key (`Authorization: Bearer …`);
 * - turns every answer of 400 or more into one typed error, `HushApiError`, carrying the
 *   problem's `code`, `title`, `detail` and `request_id` (RFC 9457, as the edge renders them);
 * - retries 429, 500, 502, 503 and 504 answers and dropped connections, after `Retry-After`
 *   seconds when the answer gives it, else with exponential backoff (spec, Errors, rule 1);
 * - gives every POST an `Idempotency-Key` (a fresh UUID per call, the same on each of its
 *   retries), or the key set with `withIdempotencyKey` around the call, so a retried create
 *   can never act twice.
 *
 * Test mode: with a `hush_test_…` key every job succeeds at once and is never charged, and its
 * output is Hush's sample clip, not the audio sent (decisions.md, Test mode; the job's `mode`).
 *
 * ```ts
 * const program = Effect.gen(function*() {
 *   const hush = yield* makeHushClient({ apiKey: process.env.HUSH_API_KEY!, baseUrl: "https://api.hush.example" })
 *   const job = yield* hush.jobs.getJob({ path: { job_id: "job_…" } })
 * }).pipe(Effect.provide(FetchHttpClient.layer))
 * ```
 */
import { type HttpApi, HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Data, Duration, Effect, FiberRef, Option, ParseResult, Random, Schedule, Schema } from "effect"
import { HushApi } from "../api/contract/definition.js"
import { problemOf as decodeProblem } from "../../core/problem.js"
import { type CompleteIn, File } from "../../core/schema/file.js"

/** A problem the API answered (status ≥ 400), or a transport failure that outlived its retries. */
export class HushApiError extends Data.TaggedError("HushApiError")<{
  /** The HTTP status; 0 when no answer came (connection refused or dropped). */
  readonly status: number
  /** The problem's stable `code` (spec, Errors), or `network_error` when no answer came. */
  readonly code: string
  readonly title: string
  readonly detail: string
  /** `request_id` of the problem (equal to its `X-Request-Id`), when an answer came. */
  readonly requestId: string | undefined
  /** `Retry-After` of the last answer, in seconds. */
  readonly retryAfterSeconds: number | undefined
  /** The field a validation problem names. */
  readonly field: string | undefined
}> {
  override get message(): string {
    return `${this.title}: ${this.detail}${this.requestId === undefined ? "" : ` (request_id ${this.requestId})`}`
  }
}

export interface RetryOptions {
  /** Attempts in all, the first included. Default 5. */
  readonly maxAttempts?: number
  /** The first backoff when no `Retry-After` is given; it doubles each time. Default 500 ms. */
  readonly baseDelayMs?: number
  /** The longest wait between attempts, `Retry-After` included. Default 30 s. */
  readonly maxDelayMs?: number
}

export interface HushClientOptions {
  readonly apiKey?: string | undefined
  /** Where the API is, e.g. `https://api.hush.example` (without `/v1`). */
  readonly baseUrl: string
  readonly retry?: RetryOptions
  /** Sent as `User-Agent` (where the runtime lets it be set). */
  readonly userAgent?: string
  /**
   * How long one attempt may wait for its answer before it fails as `timeout` (and is retried
   * like a dropped connection). Default 30 s; an upload's bytes go to storage, not through this.
   */
  readonly timeoutMs?: number
}

/** The statuses worth retrying unchanged (spec, Errors, Handling rule 1). */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504])

const IdempotencyKeyRef = FiberRef.unsafeMake<Option.Option<string>>(Option.none())

/**
 * Runs `effect` with this `Idempotency-Key` on its POSTs, instead of a fresh one per call: a
 * program that may run the same create again (after a crash, in another process) uses a key
 * it can derive again, and gets the first answer replayed.
 */
export const withIdempotencyKey = (key: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, IdempotencyKeyRef, Option.some(key))

const retryAfterOf = (response: HttpClientResponse.HttpClientResponse): number | undefined => {
  const header = response.headers["retry-after"]
  if (header === undefined) return undefined
  if (/^\d+$/.test(header.trim())) return Number(header.trim())
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

/** The problem of an answer of 400 or more, whatever its body (a proxy may answer HTML): core/problem.ts. */
const problemOf = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<HushApiError> =>
  response.text.pipe(
    Effect.orElseSucceed(() => ""),
    Effect.map((text) => {
      const problem = decodeProblem(response.status, text)
      return new HushApiError({
        status: problem.status,
        code: problem.code,
        title: problem.title,
        detail: problem.detail,
        requestId: problem.requestId ?? response.headers["x-request-id"],
        retryAfterSeconds: retryAfterOf(response) ?? problem.retryAfterSeconds,
        field: problem.field
      })
    })
  )

/** What went wrong under a transport error, as a person reads it (the innermost cause: refused, reset, not found). */
const transportCause = (error: { readonly cause?: unknown }): string | undefined => {
  let cause: unknown = error.cause
  while (cause instanceof Error && cause.cause !== undefined) cause = cause.cause
  if (cause === undefined) return undefined
  const code = (cause as { readonly code?: unknown }).code
  if (code === "ECONNREFUSED") return "connection refused"
  if (code === "ECONNRESET") return "connection reset"
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host not found"
  return cause instanceof Error ? cause.message : String(cause)
}

const networkError = (error: { readonly message: string; readonly cause?: unknown }) => {
  const cause = transportCause(error)
  return new HushApiError({
    status: 0, code: "network_error", title: "Network error", detail: cause === undefined ? error.message : `${error.message}: ${cause}`,
    requestId: undefined, retryAfterSeconds: undefined, field: undefined
  })
}

const DEFAULT_TIMEOUT_MS = 30_000

const timeoutError = (timeoutMs: number) =>
  new HushApiError({
    status: 0, code: "timeout", title: "No answer in time", detail: `the API did not answer within ${timeoutMs / 1000} s`,
    requestId: undefined, retryAfterSeconds: undefined, field: undefined
  })

/** Whether a failure may be retried unchanged: a dropped connection, a timeout or a retryable status. */
export const isRetryable = (error: HushApiError): boolean => error.status === 0 || RETRYABLE_STATUSES.has(error.status)

/**
 * The wait before attempt `attempt + 1`: `Retry-After` when given, else exponential backoff with
 * jitter (between half and all of the doubled step, `jitter` placing it in that range), never
 * over `maxDelayMs`.
 */
export const retryDelayMs = (error: HushApiError, attempt: number, options: RetryOptions = {}, jitter: number = Math.random()): number => {
  const base = options.baseDelayMs ?? 500
  const max = options.maxDelayMs ?? 30_000
  if (error.retryAfterSeconds !== undefined) return Math.min(error.retryAfterSeconds * 1000, max)
  const backoff = base * 2 ** (attempt - 1)
  return Math.min(max, backoff / 2 + jitter * backoff / 2)
}

/**
 * When to try again: while the failure is retryable, up to `maxAttempts` attempts in all, each
 * after `retryDelayMs` (its jitter drawn from Effect's `Random`, its wait on Effect's `Clock`).
 */
export const retrySchedule = (options: RetryOptions = {}): Schedule.Schedule<[HushApiError, number], HushApiError> =>
  Schedule.identity<HushApiError>().pipe(
    Schedule.whileInput(isRetryable),
    Schedule.intersect(Schedule.recurs((options.maxAttempts ?? 5) - 1)),
    Schedule.addDelayEffect(([error, retries]) =>
      Effect.map(Random.next, (jitter) => Duration.millis(retryDelayMs(error, retries + 1, options, jitter))))
  )

/**
 * Re-runs `attempt` while it fails retryably (`retrySchedule`). Exported for the other requests
 * a client makes (uploads to signed URLs).
 */
export const retrying = <A, R>(
  attempt: Effect.Effect<A, HushApiError, R>,
  options: RetryOptions = {}
): Effect.Effect<A, HushApiError, R> => Effect.retry(attempt, retrySchedule(options))

/** An HttpClient that authenticates, keys POSTs, fails with `HushApiError` and retries. */
export const hushHttpClient = (client: HttpClient.HttpClient, options: Omit<HushClientOptions, "baseUrl">): HttpClient.HttpClient.With<HushApiError> =>
  client.pipe(
    HttpClient.mapRequestEffect((request) =>
      Effect.map(FiberRef.get(IdempotencyKeyRef), (key) => {
        let keyed = request
        if (options.apiKey !== undefined) keyed = HttpClientRequest.bearerToken(keyed, options.apiKey)
        if (options.userAgent !== undefined) keyed = HttpClientRequest.setHeader(keyed, "user-agent", options.userAgent)
        if (request.method === "POST" && request.headers["idempotency-key"] === undefined) {
          keyed = HttpClientRequest.setHeader(keyed, "idempotency-key", Option.getOrElse(key, () => globalThis.crypto.randomUUID()))
        }
        return keyed
      })
    ),
    HttpClient.transform((effect) =>
      retrying(
        effect.pipe(
          Effect.mapError(networkError),
          Effect.timeoutFail({
            duration: Duration.millis(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
            onTimeout: () => timeoutError(options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
          }),
          Effect.flatMap((response) => response.status >= 400 ? Effect.flatMap(problemOf(response), Effect.fail) : Effect.succeed(response))
        ),
        options.retry
      )
    )
    // every HttpClientError is mapped to a HushApiError above; the combinator's type keeps the union
  ) as HttpClient.HttpClient.With<HushApiError>

/**
 * The client: one method per endpoint, grouped as the API is (`public`, `files`, `jobs`,
 * `account`, …), e.g. `hush.files.createFile({ payload })`, `hush.jobs.listJobs({ urlParams })`.
 * Every failure is a `HushApiError` (or a `ParseError` if an answer does not match the API).
 */
export const makeHushClient = (options: HushClientOptions) =>
  Effect.gen(function*() {
    const baseUrl = options.baseUrl.replace(/\/+$/, "")
    const http = hushHttpClient(yield* HttpClient.HttpClient, options)
    const client = (yield* HttpApiClient.makeWith(HushApi, {
      httpClient: http,
      baseUrl,
      // a success body that is not JSON fails as a ResponseError: one error type for callers
      transformResponse: (effect) =>
        Effect.mapError(effect, (error) =>
          error instanceof HushApiError || ParseResult.isParseError(error) ? error : invalidResponse(error))
    })) as unknown as HonestClient<HttpApiClient.Client<HushApiGroups, never, never>>
    const decodeFile = Schema.decodeUnknown(File)
    /**
     * `POST /v1/files/{file_id}/complete` with its optional body (the ETags of a multipart
     * upload): the definition leaves that body to the handler, so HttpApiClient would send none.
     */
    const completeFile = (request: { readonly path: { readonly file_id: string }; readonly payload?: CompleteIn | null }) =>
      http.execute(
        HttpClientRequest.post(`${baseUrl}/v1/files/${encodeURIComponent(request.path.file_id)}/complete`).pipe(
          request.payload === undefined ? (r) => r : HttpClientRequest.bodyUnsafeJson(request.payload)
        )
      ).pipe(Effect.flatMap((response) => response.json), Effect.mapError((error) => error._tag === "HushApiError" ? error : problemFromTransport(error)), Effect.flatMap(decodeFile), Effect.mapError((error) => error instanceof HushApiError ? error : error))
    return { ...client, files: { ...client.files, completeFile } }
  })

const problemFromTransport = (error: { readonly message: string }) => networkError(error)

const invalidResponse = (error: unknown) =>
  new HushApiError({
    status: 0, code: "invalid_response", title: "Invalid response", detail: String(error),
    requestId: undefined, retryAfterSeconds: undefined, field: undefined
  })

type HushApiGroups = typeof HushApi extends HttpApi.HttpApi<any, infer Groups, any, any> ? Groups : never

/**
 * The client's methods with the errors they really fail with: every problem arrives as a
 * `HushApiError` (the declared error classes of the definition are the server's, never
 * decoded here), or a `ParseError` when an answer does not match the API.
 */
type Body<A> = Exclude<A, readonly [unknown, HttpClientResponse.HttpClientResponse]>

export type HonestClient<C> = {
  readonly [K in keyof C]: C[K] extends (request: infer Request) => Effect.Effect<infer A, any, infer R>
    ? (request: Request) => Effect.Effect<Body<A>, HushApiError | ParseResult.ParseError, R>
    : C[K] extends () => Effect.Effect<infer A, any, infer R> ? () => Effect.Effect<Body<A>, HushApiError | ParseResult.ParseError, R>
    : HonestClient<C[K]>
}

export type HushClient = Effect.Effect.Success<ReturnType<typeof makeHushClient>>
