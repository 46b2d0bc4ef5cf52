/**
 * One chaos run (issue 34): the fleet (./fleet.ts), customers and their webhook endpoints, the
 * workload (./workload.ts) while the schedule (./schedule.ts) injects faults, then health,
 * settling and the invariants (./invariants.ts), reported as a table. `npm run chaos` runs the
 * short schedule; `npm run chaos -- --minutes 20` a long one; test/e2e/chaos.test.ts the short one.
 */
import { listOutbox } from "../../../adapters/mail/outbox.js"
import { ChaosClient, newTally } from "./client.js"
import { createAccount, type Fleet, startFleet } from "./fleet.js"
import { type CheckRow, checkInvariants, moneyMoved, query, settle } from "./invariants.js"
import { startReceiver } from "./receiver.js"
import { longSchedule, seeded, shortSchedule } from "./schedule.js"
import { type DashboardUser, type KeyCustomer, makeAudio, newWorkload, runBuyer, runCustomer, type WorkloadContext } from "./workload.js"

export interface ChaosOptions {
  /** A long run of this many minutes of faults; absent: the short schedule. */
  readonly minutes?: number | undefined
  readonly seed?: number | undefined
  /** Only the faults whose kind contains this text (e.g. `COMMIT`, `SIGKILL`, `s3`): to reproduce one. */
  readonly only?: string | undefined
  readonly log?: ((line: string) => void) | undefined
}

export interface ChaosReport {
  readonly rows: ReadonlyArray<CheckRow>
  readonly summary: ReadonlyArray<readonly [string, string]>
  readonly violations: number
  /** The report as Markdown tables. */
  readonly table: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const EVENTS = ["job.succeeded", "job.failed", "job.canceled", "file.ready", "file.rejected"]

/** A verified dashboard user with a session, as a browser would have after signing up and confirming the e-mail. */
const dashboardUser = async (fleet: Fleet, client: ChaosClient): Promise<DashboardUser> => {
  const base = fleet.apis[0]!.baseUrl!
  const email = `buyer-${Date.now()}@example.com`
  const signup = await fetch(`${base}/v1/auth/signup`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery staple 42", accept_terms: true })
  })
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${await signup.text()}`)
  const cookie = signup.headers.getSetCookie().map((c) => c.split(";")[0]!).join("; ")
  const csrf = ((await signup.json()) as { csrf_token: string }).csrf_token
  let token: string | undefined
  for (let i = 0; i < 100 && token === undefined; i++) {
    const mail = (await listOutbox(fleet.dataDir, { to: email })).find((m) => /verify/i.test(m.subject))
    const link = mail?.links.find((l) => l.includes("/verify-email?token="))
    token = link === undefined ? undefined : new URL(link).searchParams.get("token") ?? undefined
    if (token === undefined) await sleep(100)
  }
  const verified = await client.request("POST", "/v1/auth/email/verify", { headers: { cookie, "x-csrf-token": csrf }, body: { token } })
  if (verified?.status !== 200) throw new Error(`verify: ${verified?.status} ${verified?.text}`)
  const session = await client.request("GET", "/v1/auth/session", { headers: { cookie } })
  return { accountId: session?.json?.account?.id ?? session?.json?.account_id ?? "unknown", cookie, csrf }
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`)].join("\n")

const micros = (n: number) => `$${(n / 1_000_000).toFixed(2)}`

