/**
 * The chaos workload: what customers do while faults are injected, recorded as the harness
 * needs it to check the invariants afterwards. Each actor loops until told to stop, on one
 * account: uploads (PUT, or multipart above 5 MiB) and completes, waits for the file, creates
 * a live or test job (with an Idempotency-Key), cancels some, waits for the end, downloads and
 * deletes some; a dashboard actor buys credit through the fake provider's page. Only what was
 * acknowledged (a 2xx answer) is recorded as acknowledged; the rest may or may not have happened.
 */
import { createHash } from "node:crypto"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Answer, answerLabel, type ChaosClient } from "./client.js"

export interface UploadRecord {
  readonly account: string
  readonly mode: "live" | "test"
  fileId: string | undefined
  readonly sha256: string
  readonly sizeBytes: number
  readonly multipart: boolean
  /** Junk: must end rejected. */
  readonly junk: boolean
  /** `complete` answered 2xx. */
  completed: boolean
  /** DELETE answered 204. */
  deleted: boolean
}

export interface JobRecord {
  readonly account: string
  readonly mode: "live" | "test"
  readonly fileId: string
  readonly idempotencyKey: string
  /** The id of the acknowledged job (202), or undefined when the create was never acknowledged. */
  jobId: string | undefined
  readonly durationSeconds: number
  /** A cancel answered 200. */
  canceled: boolean
  /** The status last seen by the actor. */
  lastStatus: string | undefined
}

export interface CheckoutRecord {
  readonly account: string
  checkoutId: string | undefined
  readonly amountMicros: number
  /** The fake page answered its redirect (the payment was confirmed to Hush). */
  paid: boolean
}

export interface Workload {
  readonly uploads: Array<UploadRecord>
  readonly jobs: Array<JobRecord>
  readonly checkouts: Array<CheckoutRecord>
  /** Operations the client gave up on (no answer to keep before its deadline), by kind. */
  readonly gaveUp: Map<string, number>
  /** Per account and mode: files kept after their round, oldest first (what counts toward the retained-bytes quota). */
  readonly kept: Map<string, Array<UploadRecord>>
  /** Per account and mode: when each complete was first sent (what counts toward the validations-per-hour quota). */
  readonly completesSent: Map<string, Array<number>>
}

export const newWorkload = (): Workload => ({ uploads: [], jobs: [], checkouts: [], gaveUp: new Map(), kept: new Map(), completesSent: new Map() })

/**
 * The quotas a careful customer stays under (decisions.md, Files: retained input bytes 250 MB in
 * test mode, 50 GiB live; 100 validations per hour), with a margin for requests whose answer was
 * lost: they may have counted without the client knowing.
 */
const KEPT_BYTES_BUDGET = { live: 1024 * 1024 * 1024, test: 150 * 1024 * 1024 } as const
const COMPLETES_PER_HOUR_BUDGET = 85
const HOUR_MS = 3_600_000

const bucketOf = (account: string, mode: "live" | "test") => `${account}:${mode}`

/** An API-key customer: one account, both modes. */
export interface KeyCustomer {
  readonly accountId: string
  readonly liveKey: string
  readonly testKey: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Audio made once by ffmpeg: short tones (PUT) and a 30 s stereo 48 kHz one (5.5 MiB: multipart). */
export const makeAudio = () => {
  const dir = mkdtempSync(join(tmpdir(), "hush-chaos-audio-"))
  const make = (name: string, args: ReadonlyArray<string>) => {
    const path = join(dir, name)
    execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...args, path])
    return new Uint8Array(readFileSync(path))
  }
  const tone = (seconds: number, frequency: number) =>
    make(`tone-${seconds}-${frequency}.wav`, ["-f", "lavfi", "-i", `sine=frequency=${frequency}:sample_rate=16000:duration=${seconds}`, "-ac", "1", "-c:a", "pcm_s16le"])
  const audio = {
    short: [
      { bytes: tone(2, 440), seconds: 2 },
      { bytes: tone(3, 523), seconds: 3 },
      { bytes: make("tone-2.mp3", ["-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100:duration=2", "-ac", "1", "-c:a", "libmp3lame", "-b:a", "64k"]), seconds: 2 }
    ],
    long: {
      bytes: make("long.wav", ["-f", "lavfi", "-i", "sine=frequency=330:sample_rate=48000:duration=30", "-ac", "2", "-c:a", "pcm_s16le"]),
      seconds: 30
    },
    junk: new Uint8Array(3_000).map((_, i) => (i * 7919) % 251)
  }
  rmSync(dir, { recursive: true, force: true })
  return audio
}

