/**
 * A worker killed in the middle of a job (issue acceptance): real OS processes on one fresh
 * PostgreSQL database. An API process (`apps/api/server/main.ts`, HUSH_WORKER=off) and worker
 * processes (`apps/worker/main.ts`) share DATABASE_URL and DATA_DIR, so the local blob store
 * (DATA_DIR/blobs) and the signing secret are common to them, as on one machine; the workers
 * run with a short lease (HUSH_JOB_LEASE_MS).
 *
 * Worker 1 claims a live job and is SIGKILLed (its whole process group: node, its threads,
 * its ffmpeg children) while the job is `processing`. Worker 2 starts, finds the lease
 * lapsed, puts the job back and claims it again (attempt 2), and finishes it. The job
 * succeeds, and the account is charged exactly once: one `capture` for the job, balance =
 * start − cost, nothing reserved, and the ledger checks (verifyLedger) find nothing.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyLedger } from "../../../adapters/postgres/index.js"
import { call, credits, denoise, ffprobeDuration, pollUntil, readyFile, sleep, tone } from "../../e2e/helpers.js"
import { createDatabase, databaseUrl, dropDatabase, requirePostgres, runSql } from "../../support/postgres.js"
import { entryPid, type HushProcess, runCli, startProcess, waitForHealth } from "../../support/process.js"
import { freePort, type TestServer } from "../../support/server.js"

/** Long enough that the job is still running when worker 1 is killed (≈ 4 s of work on 2 cores). */
const SECONDS = 120
const LEASE_MS = 2_000
const CREDIT = 1_000_000

await requirePostgres()

interface JobRow {
  readonly status: string
  readonly attempts: number
  readonly lease_owner: string | null
  readonly progress: number
}

/** True while any process of the group `pgid` is alive. */
const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

