import { SqlClient } from "@effect/sql"
import { Effect, Fiber, Layer } from "effect"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { it } from "vitest"
import { pgliteClientLayer, pgliteServerLayer } from "../adapters/pglite/index.js"

it("stall?", async () => {
  const dir = await mkdtemp(join(tmpdir(), "scratch-"))
  const body = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const t = performance.now()
    const fiber = yield* Effect.fork(sql`SELECT pg_sleep(0.2)`)
    yield* Effect.sleep("50 millis")
    yield* Fiber.interrupt(fiber)
    console.log("interrupt took", performance.now() - t)
    const t2 = performance.now()
    console.log(yield* sql`SELECT 1 AS one`, "next took", performance.now() - t2)
    const fiber2 = yield* Effect.fork(sql.withTransaction(sql`SELECT pg_sleep(0.2)`))
    yield* Effect.sleep("50 millis")
    const t3 = performance.now()
    yield* Fiber.interrupt(fiber2)
    console.log("tx interrupt took", performance.now() - t3)
    console.log(yield* sql`SELECT 2 AS two`)
  })
  await Effect.runPromise(Effect.provide(body, Layer.provideMerge(pgliteClientLayer, pgliteServerLayer({ dataDir: dir }))))
}, 60_000)
