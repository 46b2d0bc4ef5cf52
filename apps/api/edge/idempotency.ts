/**
 * `Idempotency-Key` on POSTs that create or change something (decisions.md): a replay returns
 * the first status and body with `Idempotent-Replayed: true`; another body or path, or a first
 * request still running, is `409 idempotency_key_reused`; 429 and 5xx are not recorded.
 * Keys are scoped to account and mode and kept 24 hours. A replay has its own `X-Request-Id`;
 * `Original-Request-Id` names the first request, whose id a replayed error body carries.
 */
import { HttpServerResponse } from "@effect/platform"
import { sha256 } from "@oslojs/crypto/sha2"
import { encodeHexLowerCase } from "@oslojs/encoding"
import { Clock, Effect } from "effect"
import { LimitsConfig } from "../../../core/domain/limits.js"
import { IdempotencyRecord } from "../../../core/domain/records.js"
import { IdempotencyKeyReused, InvalidRequest } from "../../../core/errors.js"
import { IdempotencyRepo } from "../../../core/ports/repositories.js"
import type { Caller } from "../../../core/services/caller.js"

/** The endpoints (HttpApi names) that accept `Idempotency-Key`: POSTs that create or change something. */
export const IDEMPOTENT_ENDPOINTS: ReadonlySet<string> = new Set(["createFile", "completeFile", "createDenoiseJob", "cancelJob", "createCheckout"])

const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/

export const checkIdempotencyKey = (key: string) =>
  KEY_PATTERN.test(key)
    ? Effect.succeed(key)
    : Effect.fail(new InvalidRequest({
      status: 400, field: "Idempotency-Key", detail: "the Idempotency-Key header must be 1 to 255 printable ASCII characters"
    }))

const fingerprint = (method: string, path: string, body: string) =>
  encodeHexLowerCase(sha256(new TextEncoder().encode(`${method}\n${path}\n${body}`)))

/** Headers worth replaying: the rest (request id, rate limits) belong to the new request. */
const REPLAYED_HEADERS = ["location", "retry-after"]

const isRecordable = (status: number) => status !== 429 && status < 500

export const withIdempotency = <E, R>(
  caller: Caller,
  request: {
    readonly key: string
    readonly method: string
    readonly path: string
    readonly body: string
    readonly requestId: string
  },
  run: Effect.Effect<{ readonly response: HttpServerResponse.HttpServerResponse; readonly body: string }, E, R>
) =>
  Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const limits = yield* LimitsConfig
    const now = yield* Clock.currentTimeMillis
    const print = fingerprint(request.method, request.path, request.body)
    const begun = yield* repo.begin(new IdempotencyRecord({
      accountId: caller.accountId, mode: caller.mode, key: request.key, method: request.method, path: request.path,
      fingerprint: print, state: "running", responseStatus: null, responseBody: null, responseHeaders: null,
      createdAt: now, expiresAt: now + limits.idempotencyTtlMs
    }))
    if (begun._tag === "Existing") {
      const first = begun.record
      if (first.fingerprint !== print || first.path !== request.path || first.method !== request.method) {
        return yield* new IdempotencyKeyReused({
          detail: `Idempotency-Key '${request.key}' was used for another request (${first.method} ${first.path} with a different body)`
        })
      }
      if (first.state === "running" || first.responseStatus === null) {
        return yield* new IdempotencyKeyReused({
          detail: `a request with Idempotency-Key '${request.key}' is still running; retry once it has finished`
        })
      }
      return HttpServerResponse.text(first.responseBody ?? "", {
        status: first.responseStatus,
        headers: { ...first.responseHeaders, "idempotent-replayed": "true" }
      })
    }
    // the record is settled (finished or abandoned) even when the request is interrupted
    const outcome = yield* Effect.exit(restore(run))
    if (outcome._tag === "Failure") {
      yield* repo.abandon(caller.accountId, caller.mode, request.key)
      return yield* Effect.failCause(outcome.cause)
    }
    const { response, body } = outcome.value
    if (isRecordable(response.status)) {
      const headers: Record<string, string> = { "original-request-id": request.requestId }
      for (const name of REPLAYED_HEADERS) {
        const value = response.headers[name]
        if (value !== undefined) headers[name] = value
      }
      const contentType = "contentType" in response.body ? response.body.contentType : undefined
      if (contentType !== undefined) headers["content-type"] = contentType
      yield* repo.finish(caller.accountId, caller.mode, request.key, { status: response.status, body, headers })
    } else {
      yield* repo.abandon(caller.accountId, caller.mode, request.key)
    }
    return response
  }))
