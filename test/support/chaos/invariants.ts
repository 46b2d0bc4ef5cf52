/**
 * After the faults: let the fleet settle, then check the invariants against the
 * database (read directly), the bucket (read directly), the API (outputs) and what the workload
 * and the receiver recorded. Each check is a row of the report: what it covers, how many, and
 * the violations found (with up to a few examples).
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import pg from "pg"
import { layerS3BlobStore } from "../../../adapters/s3/index.js"
import { BlobStore } from "../../../core/ports/blob-store.js"
import { LEDGER_CHECKS } from "../../../adapters/postgres/verify.js"
import type { AnswerTally, ChaosClient } from "./client.js"
import type { Fleet } from "./fleet.js"
import type { Receiver } from "./receiver.js"
import type { KeyCustomer, Workload } from "./workload.js"

export interface CheckRow {
  readonly check: string
  readonly covered: string
  readonly violations: number
  readonly examples: ReadonlyArray<string>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const query = async <R extends Record<string, any>>(url: string, text: string, params: Array<unknown> = []): Promise<Array<R>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, params)).rows as Array<R>
  } finally {
    await client.end()
  }
}

const TERMINAL = ["succeeded", "failed", "canceled"]

/**
 * Waits until nothing is in flight: every job ended, every completed upload judged, every
 * webhook delivery done and received. False when `timeoutMs` passed first.
 */
export const settle = async (fleet: Fleet, receiver: Receiver, timeoutMs: number, log: (line: string) => void) => {
  const deadline = Date.now() + timeoutMs
  let last = ""
  while (Date.now() < deadline) {
    const [pending] = await query<{ jobs: string; files: string; deliveries: string }>(fleet.databaseUrl, `
      SELECT (SELECT count(*) FROM jobs WHERE status IN ('queued', 'processing')) AS jobs,
             (SELECT count(*) FROM files WHERE status = 'validating') AS files,
             (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS deliveries`)
    const [delivered] = await query<{ n: string }>(fleet.databaseUrl, `SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'`)
    const verified = [...receiver.verified.values()].reduce((n, s) => n + s.size, 0)
    const state = `jobs ${pending!.jobs}, validating ${pending!.files}, deliveries ${pending!.deliveries} (received ${verified}/${delivered!.n})`
    if (state !== last) log(`chaos: settling: ${state}`)
    last = state
    if (Number(pending!.jobs) === 0 && Number(pending!.files) === 0 && Number(pending!.deliveries) === 0 && verified >= Number(delivered!.n)) return true
    await sleep(1_000)
  }
  return false
}

const row = (check: string, covered: string, problems: ReadonlyArray<string>): CheckRow => ({
  check, covered, violations: problems.length, examples: problems.slice(0, 3)
})

