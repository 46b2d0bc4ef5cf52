/**
 * Money and the queue under real concurrency: several OS processes (not only fibers) against
 * one PostgreSQL database, each with its own connection pool, as API nodes and workers run in
 * production. Each test gets a database of its own; the children are
 * test/fixtures/concurrency-worker.ts, started together behind a barrier.
 */
import { MIGRATIONS } from "../../../adapters/postgres/migrations.js"
import { Effect, Layer, Option } from "effect"
import { layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import { DEFAULT_LIMITS, LimitsConfig } from "../../../core/domain/limits.js"
import { authenticate } from "../../../core/services/caller.js"
import { createFile } from "../../../core/services/files.js"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { verifyLedger } from "../../../adapters/postgres/index.js"
import { findModel, ModelCatalog } from "../../../core/domain/catalog.js"
import { FileRecord, JobPricing, JobRecord } from "../../../core/domain/records.js"
import { FileRepo, JobRepo } from "../../../core/ports/repositories.js"
import { priceAudio } from "../../../core/rules/index.js"
import { createAccountWithKeys } from "../../../core/services/accounts.js"
import {
  createDatabase, databaseUrl, dropDatabase, requirePostgres, postgresServices, runSql
} from "../../support/postgres.js"
import { DEFAULT_JOB_OPTIONS } from "../../../core/domain/denoise-options.js"

const ROOT = fileURLToPath(new URL("../../..", import.meta.url))
const WORKER = "test/fixtures/concurrency-worker.ts"

await requirePostgres()

interface Child {
  readonly done: Promise<Record<string, unknown>>
  readonly ready: Promise<void>
  readonly go: () => void
}

/** Starts one worker process; its result is the last JSON line it prints. */
const startChild = (task: string, url: string, input: unknown): Child => {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, task], {
    cwd: ROOT,
    env: { ...process.env, HUSH_DATABASE_URL: url, HUSH_INPUT: JSON.stringify(input) },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += String(chunk)))
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => (markReady = resolve))
  let last: Record<string, unknown> | undefined
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as Record<string, unknown>
    if (message.ready === true) markReady()
    else last = message
  })
  const done = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.on("error", reject)
    child.on("exit", (code) => {
      if (code === 0 && last !== undefined) resolve(last)
      else reject(new Error(`${task} worker ${child.pid} exited with ${code}: ${stderr}`))
    })
  })
  // a child that dies before it is ready must not leave the barrier waiting
  done.catch(() => markReady())
  return { done, ready, go: () => child.stdin.end("go\n") }
}

/** Starts the children, releases them together once all are ready, and collects their results. */
const runTogether = async (children: ReadonlyArray<Child>) => {
  await Promise.all(children.map((c) => c.ready))
  for (const c of children) c.go()
  return Promise.all(children.map((c) => c.done))
}

const databases: Array<string> = []
const freshDatabase = async (prefix: string) => {
  const name = await createDatabase(prefix)
  databases.push(name)
  return databaseUrl(name)
}

afterEach(async () => {
  for (const name of databases.splice(0)) await dropDatabase(name)
})

