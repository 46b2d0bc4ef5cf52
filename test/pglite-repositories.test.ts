/**
 * The repository contract against the embedded default: PGlite through its one socket
 * connection, running the Postgres adapter's code unchanged.
 *
 * Opening a new PGlite data directory takes seconds (initdb), so the contract shares one
 * instance (one server, one client, one connection) for the whole file and empties every table
 * before each test. The race tests still pass: their transactions queue for the one connection.
 * The embedded layer itself (pgliteLayer: open, persist, reopen, one opener per directory,
 * clean shutdown) is tested at the end on directories of its own.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Fiber, Layer, ManagedRuntime, Option } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgliteClientLayer, pgliteLayer, PgliteServer, pgliteServerLayer } from "../adapters/pglite/index.js"
import { migrate, PostgresPersistence } from "../adapters/postgres/index.js"
import { AccountRepo } from "../core/ports/repositories.js"
import { Transactor } from "../core/ports/transactor.js"
import { accountsContracts } from "./contracts/accounts.js"
import { lifecycleContract } from "./contracts/lifecycle.js"
import { repositoryContracts } from "./contracts/repositories.js"
import { makeAccount } from "./contracts/fixtures.js"
import { deleteAllRows } from "./support/postgres.js"

const tempDir = await mkdtemp(join(tmpdir(), "hush-pglite-"))
const shared = ManagedRuntime.make(Layer.provideMerge(pgliteClientLayer, pgliteServerLayer({ dataDir: join(tempDir, "shared") })))

beforeAll(async () => {
  await shared.runPromise(migrate)
}, 60_000)

afterAll(async () => {
  await shared.dispose()
  await rm(tempDir, { recursive: true, force: true })
})

/** The shared server's client, emptied, with fresh repositories over it. */
const sharedPersistence = () =>
  PostgresPersistence.pipe(
    Layer.provide(Layer.effectDiscard(deleteAllRows)),
    Layer.provide(Layer.effectContext(Effect.map(shared.runtimeEffect, (runtime) => runtime.context)))
  )

repositoryContracts("pglite", sharedPersistence)
lifecycleContract("pglite", sharedPersistence)
accountsContracts("pglite", sharedPersistence)

describe("pgliteLayer", () => {
  it("persists across a restart, refuses a second opener, and closes cleanly", async () => {
    const dataDir = join(tempDir, "own")
    const account = makeAccount({ name: "Persisted" })
    const timings: Record<string, number> = {}

    const first = Effect.gen(function*() {
      const server = yield* PgliteServer
      timings.createMs = server.openedInMs
      expect(server.created).toBe(true)
      const accounts = yield* AccountRepo
      yield* accounts.insert(account)
      // per-insert latency through the socket, one connection
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TEMP TABLE bench (id int8 PRIMARY KEY, note text)`
      const n = 300
      const t0 = performance.now()
      for (let i = 0; i < n; i++) yield* sql`INSERT INTO bench VALUES (${i}, ${"x"})`
      timings.socketInsertMs = (performance.now() - t0) / n
      const t1 = performance.now()
      for (let i = 0; i < n; i++) yield* accounts.insert(makeAccount())
      timings.accountInsertMs = (performance.now() - t1) / n
      // in process, without the socket, for comparison (the socket is idle meanwhile)
      const t2 = performance.now()
      for (let i = 0; i < n; i++) {
        yield* Effect.promise(() => server.db.query("INSERT INTO bench VALUES ($1, $2)", [n + i, "y"]))
      }
      timings.inProcessInsertMs = (performance.now() - t2) / n
      // a second opener of the same directory is refused while this one is open
      const second = yield* Effect.exit(Effect.scoped(Layer.build(pgliteServerLayer({ dataDir }))))
      expect(second._tag).toBe("Failure")
      expect(String(second._tag === "Failure" ? second.cause : "")).toContain(`is open in process ${process.pid}`)
    })
    await Effect.runPromise(Effect.provide(first, pgliteLayer({ dataDir })))

    const reopened = Effect.gen(function*() {
      const server = yield* PgliteServer
      timings.reopenMs = server.openedInMs
      expect(server.created).toBe(false)
      const stored = yield* Effect.flatMap(AccountRepo, (accounts) => accounts.get(account.id))
      expect(Option.getOrThrow(stored)).toEqual(account)
    })
    await Effect.runPromise(Effect.provide(reopened, pgliteLayer({ dataDir })))
    console.log(`pglite timings (ms): ${JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Number(v.toFixed(3))])))}`)
  }, 60_000)
})

describe("the one connection", () => {
  it("interrupting a transaction mid-query neither stalls nor breaks the connection", async () => {
    const body = Effect.gen(function*() {
      const accounts = yield* AccountRepo
      const transactor = yield* Transactor
      const account = makeAccount()
      yield* accounts.insert(account)
      const started = performance.now()
      for (let i = 0; i < 5; i++) {
        // a transaction that is always in the middle of a statement
        const fiber = yield* Effect.fork(transactor.withTransaction(Effect.forever(accounts.get(account.id))))
        yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(fiber)
      }
      expect(Option.getOrThrow(yield* accounts.get(account.id))).toEqual(account)
      return performance.now() - started
    })
    const elapsed = await Effect.runPromise(Effect.provide(body, sharedPersistence()))
    // node-postgres cancels an interrupted query with pg_cancel_backend on a second connection,
    // which a pool of one lends only once the transaction ends: each interrupt would wait 5 s
    expect(elapsed).toBeLessThan(12_500) // half of the 25 s that five 5-second waits would take
  })
})
