/**
 * The dashboard's API client, made by HttpApiClient from the server's own HttpApi definition
 * (apps/api/contract/definition.ts): paths, query parameters, bodies and answers are typed from the
 * same schemas the server decodes and encodes with, so a renamed field fails to compile here
 * and there alike.
 *
 * Every error answer is an RFC 9457 problem; the HTTP client reads it with `problemOf`
 * (core/problem.ts, shared with the typed client) into an `ApiProblem` (status, code, detail,
 * Retry-After) before the endpoint decodes anything, so a page can say
 * what went wrong in words. Unsafe requests carry the session's CSRF token; a `403 forbidden`
 * on one (the token went stale: a new session in another tab, say) fetches the token again and
 * retries once.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Data, Effect, Either } from "effect"
import { HushApi } from "../../api/contract/definition.js"
import { type Problem, problemOf } from "../../../core/problem.js"
import { navigate } from "./router.js"

export class ApiProblem extends Data.TaggedError("ApiProblem")<{
  readonly status: number
  readonly code: string
  readonly detail: string
  /** Seconds, from `Retry-After`. */
  readonly retryAfter: number | null
  readonly method: string
}> {}

let csrfToken: string | undefined

export const setCsrfToken = (token: string | undefined) => {
  csrfToken = token
}

/** The answer's `Retry-After` seconds, else the problem's own `retry_after`; null when neither gives a wait. */
const retryAfterOf = (response: HttpClientResponse.HttpClientResponse, problem: Problem): number | null => {
  const seconds = Number(response.headers["retry-after"] ?? problem.retryAfterSeconds)
  return Number.isFinite(seconds) && seconds > 0 ? seconds : null
}

const apiProblemOf = (response: HttpClientResponse.HttpClientResponse) =>
  response.text.pipe(
    Effect.orElseSucceed(() => ""),
    Effect.map((text) => {
      const problem = problemOf(response.status, text)
      return new ApiProblem({
        status: problem.status,
        code: problem.code,
        detail: problem.detail,
        retryAfter: retryAfterOf(response, problem),
        method: response.request.method
      })
    })
  )

const makeApi = Effect.gen(function*() {
  const httpClient = (yield* HttpClient.HttpClient).pipe(
    HttpClient.mapRequest((request) =>
      request.method === "GET" || csrfToken === undefined ? request : HttpClientRequest.setHeader(request, "x-csrf-token", csrfToken)),
    HttpClient.transformResponse(Effect.flatMap((response) =>
      response.status < 400 ? Effect.succeed(response) : Effect.flatMap(apiProblemOf(response), Effect.fail)))
  )
  return {
    auth: yield* HttpApiClient.group(HushApi, { group: "auth", httpClient }),
    session: yield* HttpApiClient.group(HushApi, { group: "session", httpClient }),
    dashboard: yield* HttpApiClient.group(HushApi, { group: "dashboard", httpClient }),
    work: yield* HttpApiClient.group(HushApi, { group: "dashboardWork", httpClient }),
    webhooks: yield* HttpApiClient.group(HushApi, { group: "dashboardWebhooks", httpClient }),
    models: yield* HttpApiClient.group(HushApi, { group: "public", httpClient })
  }
})

export type Api = Effect.Effect.Success<typeof makeApi>

const api: Api = Effect.runSync(makeApi.pipe(Effect.provide(FetchHttpClient.layer)))

const attempt = <A, E>(request: (api: Api) => Effect.Effect<A, E>) => Effect.runPromise(Effect.either(request(api)))

const isForbiddenUnsafe = (error: unknown): boolean =>
  error instanceof ApiProblem && error.status === 403 && error.code === "forbidden" && error.method !== "GET"

/**
 * Runs one request; resolves with its answer, rejects with an `ApiProblem` or another error.
 * A `401` on a dashboard page goes to the login page (unless `loginOn401: false`).
 */
export const call = async <A, E>(
  request: (api: Api) => Effect.Effect<A, E>,
  options: { readonly loginOn401?: boolean } = {}
): Promise<A> => {
  let result = await attempt(request)
  if (Either.isLeft(result) && isForbiddenUnsafe(result.left)) {
    const before = csrfToken
    const fresh = await attempt((a) => a.auth.csrf())
    if (Either.isRight(fresh) && fresh.right.csrf_token !== before) {
      setCsrfToken(fresh.right.csrf_token)
      result = await attempt(request)
    }
  }
  if (Either.isLeft(result)) {
    const error = result.left
    // the session ended (idle, logged out elsewhere, password reset): sign in again, then come back
    if (error instanceof ApiProblem && error.status === 401 && options.loginOn401 !== false && location.pathname.startsWith("/dashboard")) {
      navigate(`/login?next=${encodeURIComponent(location.pathname + location.search)}&expired=1`, { replace: true })
    }
    throw error
  }
  return result.right
}

/** What a person reads when a request fails. */
export const describeError = (error: unknown): string => {
  if (error instanceof ApiProblem) {
    const wait = error.retryAfter === null ? "" : ` Try again in ${error.retryAfter} second${error.retryAfter === 1 ? "" : "s"}.`
    switch (error.status) {
      case 402: return `Not enough credit: ${error.detail}`
      case 403: return `Not allowed: ${error.detail}`
      case 429: return `Too many requests: ${error.detail}${wait}`
      default: return error.status >= 500 ? `The service had a problem (${error.status}): ${error.detail}${wait}` : error.detail
    }
  }
  if (typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "RequestError") return "Could not reach the server. Check your connection and try again."
  return "Something went wrong: the server's answer could not be read. Reload the page to try again."
}