describe("a worker killed mid-job", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hush-worker-kill-"))
  let database = ""
  const processes: Array<HushProcess> = []

  beforeAll(async () => {
    database = await createDatabase("hush_worker_kill")
  })

  afterAll(async () => {
    for (const p of processes) await p.stop("SIGKILL")
    if (database !== "") await dropDatabase(database)
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("worker 2 takes the job over after the lease lapses and finishes it; charged exactly once", async () => {
    const url = databaseUrl(database)
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const env = {
      PORT: String(port), DATA_DIR: dataDir, PUBLIC_BASE_URL: baseUrl, DATABASE_URL: url,
      HUSH_WORKER: "off", HUSH_JOB_LEASE_MS: String(LEASE_MS)
    }
    const api = { baseUrl } as TestServer
    const start = (entry: string) => {
      const started = startProcess(entry, env)
      processes.push(started)
      return started
    }
    const jobRow = async (id: string) =>
      (await runSql(url, (sql) => sql<JobRow>`SELECT status, attempts, lease_owner, progress FROM jobs WHERE id = ${id}`))[0]!

    const server = start("apps/api/server/main.ts")
    await waitForHealth(baseUrl, server)
    const account = await runCli(["admin", "account", "create", "--email", "kill@example.com", "--credit-micros", String(CREDIT)], env)
    const fileId = await readyFile(api, account.live_key, tone(SECONDS), { filename: "long.wav" })
    const created = await denoise(api, account.live_key, { file: fileId })
    expect(created.status, created.text).toBe(202)
    const jobId = created.json.id as string
    const cost = created.json.cost.estimated_micros as number
    expect(cost).toBe(SECONDS * 100)
    // nothing runs it yet: the API runs no worker
    await sleep(300)
    expect(await jobRow(jobId)).toMatchObject({ status: "queued", attempts: 0 })

    // worker 1 claims it, and is killed once a heartbeat shows progress (the pipeline reports it
    // per chunk), or 1 s into the job, whichever comes first
    const t0 = Date.now()
    const worker1 = start("apps/worker/main.ts")
    const owner1 = `worker-${hostname()}-${await entryPid(worker1)}`
    let claimedAt = 0
    let running: JobRow | undefined
    while (running === undefined) {
      if (worker1.child.exitCode !== null) throw new Error(`worker 1 exited early:\n${worker1.output()}`)
      if (Date.now() - t0 > 30_000) throw new Error(`worker 1 did not claim the job:\n${worker1.output()}`)
      const row = await jobRow(jobId)
      expect(row.status, "the job ended before worker 1 could be killed").not.toMatch(/succeeded|failed/)
      if (row.status === "processing") {
        claimedAt ||= Date.now()
        expect(row).toMatchObject({ attempts: 1, lease_owner: owner1 })
        if (row.progress > 0 || Date.now() - claimedAt > 1_000) running = row
      }
      if (running === undefined) await sleep(10)
    }
    expect(await worker1.stop("SIGKILL")).toBe("SIGKILL")
    const killedAt = Date.now()
    // the whole group is gone (the node process, its ffmpeg children)
    for (let i = 0; i < 100 && groupAlive(worker1.child.pid!); i++) await sleep(20)
    expect(groupAlive(worker1.child.pid!)).toBe(false)
    const orphan = await jobRow(jobId)
    expect(orphan).toMatchObject({ status: "processing", attempts: 1, lease_owner: owner1 })
    expect(orphan.progress).toBeLessThan(1)
    // worker 1 stored no output
    const outputPath = join(dataDir, "blobs", "objects", "outputs", `${jobId}.mp3`)
    expect(existsSync(outputPath)).toBe(false)
    const tmpDir = join(dataDir, "blobs", "tmp")
    const leftovers = existsSync(tmpDir) ? readdirSync(tmpDir).length : 0
    const atKill = (await call(api, "GET", `/v1/jobs/${jobId}`, { key: account.live_key })).json
    expect(atKill).toMatchObject({ status: "processing", output: null, cost: { charged_micros: null } })
    expect(await credits(api, account.live_key)).toMatchObject({ balance_micros: CREDIT, reserved_micros: cost })

    // worker 2: the lease lapses, worker 2 claims the job again and finishes it
    const worker2 = start("apps/worker/main.ts")
    const owner2 = `worker-${hostname()}-${await entryPid(worker2)}`
    expect(owner2).not.toBe(owner1)
    let reclaimedAt = 0
    const done = await pollUntil(
      async () => {
        if (worker2.child.exitCode !== null) throw new Error(`worker 2 exited:\n${worker2.output()}`)
        const reply = await call(api, "GET", `/v1/jobs/${jobId}`, { key: account.live_key })
        if (reclaimedAt === 0 && reply.json?.status === "processing" && (await jobRow(jobId)).attempts === 2) reclaimedAt = Date.now()
        await sleep(100)
        return reply
      },
      (r) => ["succeeded", "failed", "canceled"].includes(r.json?.status),
      60_000
    )
    const finishedAt = Date.now()
    const job = done.json
    expect(job.status, `${JSON.stringify(job)}\n${worker2.output()}`).toBe("succeeded")
    expect(job.progress).toBe(1)
    expect(job.error).toBeNull()
    expect(job.cost).toMatchObject({ estimated_micros: cost, charged_micros: cost })
    expect(job.receipt.charged_micros).toBe(cost)
    expect(await jobRow(jobId)).toMatchObject({ status: "succeeded", attempts: 2, lease_owner: null })

    // charged exactly once
    const entries = await runSql(url, (sql) =>
      sql<{ id: string; kind: string; balance_delta: string; reserved_delta: string }>`
        SELECT id, kind, balance_delta, reserved_delta FROM ledger_entries WHERE job_id = ${jobId} ORDER BY seq`)
    expect(entries.map((e) => e.kind)).toEqual(["hold", "capture"])
    expect(entries[1]!.id).toBe(job.receipt.ledger_txn_id)
    expect([Number(entries[1]!.balance_delta), Number(entries[1]!.reserved_delta)]).toEqual([-cost, -cost])
    const [wallet] = await runSql(url, (sql) =>
      sql<{ balance: string; reserved: string }>`SELECT balance, reserved FROM wallets WHERE account_id = ${account.account_id}`)
    expect([Number(wallet!.balance), Number(wallet!.reserved)]).toEqual([CREDIT - cost, 0])
    expect(await credits(api, account.live_key)).toMatchObject({
      balance_micros: CREDIT - cost, reserved_micros: 0, available_micros: CREDIT - cost
    })
    expect(await runSql(url, () => verifyLedger)).toEqual({ chain: [], wallets: [], lotsAndHolds: [], jobs: [] })

    // worker 2's output, served by the API process from the shared DATA_DIR
    const link = await call(api, "GET", `/v1/jobs/${jobId}/output`, { key: account.live_key })
    expect(link.status, link.text).toBe(200)
    const mp3 = new Uint8Array(await (await fetch(link.json.url)).arrayBuffer())
    expect(mp3.length).toBe(job.output.size_bytes)
    expect(existsSync(outputPath)).toBe(true)
    const probed = ffprobeDuration(mp3, "out.mp3")
    expect(probed.formatName).toBe("mp3")
    expect(Math.abs(probed.duration - SECONDS)).toBeLessThan(0.5)

    // worker 2 stops gracefully; the API too
    expect(await worker2.stop("SIGTERM")).toBe(0)
    expect(await server.stop("SIGTERM")).toBe(0)
    console.log(`worker kill: claimed ${claimedAt - t0} ms after worker 1 started, killed ${killedAt - claimedAt} ms after the claim ` +
      `(progress ${orphan.progress.toFixed(2)}); reclaimed by worker 2 ${reclaimedAt === 0 ? "?" : reclaimedAt - killedAt} ms after the kill; ` +
      `succeeded ${finishedAt - killedAt} ms after the kill; temp files left by worker 1: ${leftovers}`)
  }, 120_000)
})
