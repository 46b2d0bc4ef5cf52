/**
 * The chaos harness's fleet: 2 API and 2 worker processes of the production build (dist/app,
 * as `npm start` and `npm run worker` run them) on one PostgreSQL database, one S3 bucket and
 * one Redis, every link of every process through its own fault proxy (./fault-proxy.ts), so a
 * fault can cut one process off one dependency, or all of them.
 *
 * The harness owns everything it starts, on free loopback ports, and never touches the
 * machine's shared servers: its own embedded PostgreSQL (adapters/embedded-postgres, a
 * throwaway cluster without fsync), which it restarts for real (a fast shutdown ends every
 * connection, then the same cluster starts again on the same port); its own `redis-server`,
 * stopped (SIGTERM) and started again on the same port; s3rver (test/support/s3rver.ts) in
 * this process. Processes share one DATA_DIR, so they share the deployment's secrets.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { openEmbeddedPostgres } from "../../../adapters/embedded-postgres/index.js"
import { type FaultProxy, startFaultProxy } from "../fault-proxy.js"
import { freePort, portAnswers } from "../ports.js"
import { type HushProcess, runCli, startProcess, waitForHealth } from "../process.js"
import { type RunningS3rver, startS3rver } from "../s3rver.js"

export type Dependency = "postgres" | "s3" | "redis"
export type Role = "api" | "worker"

export interface Member {
  readonly name: string
  readonly role: Role
  /** The API's base URL (workers have none). */
  readonly baseUrl: string | undefined
  /** This process's links, by dependency (a worker has no Redis). */
  readonly proxies: Partial<Record<Dependency, FaultProxy>>
  process: HushProcess | undefined
  /** Restarts after a kill or a stop, for the report. */
  restarts: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The settings every Hush process of the fleet shares (its own PORT, URLs and proxies apart). */
export const FLEET_SETTINGS = {
  /** Short leases, so that a killed or cut-off worker's job comes back within seconds. */
  HUSH_JOB_LEASE_MS: "6000",
  HUSH_WEBHOOK_LEASE_MS: "6000",
  WORKER_CONCURRENCY: "2",
  /** Multipart from 5 MiB and one byte, in parts of 5 MiB (S3's least): small multipart uploads. */
  HUSH_PUT_MAX_BYTES: String(5 * 1024 * 1024),
  HUSH_MULTIPART_PART_BYTES: String(5 * 1024 * 1024),
  WEBHOOKS_ALLOW_PRIVATE: "true",
  HUSH_LOG_LEVEL: "warn"
} as const

export interface Fleet {
  readonly dir: string
  readonly dataDir: string
  readonly members: ReadonlyArray<Member>
  readonly apis: ReadonlyArray<Member>
  readonly workers: ReadonlyArray<Member>
  /** Every proxy of a dependency (one per process that uses it). */
  readonly proxiesOf: (dependency: Dependency) => ReadonlyArray<FaultProxy>
  /** The database, directly (not through any proxy): for the CLI, the checks and the report. */
  readonly databaseUrl: string
  readonly s3: RunningS3rver
  /** The environment of the operator CLI (direct links). */
  readonly cliEnv: Record<string, string>
  /** Members whose process exited without being stopped by the harness. */
  readonly crashed: Array<string>
  readonly restartPostgres: (downMs: number) => Promise<void>
  readonly stopRedis: () => Promise<void>
  readonly startRedis: () => Promise<void>
  /** Sends `signal` to a member (its whole process group for SIGKILL) and waits for it to end. */
  readonly stop: (member: Member, signal: "SIGKILL" | "SIGTERM") => Promise<void>
  readonly start: (member: Member) => Promise<void>
  readonly close: () => Promise<void>
}

