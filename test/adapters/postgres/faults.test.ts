/**
 * The PostgreSQL adapter when the network to the server misbehaves (decisions.md, Faults), on a
 * real server behind the fault proxy (test/support/fault-proxy.ts):
 *   - a silent server (black hole), on an open connection or a new one: the statement fails
 *     within the pool's deadlines as DependencyUnavailable (the API's 503), never hangs, and
 *     the pool serves again once the server answers;
 *   - a refused connection: DependencyUnavailable at once;
 *   - a process that starts while the server is unreachable waits for it (layerPostgresFromUrl);
 *   - a success whose COMMIT landed but whose answer was lost: the worker's retry of the move
 *     is refused (the job is no longer processing) and the account is charged once.
 */
import { Cause, Duration, Effect, Exit, Layer, ManagedRuntime, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DependencyUnavailable } from "../../../core/ports/unavailable.js"
import { FileRecord } from "../../../core/domain/records.js"
import { AccountRepo, FileRepo, WalletRepo } from "../../../core/ports/repositories.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import { authenticate } from "../../../core/services/caller.js"
import { createDenoiseJob } from "../../../core/services/jobs.js"
import { claimNext, succeedJob } from "../../../core/services/worker.js"
import { type FaultProxy, startFaultProxy } from "../../support/fault-proxy.js"
import { createDatabase, databaseUrl, dropDatabase, postgresServices, requirePostgres, runSql } from "../../support/postgres.js"

await requirePostgres()

/** The dependency a failed exit says was unavailable, and how long it took. */
const timed = async <A, E>(run: () => Promise<Exit.Exit<A, E>>) => {
  const started = Date.now()
  const exit = await run()
  const unavailable = Exit.isFailure(exit)
    ? [...Cause.defects(exit.cause)].find((d): d is DependencyUnavailable => d instanceof DependencyUnavailable)
    : undefined
  return { exit, unavailable, ms: Date.now() - started }
}