export type Audio = ReturnType<typeof makeAudio>

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/**
 * Records an operation the client did not see through: `stopped` when the workload was over,
 * else with the last answer (or `no answer`). Only `stopped` and PUTs to storage (the network's,
 * not Hush's) are expected; the rest are violations (invariants.ts).
 */
const giveUp = (ctx: { readonly workload: Workload; readonly stop: () => boolean }, what: string, answer?: Answer) => {
  const label = ctx.stop() ? `${what} (stopped)` : `${what} (${answer === undefined ? "no answer" : answerLabel(answer)})`
  ctx.workload.gaveUp.set(label, (ctx.workload.gaveUp.get(label) ?? 0) + 1)
  // what the answer said, for the violation's cause (the table keeps only its kind)
  if (!ctx.stop() && answer !== undefined && answer.status < 500) {
    console.log(`chaos: gave up on ${what}: ${answer.status} ${String(answer.json?.detail ?? answer.text).slice(0, 300)}`)
  }
}

/** Sends bytes to an upload URL (the store's, through its proxy): retried, the network is not Hush's to answer for. */
const put = async (url: string, headers: Record<string, string>, bytes: Uint8Array, stop: () => boolean): Promise<string | undefined> => {
  for (let attempt = 1; attempt <= 20 && !stop(); attempt++) {
    try {
      const response = await fetch(url, { method: "PUT", headers, body: bytes, signal: AbortSignal.timeout(30_000) })
      await response.arrayBuffer()
      if (response.ok) return response.headers.get("etag") ?? ""
    } catch {
      // the link to the store is faulty right now
    }
    await sleep(Math.min(3_000, 250 * attempt))
  }
  return undefined
}

const isAnswer = (answer: Answer | undefined, ...statuses: Array<number>): answer is Answer =>
  answer !== undefined && statuses.includes(answer.status)


interface Context {
  readonly client: ChaosClient
  readonly workload: Workload
  readonly audio: Audio
  readonly stop: () => boolean
  readonly random: () => number
  /** A unique suffix for Idempotency-Keys. */
  readonly unique: () => string
}

/** Uploads bytes for `key`: create (idempotent), PUT or multipart, complete; the record (fileId undefined when not created). */
const upload = async (ctx: Context, account: string, mode: "live" | "test", key: string, bytes: Uint8Array, junk: boolean) => {
  const multipart = bytes.byteLength > 5 * 1024 * 1024
  const record: UploadRecord = {
    account, mode, fileId: undefined, sha256: sha256(bytes), sizeBytes: bytes.byteLength, multipart, junk, completed: false, deleted: false
  }
  ctx.workload.uploads.push(record)
  const created = await ctx.client.request("POST", "/v1/files", {
    key, idempotencyKey: `file-${ctx.unique()}`,
    body: { filename: junk ? "junk.wav" : "take.wav", size_bytes: bytes.byteLength, content_type: "audio/wav" }
  })
  if (!isAnswer(created, 201)) return giveUp(ctx, "create file", created as Answer | undefined), record
  record.fileId = created.json.id
  const target = created.json.upload
  let parts: Array<{ part_number: number; etag: string }> | undefined
  if (target.method === "multipart") {
    parts = []
    const partSize = target.part_size as number
    for (const part of target.parts as Array<{ part_number: number; url: string }>) {
      const slice = bytes.subarray((part.part_number - 1) * partSize, part.part_number * partSize)
      const etag = await put(part.url, {}, slice, ctx.stop)
      if (etag === undefined) return giveUp(ctx, "put part"), record
      parts.push({ part_number: part.part_number, etag })
    }
  } else if ((await put(target.url, target.headers ?? {}, bytes, ctx.stop)) === undefined) {
    return giveUp(ctx, "put"), record
  }
  const sent = ctx.workload.completesSent.get(bucketOf(account, mode)) ?? []
  ctx.workload.completesSent.set(bucketOf(account, mode), [...sent, Date.now()])
  const completed = await ctx.client.request("POST", `/v1/files/${record.fileId}/complete`, {
    key, idempotencyKey: `complete-${ctx.unique()}`, ...(parts === undefined ? {} : { body: { parts } })
  })
  if (!isAnswer(completed, 200, 202)) return giveUp(ctx, "complete", completed as Answer | undefined), record
  record.completed = true
  return record
}

