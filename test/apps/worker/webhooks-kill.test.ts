/**
 * A worker killed mid-delivery does not lose the delivery (issue 13 acceptance): real OS
 * processes on one fresh PostgreSQL database. The API process (HUSH_WORKER=off) writes a
 * `file.ready` delivery with the file's verdict; worker 1 claims it and sends it to a receiver
 * that does not answer, and is SIGKILLed mid-attempt. The delivery stays pending under worker
 * 1's lease, which lapses (HUSH_WEBHOOK_LEASE_MS); worker 2 claims it and delivers it: the
 * receiver sees the same event (same `webhook-id`, same body) twice, and the log shows one
 * delivered attempt.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, pollUntil, readyFile, sleep } from "../../e2e/helpers.js"
import { createDatabase, databaseUrl, dropDatabase, requirePostgres, runSql } from "../../support/postgres.js"
import { type HushProcess, runCli, startProcess, waitForHealth } from "../../support/process.js"
import { freePort, type TestServer } from "../../support/server.js"
import { type Receiver, startReceiver } from "../../support/webhook-receiver.js"

const LEASE_MS = 2_000

await requirePostgres()

interface DeliveryRow {
  readonly status: string
  readonly lease_owner: string | null
  readonly attempts: ReadonlyArray<unknown>
}

describe("a worker killed mid-delivery", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hush-webhook-kill-"))
  let database = ""
  let receiver: Receiver
  let answer: "hang" | 200 = "hang"
  const processes: Array<HushProcess> = []

  beforeAll(async () => {
    database = await createDatabase("hush_webhook_kill")
    receiver = await startReceiver(() => answer)
  })
  afterAll(async () => {
    for (const p of processes) await p.stop("SIGKILL")
    await receiver.close()
    if (database !== "") await dropDatabase(database)
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("worker 2 sends it again after worker 1's lease lapses; nothing is lost", async () => {
    const url = databaseUrl(database)
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const env = {
      PORT: String(port), DATA_DIR: dataDir, PUBLIC_BASE_URL: baseUrl, DATABASE_URL: url,
      HUSH_WORKER: "off", HUSH_WEBHOOK_LEASE_MS: String(LEASE_MS),
      // the receiver is on 127.0.0.1
      WEBHOOKS_ALLOW_PRIVATE: "true"
    }
    const api = { baseUrl } as TestServer
    const start = (entry: string) => {
      const started = startProcess(entry, env)
      processes.push(started)
      return started
    }
    const deliveries = () =>
      runSql(url, (sql) => sql<DeliveryRow>`SELECT status, lease_owner, attempts FROM webhook_deliveries`)

    const server = start("apps/api/server/main.ts")
    await waitForHealth(baseUrl, server)
    const account = await runCli(["admin", "account", "create", "--email", "hook-kill@example.com"], env)
    const created = await call(api, "POST", "/v1/webhook_endpoints", {
      key: account.test_key, body: { url: receiver.url, events: ["file.ready"] }
    })
    expect(created.status, created.text).toBe(201)
    await readyFile(api, account.test_key)
    // written with the verdict; nothing sends it yet (the API runs no worker)
    await sleep(300)
    expect(await deliveries()).toEqual([{ status: "pending", lease_owner: null, attempts: [] }])
    expect(receiver.received).toHaveLength(0)

    // worker 1 claims it and is killed while its attempt waits for an answer
    const worker1 = start("apps/worker/main.ts")
    await receiver.waitFor(1, 60_000)
    expect(await worker1.stop("SIGKILL")).toBe("SIGKILL")
    const [orphan] = await deliveries()
    expect(orphan).toMatchObject({ status: "pending", attempts: [] })
    expect(orphan!.lease_owner).toMatch(/^worker-.*\/webhooks\/\d+$/)

    // worker 2 claims it once the lease lapsed, and it is delivered
    answer = 200
    const worker2 = start("apps/worker/main.ts")
    const log = await pollUntil(
      async () => {
        if (worker2.child.exitCode !== null) throw new Error(`worker 2 exited:\n${worker2.output()}`)
        return call(api, "GET", `/v1/webhook_endpoints/${created.json.id}/deliveries`, { key: account.test_key })
      },
      (r) => r.json?.data?.[0]?.status === "succeeded",
      60_000
    )
    const [delivery] = log.json.data
    expect(delivery.attempts).toHaveLength(1)
    expect(delivery.attempts[0]).toMatchObject({ status_code: 200, error: null })
    expect(receiver.received).toHaveLength(2)
    const [first, second] = receiver.received
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"])
    expect(second!.body).toBe(first!.body)
    const verified = new Webhook(created.json.secret).verify(second!.body, {
      "webhook-id": String(second!.headers["webhook-id"]),
      "webhook-timestamp": String(second!.headers["webhook-timestamp"]),
      "webhook-signature": String(second!.headers["webhook-signature"])
    })
    expect(verified).toMatchObject({ type: "file.ready", id: delivery.event_id })
    expect(await deliveries()).toEqual([expect.objectContaining({ status: "succeeded", lease_owner: null })])

    expect(await worker2.stop("SIGTERM")).toBe(0)
    expect(await server.stop("SIGTERM")).toBe(0)
  }, 120_000)
})