describe("postgres, several processes", () => {
  it("two fresh processes migrate one empty database at once", async () => {
    const url = await freshDatabase("hush_migrate")
    const results = await runTogether([startChild("migrate", url, {}), startChild("migrate", url, {})])
    expect(results.map((r) => r.migrated)).toEqual([true, true])
    const rows = await runSql(url, (sql) => sql`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`)
    // every migration exactly once, in order, whichever process ran it
    expect(rows).toEqual(Object.keys(MIGRATIONS).map((key) => ({ migration_id: Number(key.slice(0, 4)), name: key.slice(5) })))
  }, 120_000)

  it("50 concurrent job creations from 2 processes against credit for 10: 10 accepted, 40 refused with 402", async () => {
    const url = await freshDatabase("hush_money")
    const DURATION = 12.3
    const setup = Effect.gen(function*() {
      const catalog = yield* ModelCatalog
      const model = Option.getOrThrow(findModel(catalog, catalog.defaultModel.denoise))
      const cost = priceAudio(model, DURATION).costMicros
      // credit for 10 jobs and not quite an 11th
      const credit = 10 * cost + cost - 1
      const created = yield* createAccountWithKeys({ email: "race@example.com", creditMicros: credit })
      const files = yield* FileRepo
      const fileIds: Array<string> = []
      for (let i = 0; i < 50; i++) {
        const id = `file_race${String(i).padStart(3, "0")}`
        fileIds.push(id)
        yield* files.insert(new FileRecord({
          id, accountId: created.account.id, mode: "live", filename: `take-${i}.wav`, contentType: "audio/wav",
          sizeBytes: 1_000_000, status: "ready", durationSeconds: DURATION, error: null, storageKey: `inputs/${id}`,
          multipart: null, createdAt: Date.now(), uploadExpiresAt: Date.now() + 3_600_000, completedAt: Date.now(),
          readyAt: Date.now(), rejectedAt: null
        }))
      }
      return { accountId: created.account.id, key: created.liveKey, fileIds, cost, credit }
    })
    const { accountId, key, fileIds, cost, credit } = await Effect.runPromise(Effect.provide(setup, postgresServices(url)))

    const results = await runTogether([
      startChild("create", url, { key, files: fileIds.slice(0, 25) }),
      startChild("create", url, { key, files: fileIds.slice(25) })
    ])
    const accepted = results.flatMap((r) => r.accepted as Array<string>)
    const refused = results.flatMap((r) => r.refused as Array<{ tag: string; status: number }>)
    expect(results.flatMap((r) => r.defects as Array<string>)).toEqual([])
    expect(accepted).toHaveLength(10)
    expect(new Set(accepted).size).toBe(10)
    expect(refused).toHaveLength(40)
    for (const r of refused) expect(r).toEqual({ tag: "InsufficientCredit", status: 402 })
    // the two processes really ran at the same time
    const [a, b] = results as Array<{ startedAt: number; finishedAt: number }>
    expect(a.startedAt < b.finishedAt && b.startedAt < a.finishedAt).toBe(true)

    // the database, read directly
    const [wallet] = await runSql(url, (sql) =>
      sql<{ balance: string; reserved: string; last_seq: string }>`SELECT balance, reserved, last_seq FROM wallets WHERE account_id = ${accountId}`)
    expect(Number(wallet.balance)).toBe(credit)
    expect(Number(wallet.reserved)).toBe(10 * cost)
    expect(Number(wallet.balance) - Number(wallet.reserved)).toBe(cost - 1)
    expect(Number(wallet.last_seq)).toBe(11)

    const holds = await runSql(url, (sql) =>
      sql<{ job_id: string; amount_micros: string; status: string }>`SELECT job_id, amount_micros, status FROM credit_holds WHERE account_id = ${accountId}`)
    expect(holds).toHaveLength(10)
    expect(holds.map((h) => h.job_id).sort()).toEqual([...accepted].sort())
    for (const h of holds) expect([Number(h.amount_micros), h.status]).toEqual([cost, "open"])

    const jobs = await runSql(url, (sql) =>
      sql<{ id: string; status: string; estimated_micros: string }>`SELECT id, status, estimated_micros FROM jobs WHERE account_id = ${accountId}`)
    expect(jobs.map((j) => j.id).sort()).toEqual([...accepted].sort())
    for (const j of jobs) expect([j.status, Number(j.estimated_micros)]).toEqual(["queued", cost])

    // the ledger chain adds up, entry by entry
    const ledger = await runSql(url, (sql) =>
      sql<Record<string, string>>`SELECT seq, kind, balance_delta, reserved_delta, balance_after, reserved_after, job_id
        FROM ledger_entries WHERE account_id = ${accountId} ORDER BY seq`)
    expect(ledger.map((e) => Number(e.seq))).toEqual(Array.from({ length: 11 }, (_, i) => i + 1))
    expect(ledger.map((e) => e.kind)).toEqual(["grant", ...Array(10).fill("hold")])
    let balance = 0
    let reserved = 0
    for (const e of ledger) {
      balance += Number(e.balance_delta)
      reserved += Number(e.reserved_delta)
      expect([Number(e.balance_after), Number(e.reserved_after)]).toEqual([balance, reserved])
      expect(balance - reserved).toBeGreaterThanOrEqual(0)
    }
    expect([balance, reserved]).toEqual([credit, 10 * cost])
    expect(ledger.filter((e) => e.kind === "hold").map((e) => e.job_id).sort()).toEqual([...accepted].sort())
    // and the operators' checks (docs/operations.md) find nothing
    expect(await runSql(url, () => verifyLedger)).toEqual({ chain: [], wallets: [], lotsAndHolds: [], jobs: [] })
    console.log(`money race: ${results.map((r) => `pid ${r.pid as number} accepted ${(r.accepted as Array<string>).length} in ${(r.finishedAt as number) - (r.startedAt as number)} ms`).join("; ")}`)
  }, 120_000)

  it("2 processes × 4 claim loops over 20 queued jobs: each job claimed exactly once", async () => {
    const url = await freshDatabase("hush_claims")
    const seed = Effect.gen(function*() {
      const jobs = yield* JobRepo
      const ids: Array<string> = []
      const t0 = Date.now() - 60_000
      for (let i = 0; i < 20; i++) {
        const id = `job_claim${String(i).padStart(3, "0")}`
        ids.push(id)
        yield* jobs.insert(new JobRecord({
          id, accountId: "acct_claims", mode: "live", keyId: null, task: "denoise", model: "xiph/rnnoise",
          status: "queued", progress: 0, fileId: `file_claim${i}`, inputFilename: "a.wav", inputStorageKey: `inputs/${i}`,
          durationSeconds: 10, options: DEFAULT_JOB_OPTIONS, pricing: new JobPricing({
            billableSeconds: 10, minimumApplied: true, unitPriceMicros: 100, pricingVersion: 1, estimatedMicros: 1_000
          }),
          chargedMicros: null, ledgerTxnId: null, output: null, error: null, attempts: 0, leaseOwner: null,
          leaseExpiresAt: null, createdAt: t0 + i, startedAt: null, finishedAt: null
        }))
      }
      return ids
    })
    const ids = await Effect.runPromise(Effect.provide(seed, postgresServices(url)))

    const results = await runTogether([startChild("claim", url, { loops: 4 }), startChild("claim", url, { loops: 4 })])
    const claims = results.flatMap((r) => r.claims as Array<{ id: string; owner: string }>)
    expect(claims).toHaveLength(20)
    expect(claims.map((c) => c.id).sort()).toEqual(ids)

    const rows = await runSql(url, (sql) =>
      sql<{ id: string; status: string; attempts: number; lease_owner: string }>`SELECT id, status, attempts, lease_owner FROM jobs ORDER BY id`)
    const ownerOf = new Map(claims.map((c) => [c.id, c.owner]))
    for (const row of rows) {
      expect([row.status, row.attempts, row.lease_owner]).toEqual(["processing", 1, ownerOf.get(row.id)])
    }
    console.log(`claims: ${results.map((r) => `pid ${r.pid as number} claimed ${(r.claims as Array<unknown>).length}`).join("; ")}`)
  }, 120_000)
})