describe("postgres behind a faulty network", () => {
  let database = ""
  let proxy: FaultProxy
  let services: ReturnType<typeof postgresServices>
  let runtime: { run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<Exit.Exit<A, E>>; dispose: () => Promise<void> }

  beforeAll(async () => {
    database = await createDatabase("hush_pg_faults")
    const direct = new URL(databaseUrl(database))
    proxy = await startFaultProxy({ target: { host: direct.hostname, port: Number(direct.port || 5432) } })
    const proxied = new URL(direct)
    proxied.hostname = "127.0.0.1"
    proxied.port = String(proxy.port)
    // short deadlines, so that the test waits seconds; the key cache off (it holds a connection of its own)
    services = postgresServices(proxied.toString(), { queryTimeout: Duration.seconds(1), connectTimeout: Duration.seconds(1), maxConnections: 2 })
    const managed = ManagedRuntime.make(services as Layer.Layer<any, any>)
    runtime = {
      run: (effect) => managed.runPromiseExit(effect as Effect.Effect<any, any, never>),
      dispose: () => managed.dispose()
    }
    await runtime.run(Effect.void)
  }, 60_000)

  afterAll(async () => {
    await proxy?.heal()
    await runtime?.dispose()
    await proxy?.close()
    if (database !== "") await dropDatabase(database)
  })

  const probe = () => runtime.run(Effect.flatMap(AccountRepo, (accounts) => accounts.get("acct_probe")))

  it("a silent server: the statement fails within the deadline as DependencyUnavailable; the pool answers again after", async () => {
    expect(Exit.isSuccess(await probe())).toBe(true)
    await proxy.set({ blackHole: true })
    // the pool's connections are open: the statement is sent and never answered
    const silent = await timed(probe)
    expect(silent.unavailable?.dependency).toBe("database")
    expect(silent.unavailable?.message).toMatch(/did not answer within 1000 ms|Connection terminated/)
    // a new connection is not answered either: the connect deadline
    const again = await timed(probe)
    expect(again.unavailable?.dependency).toBe("database")
    await proxy.heal()
    const back = await probe()
    expect(Exit.isSuccess(back), String(back)).toBe(true)
  }, 30_000)

  it("a refused connection: DependencyUnavailable", async () => {
    proxy.resetAll()
    await proxy.set({ refuse: true })
    const refused = await timed(probe)
    expect(refused.unavailable?.dependency).toBe("database")
    await proxy.heal()
    expect(Exit.isSuccess(await probe())).toBe(true)
  }, 30_000)

  it("a process that starts while the database is unreachable waits for it, and starts once it answers", async () => {
    const direct = new URL(databaseUrl(database))
    const closed = await startFaultProxy({ target: { host: direct.hostname, port: Number(direct.port || 5432) } })
    await closed.set({ refuse: true })
    const via = new URL(direct)
    via.hostname = "127.0.0.1"
    via.port = String(closed.port)
    const starting = ManagedRuntime.make(postgresServices(via.toString(), { connectTimeout: Duration.seconds(1) }) as Layer.Layer<any, any>)
    const started = starting.runPromiseExit(Effect.flatMap(AccountRepo, (accounts) => accounts.get("acct_probe")))
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    await closed.heal()
    const exit = await started
    await starting.dispose()
    await closed.close()
    expect(Exit.isSuccess(exit), String(exit)).toBe(true)
  }, 30_000)

  it("a success whose COMMIT answer was lost: committed once; the retry is refused and charges nothing more", async () => {
    const setup = await runtime.run(Effect.gen(function*() {
      const created = yield* createAccountWithKeys({ email: "commit@example.com", creditMicros: 1_000_000 })
      const caller = yield* authenticate(`Bearer ${created.liveKey}`)
      const now = Date.now()
      yield* Effect.flatMap(FileRepo, (files) => files.insert(new FileRecord({
        id: "file_commit", accountId: created.account.id, mode: "live", filename: "a.wav", contentType: "audio/wav",
        sizeBytes: 1_000, status: "ready", durationSeconds: 12, error: null, storageKey: "inputs/file_commit",
        multipart: null, createdAt: now, uploadExpiresAt: now + 3_600_000, completedAt: now, readyAt: now, rejectedAt: null
      })))
      const job = yield* createDenoiseJob(caller, { file: "file_commit" })
      const claimed = yield* claimNext("w1")
      expect(Option.map(claimed, (j) => j.id)).toEqual(Option.some(job.id))
      return { job, accountId: created.account.id }
    }))
    if (Exit.isFailure(setup)) throw new Error(String(setup.cause))
    const { job, accountId } = setup.value
    const output = { storageKey: `outputs/${job.id}.mp3`, sizeBytes: 10, bitrateKbps: 192, format: "mp3" }

    await proxy.set({ cutOnMatch: "COMMIT", holdMs: 200 })
    const lost = await timed(() => runtime.run(succeedJob(job.id, "w1", output)))
    await proxy.heal()
    expect(lost.unavailable?.dependency, String(lost.exit)).toBe("database")
    // it landed
    const [row] = await runSql(databaseUrl(database), (sql) => sql<{ status: string }>`SELECT status FROM jobs WHERE id = ${job.id}`)
    expect(row!.status).toBe("succeeded")
    // the worker's retry finds it finished: refused, nothing more captured
    const retried = await runtime.run(succeedJob(job.id, "w1", output))
    expect(Exit.isFailure(retried) && Cause.failureOption(retried.cause).pipe(Option.map((e) => e._tag), Option.getOrUndefined)).toBe("JobTransitionRefused")
    const ledger = await runtime.run(Effect.flatMap(WalletRepo, (w) => w.ledgerForJob(job.id)))
    expect(Exit.isSuccess(ledger) && ledger.value.map((e) => e.kind)).toEqual(["hold", "capture"])
    const [wallet] = await runSql(databaseUrl(database), (sql) =>
      sql<{ balance: string; reserved: string }>`SELECT balance, reserved FROM wallets WHERE account_id = ${accountId}`)
    expect([Number(wallet!.balance), Number(wallet!.reserved)]).toEqual([1_000_000 - job.pricing.estimatedMicros, 0])
  }, 30_000)
})