export const startFleet = async (options: { readonly log: (line: string) => void }): Promise<Fleet> => {
  const dir = mkdtempSync(join(tmpdir(), "hush-chaos-"))
  const dataDir = join(dir, "data")
  const logDir = join(dir, "logs")
  mkdirSync(dataDir, { mode: 0o700 })
  mkdirSync(logDir)
  const closers: Array<() => Promise<void>> = []

  // PostgreSQL: the harness's own cluster, restarted for real when the schedule says
  const pgPort = await freePort()
  const pgPassword = randomBytes(18).toString("base64url")
  let pgScope: Scope.CloseableScope | undefined
  let databaseUrl = ""
  const openPostgres = async () => {
    const scope = Effect.runSync(Scope.make())
    const info = await Effect.runPromise(Scope.extend(openEmbeddedPostgres({
      dir: join(dir, "postgres"),
      tcp: { port: pgPort, password: pgPassword },
      durable: false,
      settings: { max_connections: "200" }
    }), scope))
    pgScope = scope
    databaseUrl = info.url!
  }
  const closePostgres = async () => {
    const scope = pgScope
    pgScope = undefined
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  await openPostgres()
  closers.push(closePostgres)
  options.log(`chaos: PostgreSQL on 127.0.0.1:${pgPort}`)

  // Redis: the harness's own server
  const redisPort = await freePort()
  let redis: ChildProcess | undefined
  const startRedis = async () => {
    if (redis !== undefined && redis.exitCode === null) return
    redis = spawn("redis-server", ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
    const deadline = Date.now() + 10_000
    while (!(await portAnswers(redisPort))) {
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${redisPort}`)
      await sleep(50)
    }
  }
  const stopRedis = async () => {
    const child = redis
    if (child === undefined || child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await exited
  }
  await startRedis()
  closers.push(stopRedis)
  options.log(`chaos: redis-server on 127.0.0.1:${redisPort}`)

  // S3: s3rver in this process
  const s3Scope = Effect.runSync(Scope.make())
  const s3 = await Effect.runPromise(Scope.extend(startS3rver({ bucket: "hush-chaos" }), s3Scope))
  closers.push(() => Effect.runPromise(Scope.close(s3Scope, Exit.void)))
  const s3Port = Number(new URL(s3.endpoint).port)
  options.log(`chaos: s3rver on ${s3.endpoint}`)

  const targets: Record<Dependency, number> = { postgres: pgPort, s3: s3Port, redis: redisPort }
  const proxy = async (dependency: Dependency) => {
    const started = await startFaultProxy({ target: { host: "127.0.0.1", port: targets[dependency] } })
    closers.push(() => started.close())
    return started
  }
  const url = new URL(databaseUrl)
  const databaseVia = (p: FaultProxy) => {
    const via = new URL(url)
    via.port = String(p.port)
    return via.toString()
  }
  const s3Env = (endpoint: string) => ({
    S3_BUCKET: s3.bucket, S3_ENDPOINT: endpoint, S3_REGION: "us-east-1", S3_FORCE_PATH_STYLE: "true",
    S3_ACCESS_KEY_ID: s3.options.credentials!.accessKeyId, S3_SECRET_ACCESS_KEY: String(s3.options.credentials!.secretAccessKey)
  })
  const cliEnv = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ...s3Env(s3.endpoint), ...FLEET_SETTINGS }

  const members: Array<Member> = []
  const envOf = new Map<Member, Record<string, string>>()
  for (const role of ["api", "worker"] as const) {
    for (let i = 1; i <= 2; i++) {
      const proxies: Partial<Record<Dependency, FaultProxy>> = { postgres: await proxy("postgres"), s3: await proxy("s3") }
      if (role === "api") proxies.redis = await proxy("redis")
      const port = role === "api" ? await freePort() : undefined
      const baseUrl = port === undefined ? undefined : `http://127.0.0.1:${port}`
      const member: Member = { name: `${role}-${i}`, role, baseUrl, proxies, process: undefined, restarts: 0 }
      members.push(member)
      envOf.set(member, {
        ...FLEET_SETTINGS,
        DATA_DIR: dataDir,
        DATABASE_URL: databaseVia(proxies.postgres!),
        ...s3Env(`http://127.0.0.1:${proxies.s3!.port}`),
        ...(role === "api"
          ? { PORT: String(port), PUBLIC_BASE_URL: baseUrl!, HUSH_WORKER: "off", REDIS_URL: `redis://127.0.0.1:${proxies.redis!.port}` }
          : {})
      })
    }
  }

  const logs = new Map<Member, number>()
  const crashed: Array<string> = []
  const start = async (member: Member) => {
    const started = startProcess(member.role === "api" ? "apps/api/server/main.ts" : "apps/worker/main.ts", envOf.get(member)!)
    member.process = started
    // each process's output, kept in the run's directory for a look after a violation
    const n = (logs.get(member) ?? 0) + 1
    logs.set(member, n)
    const file = join(logDir, `${member.name}.${n}.log`)
    started.exited.then((code) => {
      writeFileSync(file, started.output())
      // still the member's process: nobody stopped it
      if (member.process === started) {
        const errors = started.output().split("\n").filter((line) => /level=ERROR|Error:/.test(line))
        crashed.push(`${member.name} (exit ${code}): ${(errors.at(-1) ?? started.output().slice(-300)).slice(0, 400)}`)
      }
    }).catch(() => undefined)
    if (member.baseUrl !== undefined) await waitForHealth(member.baseUrl, started, 120_000)
  }
  const stop = async (member: Member, signal: "SIGKILL" | "SIGTERM") => {
    const running = member.process
    if (running === undefined) return
    member.process = undefined
    await running.stop(signal, 30_000).catch((error) => options.log(`chaos: ${member.name}: ${String(error).slice(0, 300)}`))
  }
  closers.push(async () => {
    for (const member of members) await stop(member, "SIGKILL")
  })

  // the first API alone creates the schema and the deployment's secrets; then the others
  await start(members[0]!)
  await Promise.all(members.slice(1).map(start))
  options.log(`chaos: ${members.map((m) => m.name).join(", ")} running`)

  return {
    dir,
    dataDir,
    members,
    apis: members.filter((m) => m.role === "api"),
    workers: members.filter((m) => m.role === "worker"),
    proxiesOf: (dependency) => members.flatMap((m) => (m.proxies[dependency] === undefined ? [] : [m.proxies[dependency]!])),
    get databaseUrl() {
      return databaseUrl
    },
    s3,
    cliEnv,
    crashed,
    restartPostgres: async (downMs) => {
      await closePostgres()
      await sleep(downMs)
      await openPostgres()
    },
    stopRedis,
    startRedis,
    stop,
    start,
    close: async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined)
      if (process.env.CHAOS_KEEP !== "1") rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** `admin account create` through the CLI on the direct links: its id and keys. */
export const createAccount = (fleet: Fleet, email: string, creditMicros: number) =>
  runCli(["admin", "account", "create", "--email", email, "--credit-micros", String(creditMicros)], fleet.cliEnv) as Promise<{
    readonly account_id: string
    readonly live_key: string
    readonly test_key: string
  }>
