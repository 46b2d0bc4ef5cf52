/**
 * The edge's idempotency record (apps/api/server/edge/idempotency.ts) over the in-memory repository:
 * an answered request leaves its answer for replay; one whose scope closes without an answer
 * (the client went away, the fiber was interrupted) leaves no record, so a retry runs afresh.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FiberRef, Option } from "effect"
import { layerMemoryPersistence } from "../../../../../adapters/memory/index.js"
import { idempotent } from "../../../../../apps/api/server/edge/idempotency.js"
import { IdempotencyRepo } from "../../../../../core/ports/repositories.js"

const request = { accountId: "acct_1", mode: "test" as const, method: "POST", path: "/v1/audio/denoise", body: "{\"file\":\"file_1\"}" }
const answered = HttpServerRequest.fromWeb(new Request("http://localhost/v1/audio/denoise", { method: "POST" }))

describe("idempotency records at the edge", () => {
  it.effect("a request that ends without an answer leaves no record; an answered one leaves its answer", () =>
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      yield* Effect.scoped(idempotent(repo, 60_000, { ...request, key: "went-away" }))
      expect(Option.isNone(yield* repo.get("acct_1", "test", "went-away"))).toBe(true)

      yield* Effect.scoped(Effect.gen(function*() {
        yield* idempotent(repo, 60_000, { ...request, key: "answered" })
        const handler = yield* FiberRef.get(HttpApp.currentPreResponseHandlers)
        expect(Option.isSome(handler)).toBe(true)
        if (Option.isSome(handler)) yield* handler.value(answered, HttpServerResponse.text("{\"id\":\"job_1\"}", { status: 202, contentType: "application/json" }))
      }))
      const kept = yield* repo.get("acct_1", "test", "answered")
      expect(Option.isSome(kept)).toBe(true)
      if (Option.isSome(kept)) expect(kept.value).toMatchObject({ state: "done", responseStatus: 202, responseBody: "{\"id\":\"job_1\"}" })
    }).pipe(Effect.provide(layerMemoryPersistence)))
})