/** Polls until `done` holds; the last answer (undefined if none came). */
const poll = async (ctx: Context, path: string, key: string, done: (json: any) => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  let last: Answer | undefined
  while (Date.now() < deadline && !ctx.stop()) {
    last = await ctx.client.request("GET", path, { key, deadlineMs: 30_000 })
    if (last?.status === 200 && done(last.json)) return last
    await sleep(400)
  }
  return last
}

const TERMINAL = ["succeeded", "failed", "canceled"]

/** DELETE of a file; true once it is gone (404: an earlier attempt did it and its answer was lost). */
const deleteFile = async (ctx: Context, key: string, file: UploadRecord) => {
  const deleted = await ctx.client.request("DELETE", `/v1/files/${file.fileId}`, { key })
  if (deleted?.status === 204 || deleted?.status === 404) file.deleted = true
  else if (deleted?.status !== 409) giveUp(ctx, "delete file", deleted)
  return file.deleted
}

/** Room for `sizeBytes` more under the bucket's budget: the oldest kept files are deleted first. */
const makeRoom = async (ctx: Context, bucket: string, mode: "live" | "test", key: string, sizeBytes: number) => {
  const kept = ctx.workload.kept.get(bucket) ?? []
  let keptBytes = kept.reduce((sum, file) => sum + file.sizeBytes, 0)
  while (keptBytes + sizeBytes > KEPT_BYTES_BUDGET[mode] && kept.length > 0 && !ctx.stop()) {
    const oldest = kept[0]!
    // 409 file_in_use: its job is still running; it is tried again next round
    if (!(await deleteFile(ctx, key, oldest))) return
    kept.shift()
    keptBytes -= oldest.sizeBytes
  }
}

/** Completes sent in the last hour for the bucket, forgetting older ones. */
const completesInLastHour = (ctx: Context, bucket: string) => {
  const recent = (ctx.workload.completesSent.get(bucket) ?? []).filter((at) => at > Date.now() - HOUR_MS)
  ctx.workload.completesSent.set(bucket, recent)
  return recent.length
}

/**
 * One customer's session: upload, job, maybe cancel, wait, download, delete or keep the input.
 * Like a careful customer it stays under its quotas: it deletes its oldest inputs before an
 * upload would pass its retained-bytes budget, and only reads when it has validated its hourly
 * budget of uploads.
 */
const customerRound = async (ctx: Context, customer: KeyCustomer) => {
  const roll = ctx.random()
  const mode: "live" | "test" = ctx.random() < 0.55 ? "live" : "test"
  const key = mode === "live" ? customer.liveKey : customer.testKey
  const bucket = bucketOf(customer.accountId, mode)
  if (roll < 0.1 || completesInLastHour(ctx, bucket) >= COMPLETES_PER_HOUR_BUDGET) {
    // reads: the list and the balance
    await ctx.client.request("GET", "/v1/jobs?limit=5", { key })
    await ctx.client.request("GET", "/v1/credits", { key: customer.liveKey })
    return
  }
  const junk = roll < 0.16
  const long = !junk && roll > 0.9 && (mode === "test" || ctx.random() < 0.3)
  const clip = ctx.audio.short[Math.floor(ctx.random() * ctx.audio.short.length)]!
  const chosen = junk ? { bytes: ctx.audio.junk, seconds: 0 } : long ? ctx.audio.long : clip
  await makeRoom(ctx, bucket, mode, key, chosen.bytes.byteLength)
  const file = await upload(ctx, customer.accountId, mode, key, chosen.bytes, junk)
  if (file.fileId === undefined) return
  const ended = file.completed ? await fileRound(ctx, key, mode, file, chosen.seconds) : true
  // an upload never completed stays open (10 at most per account): it goes at once
  if (!file.completed) await deleteFile(ctx, key, file)
  else if (ended && ctx.random() < 0.3) await deleteFile(ctx, key, file)
  if (!file.deleted) ctx.workload.kept.set(bucket, [...(ctx.workload.kept.get(bucket) ?? []), file])
}