export const runChaos = async (options: ChaosOptions = {}): Promise<ChaosReport> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const seed = options.seed ?? Date.now() % 1_000_000
  const random = seeded(seed)
  const startedAt = Date.now()
  log(`chaos: ${options.minutes === undefined ? "short schedule" : `${options.minutes} minutes`}, seed ${seed}`)
  const audio = makeAudio()
  const receiver = await startReceiver()
  const fleet = await startFleet({ log })
  // stopped by hand (Ctrl-C): the fleet's processes, PostgreSQL and Redis go too
  const interrupted = () => {
    log("chaos: interrupted; stopping the fleet")
    void fleet.close().finally(() => process.exit(130))
  }
  process.once("SIGINT", interrupted)
  process.once("SIGTERM", interrupted)
  try {
    const tally = newTally()
    let stopping = false
    const client = new ChaosClient(() => fleet.apis.map((a) => a.baseUrl!), tally, () => stopping)

    // customers with API keys (the operator CLI), their webhook endpoints in both modes, and a dashboard buyer
    const customers: Array<KeyCustomer> = []
    for (let i = 1; i <= 3; i++) {
      const created = await createAccount(fleet, `customer-${i}@example.com`, 50_000_000)
      customers.push({ accountId: created.account_id, liveKey: created.live_key, testKey: created.test_key })
    }
    const endpoints: Array<{ name: string; id: string }> = []
    for (const [i, c] of customers.entries()) {
      for (const [mode, key] of [["live", c.liveKey], ["test", c.testKey]] as const) {
        const name = `c${i + 1}-${mode}`
        const made = await client.request("POST", "/v1/webhook_endpoints", { key, body: { url: receiver.urlOf(name), events: EVENTS } })
        if (made?.status !== 201) throw new Error(`webhook endpoint: ${made?.status} ${made?.text}`)
        receiver.trust(name, made.json.secret)
        endpoints.push({ name, id: made.json.id })
      }
    }
    const buyer = await dashboardUser(fleet, client)
    log(`chaos: ${customers.length} customers, ${endpoints.length} webhook endpoints, a dashboard buyer; setup took ${Math.round((Date.now() - startedAt) / 1000)} s`)

    // the workload, while the schedule runs
    const workload = newWorkload()
    let unique = 0
    const ctx: WorkloadContext = {
      client, workload, audio, stop: () => stopping, random, unique: () => `${seed}-${++unique}`
    }
    const actors = [
      runCustomer(ctx, customers[0]!), runCustomer(ctx, customers[1]!), runCustomer(ctx, customers[2]!), runCustomer(ctx, customers[0]!),
      runBuyer(ctx, buyer, options.minutes === undefined ? 30_000 : 60_000)
    ]
    const planned = options.minutes === undefined ? { ...shortSchedule(fleet, random), untilMs: Infinity } : longSchedule(fleet, random, options.minutes)
    const schedule = { ...planned, faults: planned.faults.filter((f) => options.only === undefined || f.kind.includes(options.only)) }
    const injected = new Map<string, number>()
    const faultsFrom = Date.now()
    for (const fault of schedule.faults) {
      if (Date.now() - faultsFrom > schedule.untilMs) break
      log(`chaos: +${Math.round((Date.now() - faultsFrom) / 1000)} s: ${fault.label}`)
      await fault.run(fleet)
      injected.set(fault.kind, (injected.get(fault.kind) ?? 0) + 1)
      await sleep(schedule.gapMs)
    }
    const faultsEnded = Date.now()
    log(`chaos: faults over after ${Math.round((faultsEnded - faultsFrom) / 1000)} s; the workload stops`)

    // health: every API node ready again (its database, storage and Redis answer), without restarts
    let readyAfterSeconds: number | undefined
    while (Date.now() - faultsEnded < 60_000) {
      const ready = await Promise.all(fleet.apis.map((a) =>
        fetch(`${a.baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status === 200, () => false)))
      if (ready.every(Boolean)) {
        readyAfterSeconds = Math.round((Date.now() - faultsEnded) / 100) / 10
        break
      }
      await sleep(500)
    }
    stopping = true
    await Promise.all(actors)
    const settled = await settle(fleet, receiver, options.minutes === undefined ? 90_000 : 240_000, log)

    const rows = await checkInvariants({
      fleet, workload, receiver, client, tally, customers, endpoints, settled, readyAfterSeconds, crashed: fleet.crashed
    })
    const money = await moneyMoved(fleet.databaseUrl)
    const [counts] = await query<{ jobs: string; live: string; succeeded: string; failed: string; canceled: string; files: string }>(fleet.databaseUrl, `
      SELECT count(*) AS jobs, count(*) FILTER (WHERE mode = 'live') AS live, count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
             count(*) FILTER (WHERE status = 'failed') AS failed, count(*) FILTER (WHERE status = 'canceled') AS canceled,
             (SELECT count(*) FROM files) AS files FROM jobs`)
    const violations = rows.reduce((n, r) => n + r.violations, 0)
    const summary: Array<readonly [string, string]> = [
      ["schedule", `${options.minutes === undefined ? "short" : `${options.minutes} min`} (seed ${seed}${options.only === undefined ? "" : `, only ${options.only}`}); faults for ${Math.round((faultsEnded - faultsFrom) / 1000)} s, run ${Math.round((Date.now() - startedAt) / 1000)} s in all`],
      ["faults injected", `${[...injected.values()].reduce((a, b) => a + b, 0)}: ${[...injected].map(([k, n]) => `${k} ×${n}`).join(", ")}`],
      ["connections hurt", (() => {
        const stats = fleet.members.flatMap((m) => Object.values(m.proxies).map((p) => p!.stats()))
        const sum = (key: "connections" | "resets" | "cuts") => stats.reduce((n, st) => n + st[key], 0)
        return `${sum("resets")} reset and ${sum("cuts")} cut (answers lost) of ${sum("connections")} through the proxies`
      })()],
      ["processes restarted", fleet.members.map((m) => `${m.name} ×${m.restarts}`).join(", ")],
      ["requests", `${tally.requests}`],
      ["jobs", `${counts!.jobs} (${counts!.live} live): ${counts!.succeeded} succeeded, ${counts!.failed} failed, ${counts!.canceled} canceled; ${workload.jobs.filter((j) => j.jobId !== undefined).length} acknowledged`],
      ["uploads", `${workload.uploads.filter((u) => u.completed).length} completed (${workload.uploads.filter((u) => u.completed && u.multipart).length} multipart, ${workload.uploads.filter((u) => u.completed && u.junk).length} junk); ${counts!.files} files`],
      ["money moved", `held ${micros(money.held)}, captured ${micros(money.captured)}, released ${micros(money.released)}, purchased ${micros(money.purchased)} (${workload.checkouts.filter((c) => c.paid).length} payments), granted ${micros(money.granted)}`],
      ["webhooks", `${[...receiver.verified.values()].reduce((n, s) => n + s.size, 0)} events received with valid signatures (${receiver.received} requests)`],
      ["client walked away", workload.gaveUp.size === 0 ? "never" : [...workload.gaveUp].map(([k, n]) => `${k} ×${n}`).join(", ")],
      ["violations", String(violations)]
    ]
    const rendered = [
      table(["", "run"], summary.map(([k, v]) => [k, v])),
      "",
      table(["invariant", "covered", "violations"], rows.map((r) => [r.check, r.covered, r.violations === 0 ? "0" : `**${r.violations}**: ${r.examples.join("; ")}`]))
    ].join("\n")
    return { rows, summary, violations, table: rendered }
  } finally {
    process.off("SIGINT", interrupted)
    process.off("SIGTERM", interrupted)
    await fleet.close()
    await receiver.close()
  }
}