/** ffprobe's duration of the bytes; undefined when they do not decode. */
const probe = (bytes: Uint8Array): number | undefined => {
  const dir = mkdtempSync(join(tmpdir(), "hush-chaos-probe-"))
  try {
    const path = join(dir, "output")
    writeFileSync(path, bytes)
    execFileSync("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"], { stdio: "pipe" })
    const out = execFileSync("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]).toString().trim()
    return Number(out)
  } catch {
    return undefined
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface CheckInput {
  readonly fleet: Fleet
  readonly workload: Workload
  readonly receiver: Receiver
  readonly client: ChaosClient
  readonly tally: AnswerTally
  readonly customers: ReadonlyArray<KeyCustomer>
  /** Webhook endpoint name → its account and mode. */
  readonly endpoints: ReadonlyArray<{ readonly name: string; readonly id: string }>
  readonly settled: boolean
  /** Seconds from the end of the faults until every API node was ready; undefined if never. */
  readonly readyAfterSeconds: number | undefined
  /** Processes that exited without being stopped. */
  readonly crashed: ReadonlyArray<string>
}

export const checkInvariants = async (input: CheckInput): Promise<ReadonlyArray<CheckRow>> => {
  const { fleet, workload } = input
  const url = fleet.databaseUrl
  const rows: Array<CheckRow> = []
  const jobs = await query<{ id: string; account_id: string; mode: string; status: string; file_id: string; attempts: number; error_code: string | null; charged_micros: string | null; estimated_micros: string }>(
    url, `SELECT id, account_id, mode, status, file_id, attempts, error_code, charged_micros, estimated_micros FROM jobs`)
  const jobById = new Map(jobs.map((j) => [j.id, j]))

  // 1. every acknowledged job ends; none lost, none duplicated
  const acked = workload.jobs.filter((j) => j.jobId !== undefined)
  const lost = acked.filter((j) => !jobById.has(j.jobId!)).map((j) => `${j.jobId} acknowledged, not in the database`)
  const stuck = acked.filter((j) => jobById.has(j.jobId!) && !TERMINAL.includes(jobById.get(j.jobId!)!.status))
    .map((j) => `${j.jobId} still ${jobById.get(j.jobId!)!.status}`)
  rows.push(row("acknowledged jobs end (none lost)", `${acked.length} jobs`, [...lost, ...stuck, ...(input.settled ? [] : ["the fleet did not settle in time"])]))
  const perFile = new Map<string, Array<string>>()
  for (const j of jobs) perFile.set(j.file_id, [...(perFile.get(j.file_id) ?? []), j.id])
  const duplicated = workload.jobs.flatMap((j) => ((perFile.get(j.fileId)?.length ?? 0) > 1 ? [`file ${j.fileId}: jobs ${perFile.get(j.fileId)!.join(", ")}`] : []))
  const wrongJob = acked.filter((j) => !(perFile.get(j.fileId) ?? []).includes(j.jobId!)).map((j) => `${j.jobId} is not the job of ${j.fileId}`)
  rows.push(row("no job duplicated (one per create, retries included)", `${workload.jobs.length} creates`, [...duplicated, ...wrongJob]))

  // 2. outcomes: canceled when a cancel was acknowledged; valid audio never fails but for a lost worker, 3 times
  const outcomes: Array<string> = []
  let lostThrice = 0
  for (const j of acked) {
    const stored = jobById.get(j.jobId!)
    if (stored === undefined) continue
    if (j.canceled && stored.status !== "canceled") outcomes.push(`${j.jobId} cancel acknowledged, ended ${stored.status}`)
    if (stored.status === "failed") {
      if (stored.error_code === "internal_error" && stored.attempts >= 3) lostThrice++
      else outcomes.push(`${j.jobId} failed: ${stored.error_code} after ${stored.attempts} attempts`)
    }
  }
  rows.push(row("jobs of valid audio succeed (or are canceled)", `${acked.length} jobs; ${lostThrice} failed after 3 lost leases (allowed)`, outcomes))

  // 3. money per job: succeeded live → one hold, one capture of it; failed or canceled live → one hold, one release
  const entries = await query<{ job_id: string; kind: string; balance_delta: string; reserved_delta: string }>(
    url, `SELECT job_id, kind, balance_delta, reserved_delta FROM ledger_entries WHERE job_id IS NOT NULL ORDER BY account_id, seq`)
  const byJob = new Map<string, Array<{ kind: string; balance: number; reserved: number }>>()
  for (const e of entries) {
    byJob.set(e.job_id, [...(byJob.get(e.job_id) ?? []), { kind: e.kind, balance: Number(e.balance_delta), reserved: Number(e.reserved_delta) }])
  }
  const money: Array<string> = []
  for (const j of jobs) {
    const list = (byJob.get(j.id) ?? []).filter((e) => e.kind !== "expiry")
    const kinds = list.map((e) => e.kind).join(",")
    const cost = Number(j.estimated_micros)
    if (j.mode === "test" || cost === 0) {
      if (list.length > 0) money.push(`test job ${j.id}: ${kinds}`)
      continue
    }
    const expected = j.status === "succeeded" ? "hold,capture" : j.status === "failed" || j.status === "canceled" ? "hold,release" : "hold"
    if (kinds !== expected) money.push(`${j.status} job ${j.id}: ${kinds} (expected ${expected})`)
    if (j.status === "succeeded" && Number(j.charged_micros) !== cost) money.push(`${j.id}: charged ${j.charged_micros}, held ${cost}`)
  }
  rows.push(row("each succeeded job captured once; each failed or canceled one released once", `${jobs.length} jobs in the database`, money))

  // 4. every account: balance = grants + purchases − captures − expiries (± refunds, adjustments), nothing reserved, chains whole
  const accounts = await query<{ account_id: string; balance: string; reserved: string; sum_delta: string; credits: string; debits: string }>(url, `
    SELECT w.account_id, w.balance, w.reserved,
      COALESCE((SELECT sum(balance_delta) FROM ledger_entries e WHERE e.account_id = w.account_id), 0) AS sum_delta,
      COALESCE((SELECT sum(balance_delta) FROM ledger_entries e WHERE e.account_id = w.account_id AND kind IN ('grant', 'purchase', 'adjustment')), 0) AS credits,
      COALESCE((SELECT -sum(balance_delta) FROM ledger_entries e WHERE e.account_id = w.account_id AND kind IN ('capture', 'expiry', 'refund')), 0) AS debits
    FROM wallets w`)
  const balances: Array<string> = []
  for (const a of accounts) {
    if (Number(a.balance) !== Number(a.credits) - Number(a.debits)) balances.push(`${a.account_id}: balance ${a.balance} ≠ ${a.credits} − ${a.debits}`)
    if (Number(a.reserved) !== 0) balances.push(`${a.account_id}: ${a.reserved} reserved at rest`)
  }
  for (const [name, text] of Object.entries(LEDGER_CHECKS)) {
    for (const bad of await query(url, text)) balances.push(`${name}: ${JSON.stringify(bad)}`)
  }
  rows.push(row("balance = grants + purchases − captures − expiries; reserved 0; ledger chains consistent", `${accounts.length} accounts`, balances))

  // 5. purchases: each confirmed payment credited once, never twice
  const purchases = await query<{ checkout_id: string; n: string; total: string }>(url,
    `SELECT checkout_id, count(*) AS n, sum(balance_delta) AS total FROM ledger_entries WHERE kind = 'purchase' GROUP BY checkout_id`)
  const purchased = new Map(purchases.map((p) => [p.checkout_id, p]))
  const paidProblems: Array<string> = []
  for (const p of purchases) if (Number(p.n) !== 1) paidProblems.push(`checkout ${p.checkout_id} credited ${p.n} times`)
  for (const c of workload.checkouts) {
    if (!c.paid || c.checkoutId === undefined) continue
    const credited = purchased.get(c.checkoutId)
    if (credited === undefined) paidProblems.push(`checkout ${c.checkoutId} paid, never credited`)
    else if (Number(credited.total) !== c.amountMicros) paidProblems.push(`checkout ${c.checkoutId}: credited ${credited.total}, paid ${c.amountMicros}`)
  }
  rows.push(row("each payment credited exactly once", `${workload.checkouts.filter((c) => c.paid).length} payments`, paidProblems))

  // 6. each succeeded job's output downloads and decodes, as long as its input
  const outputs: Array<string> = []
  const succeeded = acked.filter((j) => jobById.get(j.jobId!)?.status === "succeeded")
  for (const j of succeeded) {
    const customer = input.customers.find((c) => c.accountId === j.account)
    if (customer === undefined) continue
    const key = j.mode === "live" ? customer.liveKey : customer.testKey
    const link = await input.client.request("GET", `/v1/jobs/${j.jobId}/output`, { key, deadlineMs: 30_000 })
    if (link?.status !== 200) {
      outputs.push(`${j.jobId}: output link ${link?.status ?? "no answer"}`)
      continue
    }
    const bytes = new Uint8Array(await (await fetch(link.json.url, { signal: AbortSignal.timeout(30_000) })).arrayBuffer())
    const duration = probe(bytes)
    if (duration === undefined) outputs.push(`${j.jobId}: output does not decode (${bytes.byteLength} bytes)`)
    else if (j.mode === "live" && Math.abs(duration - j.durationSeconds) > 0.5) outputs.push(`${j.jobId}: ${duration} s out of ${j.durationSeconds} s in`)
  }
  rows.push(row("each succeeded job's output downloads and decodes", `${succeeded.length} outputs`, outputs))

  // 7. each acknowledged upload: its bytes intact, or the file rejected; never silently different
  const files = new Map((await query<{ id: string; status: string }>(url, `SELECT id, status FROM files`)).map((f) => [f.id, f.status]))
  const store = layerS3BlobStore(fleet.s3.options)
  const readStored = (key: string) =>
    Effect.runPromise(Effect.flatMap(BlobStore, (blobs) =>
      Stream.runFold(blobs.read(key), createHash("sha256"), (hash, chunk) => hash.update(chunk))).pipe(
        Effect.map((hash) => hash.digest("hex")), Effect.provide(store), Effect.orElseSucceed(() => undefined)
      ))
  const uploadProblems: Array<string> = []
  const completed = workload.uploads.filter((u) => u.completed && u.fileId !== undefined)
  for (const u of completed) {
    const status = files.get(u.fileId!)
    if (status === undefined) {
      if (!u.deleted) uploadProblems.push(`${u.fileId}: gone, never deleted`)
      continue
    }
    if (status !== "ready" && status !== "rejected") uploadProblems.push(`${u.fileId}: still ${status}`)
    else if (u.junk !== (status === "rejected")) uploadProblems.push(`${u.fileId}: ${u.junk ? "junk" : "valid audio"} ${status}`)
    else if (status === "ready" && (await readStored(`inputs/${u.fileId}`)) !== u.sha256) uploadProblems.push(`${u.fileId}: stored bytes differ from the upload`)
  }
  const multipart = completed.filter((u) => u.multipart).length
  rows.push(row("each acknowledged upload intact (or rejected)", `${completed.length} uploads (${multipart} multipart)`, uploadProblems))

  // 8. each webhook event delivered, signature valid; each acknowledged outcome has its event
  const deliveries = await query<{ endpoint_id: string; event_id: string; event_type: string; status: string; body: string }>(url,
    `SELECT endpoint_id, event_id, event_type, status, body FROM webhook_deliveries`)
  const nameOf = new Map(input.endpoints.map((e) => [e.id, e.name]))
  const hookProblems = [...input.receiver.bad]
  const eventsFor = new Set<string>()
  for (const d of deliveries) {
    eventsFor.add(`${d.event_type}:${JSON.parse(d.body).data?.id}`)
    const name = nameOf.get(d.endpoint_id)
    if (d.status !== "succeeded") hookProblems.push(`${d.event_id}: delivery ${d.status}`)
    else if (name === undefined || !input.receiver.verified.get(name)?.has(d.event_id)) hookProblems.push(`${d.event_id}: never received with a valid signature`)
  }
  for (const j of acked) {
    const status = jobById.get(j.jobId!)?.status
    if (status !== undefined && TERMINAL.includes(status) && !eventsFor.has(`job.${status}:${j.jobId}`)) hookProblems.push(`${j.jobId}: no job.${status} event`)
  }
  for (const u of completed) {
    const status = files.get(u.fileId!)
    if ((status === "ready" || status === "rejected") && !eventsFor.has(`file.${status}:${u.fileId}`)) hookProblems.push(`${u.fileId}: no file.${status} event`)
  }
  rows.push(row("each event delivered at least once, signature valid", `${deliveries.length} deliveries`, hookProblems))

  // 9. correct requests go through once the fault passes: the client never gives up on one (but
  // for its PUTs to storage, whose network is not Hush's, and what the end of the workload cut short)
  const gaveUp = [...workload.gaveUp].filter(([label]) => !label.endsWith("(stopped)") && !label.startsWith("put"))
  const cutShort = [...workload.gaveUp].filter(([label]) => label.endsWith("(stopped)")).reduce((n, [, count]) => n + count, 0)
  rows.push(row("correct requests succeed once retried (no 4xx, no endless 503)", `${input.tally.requests} requests; ${cutShort} cut short by the end of the workload`,
    gaveUp.map(([label, count]) => `${label} ×${count}`)))

  // 10. answers during faults; 11. health after them
  const statuses = [...input.tally.byStatus].sort().map(([s, n]) => `${s}: ${n}`).join(", ")
  rows.push(row("answers: 2xx/4xx, 503 with Retry-After or 429; no other 5xx, no hang", `${input.tally.requests} requests (${statuses})`, input.tally.violations))
  const health = [
    ...(input.readyAfterSeconds === undefined || input.readyAfterSeconds > 30 ? [`ready ${input.readyAfterSeconds ?? "never"} s after the faults`] : []),
    ...input.crashed.map((name) => `${name} exited by itself`)
  ]
  rows.push(row("healthy within 30 s of the last fault, without restarts", `ready after ${input.readyAfterSeconds ?? "—"} s`, health))
  return rows
}

/** Money moved by jobs (live), for the report. */
export const moneyMoved = async (url: string) => {
  const [m] = await query<{ held: string; captured: string; released: string; purchased: string; granted: string }>(url, `
    SELECT COALESCE(sum(reserved_delta) FILTER (WHERE kind = 'hold'), 0) AS held,
           COALESCE(-sum(balance_delta) FILTER (WHERE kind = 'capture'), 0) AS captured,
           COALESCE(-sum(reserved_delta) FILTER (WHERE kind = 'release'), 0) AS released,
           COALESCE(sum(balance_delta) FILTER (WHERE kind = 'purchase'), 0) AS purchased,
           COALESCE(sum(balance_delta) FILTER (WHERE kind = 'grant'), 0) AS granted
    FROM ledger_entries`)
  return { held: Number(m!.held), captured: Number(m!.captured), released: Number(m!.released), purchased: Number(m!.purchased), granted: Number(m!.granted) }
}