/** The uploaded file's life: ready or rejected, a job, maybe a cancel; whether its job (if any) ended. */
const fileRound = async (ctx: Context, key: string, mode: "live" | "test", file: UploadRecord, seconds: number) => {
  const ready = await poll(ctx, `/v1/files/${file.fileId}`, key, (f) => f.status === "ready" || f.status === "rejected", 90_000)
  if (ready?.json?.status !== "ready") return ready?.json?.status === "rejected"
  const job: JobRecord = {
    account: file.account, mode, fileId: file.fileId!, idempotencyKey: `job-${ctx.unique()}`, jobId: undefined,
    durationSeconds: seconds, canceled: false, lastStatus: undefined
  }
  ctx.workload.jobs.push(job)
  const created = await ctx.client.request("POST", "/v1/audio/denoise", { key, idempotencyKey: job.idempotencyKey, body: { file: file.fileId } })
  if (!isAnswer(created, 202)) return giveUp(ctx, "create job", created as Answer | undefined), false
  job.jobId = created.json.id
  job.lastStatus = created.json.status
  if (mode === "live" && ctx.random() < 0.2) {
    const canceled = await ctx.client.request("POST", `/v1/jobs/${job.jobId}/cancel`, { key })
    if (canceled?.status === 200) job.canceled = true
  }
  const ended = await poll(ctx, `/v1/jobs/${job.jobId}`, key, (j) => TERMINAL.includes(j.status), 120_000)
  job.lastStatus = ended?.json?.status ?? job.lastStatus
  return TERMINAL.includes(job.lastStatus ?? "")
}

export const runCustomer = async (ctx: Context, customer: KeyCustomer) => {
  while (!ctx.stop()) {
    await customerRound(ctx, customer).catch((error) => giveUp(ctx, `round threw: ${String(error).slice(0, 120)}`))
    await sleep(200 + ctx.random() * 600)
  }
}

/** A dashboard user (a browser's cookies and CSRF token): buys credit now and then. */
export interface DashboardUser {
  readonly accountId: string
  readonly cookie: string
  readonly csrf: string
}

export const runBuyer = async (ctx: Context, user: DashboardUser, everyMs: number) => {
  while (!ctx.stop()) {
    const amountMicros = 10_000_000 + Math.floor(ctx.random() * 90) * 1_000_000
    const record: CheckoutRecord = { account: user.accountId, checkoutId: undefined, amountMicros, paid: false }
    ctx.workload.checkouts.push(record)
    const started = await ctx.client.request("POST", "/v1/dashboard/checkout", {
      idempotencyKey: `checkout-${ctx.unique()}`,
      headers: { cookie: user.cookie, "x-csrf-token": user.csrf },
      body: { amount_micros: amountMicros }
    })
    if (isAnswer(started, 201)) {
      record.checkoutId = started.json.checkout_id
      // the fake provider's page, on whichever node: Pay (its confirmation reaches Hush over HTTP)
      const path = new URL(started.json.url).pathname
      const paid = await ctx.client.request("POST", path, { form: new URLSearchParams({ action: "pay" }) })
      if (paid?.status === 303) record.paid = true
      else giveUp(ctx, "pay", paid as Answer | undefined)
    } else {
      giveUp(ctx, "checkout", started as Answer | undefined)
    }
    const until = Date.now() + everyMs
    while (Date.now() < until && !ctx.stop()) await sleep(250)
  }
}

export type { Context as WorkloadContext }