describe("postgres, upload quotas under concurrency", () => {
  it("20 concurrent file creations of one account against 5 open uploads: exactly 5 created", async () => {
    const url = await freshDatabase("hush_quota")
    // the last layer's LimitsConfig wins over the default one of postgresServices
    const services = Layer.mergeAll(
      postgresServices(url, { maxConnections: 10 }),
      layerMemoryBlobStore,
      Layer.succeed(LimitsConfig, { ...DEFAULT_LIMITS, openUploads: 5 })
    )
    const outcome = await Effect.runPromise(Effect.gen(function*() {
      const created = yield* createAccountWithKeys({ email: "quota@example.com" })
      const caller = yield* authenticate(`Bearer ${created.liveKey}`)
      const results = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) =>
          Effect.either(createFile(caller, { filename: `f${i}.wav`, sizeBytes: 1_000, contentType: "audio/wav" }))),
        { concurrency: "unbounded" }
      )
      const open = yield* Effect.flatMap(FileRepo, (files) => files.countOpenUploads(created.account.id, "live", Date.now()))
      return { results, open }
    }).pipe(Effect.provide(services)))
    const created = outcome.results.filter((r) => r._tag === "Right")
    const refused = outcome.results.filter((r) => r._tag === "Left").map((r) => (r as { left: { _tag: string } }).left._tag)
    expect(created).toHaveLength(5)
    expect(refused).toEqual(Array(15).fill("QuotaExceeded"))
    expect(outcome.open).toBe(5)
  }, 60_000)
})
