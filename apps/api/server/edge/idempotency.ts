/**
 * `Idempotency-Key` on the endpoints annotated `Idempotent` (decisions.md): a replay returns
 * the first status and body with `Idempotent-Replayed: true`; another body or path, or a first
 * request still running, is `409 idempotency_key_reused`; 429 and 5xx are not recorded.
 * Keys are scoped to account and mode and kept 24 hours (then purged by the lifecycle
 * sweeper). A replay has its own `X-Request-Id`; `Original-Request-Id` names the first
 * request, whose id a replayed error body carries. EdgeRules calls this after the caller's
 * scopes were checked, so a replay goes only to a caller that could have made the request.
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Scope } from "effect"
import type { Mode } from "../../../../core/domain/enums.js"
import { IdempotencyRecord } from "../../../../core/domain/records.js"
import { excerpt, IdempotencyKeyReused, InvalidRequest } from "../../../../core/errors.js"
import { Digests } from "../../../../core/ports/digests.js"
import { type DigestFunctions, sha256Hex } from "../../../../core/rules/secrets.js"
import type { IdempotencyRepo } from "../../../../core/ports/repositories.js"
import { answerHeaderOf } from "./request-facts.js"

const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/

export const checkIdempotencyKey = (key: string) =>
  KEY_PATTERN.test(key)
    ? Effect.succeed(key)
    : Effect.fail(new InvalidRequest({
      status: 400, field: "Idempotency-Key", detail: "the Idempotency-Key header must be 1 to 255 printable ASCII characters"
    }))

const fingerprint = (digests: DigestFunctions, method: string, path: string, body: string) => sha256Hex(`${method}\n${path}\n${body}`, digests)

/** Headers worth replaying: the rest (request id, rate limits) belong to the new request. */
const REPLAYED_HEADERS = ["location", "retry-after"]

/**
 * A record still `running` this long after its request began is taken over by the next request
 * with its key: no request runs that long (every call to the database or storage has a
 * deadline), so its request ended without settling the record (its process was killed, or the
 * database was unreachable when it tried). Until then, a retry is told to wait (409).
 */
export const RUNNING_TAKEOVER_MS = 2 * 60_000

/** 499: the client went away; nothing it could be given later. */
const isRecordable = (status: number) => status !== 429 && status !== 499 && status < 500

/**
 * The recorded answer, thrown past the handler as a defect the edge turns back into the
 * response (HttpApi middleware can answer only by failing).
 */
export class Replay {
  constructor(readonly response: HttpServerResponse.HttpServerResponse) {}
}

const bodyText = (response: HttpServerResponse.HttpServerResponse): string | null => {
  const body = response.body
  if (body._tag === "Empty") return ""
  if (body._tag === "Uint8Array") return new TextDecoder().decode(body.body)
  return null
}

export interface IdempotentRequest {
  readonly accountId: string
  readonly mode: Mode
  readonly key: string
  readonly method: string
  readonly path: string
  readonly body: string
}

/**
 * Starts the record, or answers from it. Once started, the answer is recorded when it is
 * sent (whatever produced it: handler, error, edge); a request that ends without one (the
 * client went away) leaves nothing behind.
 */
export const idempotent = (repo: IdempotencyRepo["Type"], ttlMs: number, request: IdempotentRequest) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const print = fingerprint(yield* Digests, request.method, request.path, request.body)
    const { accountId, mode, key } = request
    const begun = yield* repo.begin(new IdempotencyRecord({
      accountId, mode, key, method: request.method, path: request.path,
      fingerprint: print, state: "running", responseStatus: null, responseBody: null, responseHeaders: null,
      createdAt: now, expiresAt: now + ttlMs
    }), { takeOverRunningBefore: now - RUNNING_TAKEOVER_MS })
    if (begun._tag === "Existing") {
      const first = begun.record
      if (first.fingerprint !== print || first.path !== request.path || first.method !== request.method) {
        return yield* new IdempotencyKeyReused({
          detail: `Idempotency-Key '${excerpt(key)}' was used for another request (${first.method} ${first.path} with a different body)`
        })
      }
      if (first.state === "running" || first.responseStatus === null) {
        return yield* new IdempotencyKeyReused({
          detail: `a request with Idempotency-Key '${excerpt(key)}' is still running; retry once it has finished`
        })
      }
      return yield* Effect.die(new Replay(HttpServerResponse.text(first.responseBody ?? "", {
        status: first.responseStatus,
        headers: { ...first.responseHeaders, "idempotent-replayed": "true" }
      })))
    }
    let settled = false
    // on the request's scope itself: `Effect.addFinalizer` would also diff and patch the
    // fiber's refs (its whole context) twice when the scope closes, ~2 % of a create's CPU
    // (measured), for a finalizer that reads nothing from them
    // The record's own writes may fail while the database is down: the answer still goes
    // out; a record left running is taken over once stale (IdempotencyRepo.begin).
    const abandon = repo.abandon(accountId, mode, key).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Idempotency-Key record not abandoned", cause))
    )
    yield* Effect.flatMap(Effect.scope, (scope) =>
      Scope.addFinalizer(scope, Effect.suspend(() => settled ? Effect.void : abandon)))
    yield* HttpApp.appendPreResponseHandler((_request, response) => {
      settled = true
      const body = bodyText(response)
      if (!isRecordable(response.status) || body === null) return Effect.as(abandon, response)
      return Effect.flatMap(answerHeaderOf("x-request-id"), (requestId) => {
        const headers: Record<string, string> = {}
        if (requestId !== undefined) headers["original-request-id"] = requestId
        for (const name of REPLAYED_HEADERS) {
          const value = response.headers[name]
          if (value !== undefined) headers[name] = value
        }
        const contentType = "contentType" in response.body ? response.body.contentType : undefined
        if (contentType !== undefined) headers["content-type"] = contentType
        return Effect.as(
          repo.finish(accountId, mode, key, { status: response.status, body, headers }).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("Idempotency-Key answer not recorded", cause))
          ),
          response
        )
      })
    })
  })
