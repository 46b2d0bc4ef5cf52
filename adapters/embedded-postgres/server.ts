/**
 * A real PostgreSQL server (the npm-shipped binaries, ./binaries.ts) run as a child of this
 * process, its cluster in a directory of ours:
 *
 *   <dir>/data          the cluster (initdb on first start; made in data.init, then renamed)
 *   <dir>/run           its Unix socket (owner-only); the only way in unless `tcp` is given
 *   <dir>/postgres.log  the server's own log (warnings and errors)
 *   <dir>/hush.lock     the pid of the process that runs the server
 *
 * Reachable only through the socket in an owner-only directory, with no TCP listener at all
 * (`listen_addresses = ''`), so nobody but this OS user (and root) can connect. Tests may ask
 * for a TCP port on 127.0.0.1 instead, with a generated password (scram-sha-256).
 *
 * One process runs the server of a directory (the lock file); others (the operator CLI while
 * `npm start` runs) connect to it as guests. The server dies with its parent: it is started
 * under `setpriv --pdeathsig` where available, and a postmaster left by a parent that died
 * anyway is stopped before a new one starts. PostgreSQL refuses to run as root: as root it
 * runs in a user namespace of its own (`unshare --user`), where it is not root, yet its files
 * stay root's, owner-only.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { closeSync, openSync } from "node:fs"
import { chmod, lstat, mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { createHash } from "node:crypto"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Data, Duration, Effect, type Scope } from "effect"
import { postgresBinaries } from "./binaries.js"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbeddedPostgresOptions {
  /** Holds the cluster, its socket directory, its log and the lock file (the apps use `${DATA_DIR}/postgres`). */
  readonly dir: string
  /** Also listen on 127.0.0.1:port, password required (tests, and processes that need a URL). */
  readonly tcp?: { readonly port: number; readonly password: string } | undefined
  /** fsync and synchronous commits (default true); off only for throwaway test clusters. */
  readonly durable?: boolean | undefined
  /** Another process runs this directory's server: connect to it (true) or fail (false, default). */
  readonly attach?: boolean | undefined
  /** More `-c name=value` settings. */
  readonly settings?: Readonly<Record<string, string>> | undefined
}

/** How to reach a running embedded server. */
export interface EmbeddedPostgresInfo {
  readonly dir: string
  /** For node-postgres: the socket directory as `host`, and `port` naming the socket file. */
  readonly host: string
  readonly port: number
  readonly username: string
  readonly database: string
  /** A URL with host and password, when `tcp` was given. */
  readonly url: string | undefined
  /** Whether this process runs the server (false: a guest of another process's). */
  readonly owned: boolean
  /** True when the cluster was made now (initdb). */
  readonly created: boolean
  /** How long it took to be ready (initdb included when created). */
  readonly openedInMs: number
}

const SUPERUSER = "postgres"
const SOCKET_PORT = 5432
const LOCK_FILE = "hush.lock"
/** sun_path holds 108 bytes on Linux, 104 on macOS. */
const MAX_SOCKET_PATH = 100

/** Small and steady: a few connections from one process, the rest of the memory to the OS cache. */
const DEFAULT_SETTINGS: Record<string, string> = {
  shared_buffers: "32MB",
  max_connections: "40",
  log_min_messages: "warning",
  log_checkpoints: "off",
  // the server speaks only to this host's processes: no TLS, no network
  ssl: "off"
}

const fail = (message: string) => (cause: unknown) => new EmbeddedPostgresError({ message, cause })

const pathExists = (path: string) => lstat(path).then(() => true, () => false)

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The socket directory: `<dir>/run`, or one under the temp dir named after `dir` where that path is too long. */
export const socketDirOf = (dir: string) => {
  const own = join(resolve(dir), "run")
  if (`${own}/.s.PGSQL.${SOCKET_PORT}`.length <= MAX_SOCKET_PATH) return own
  return join(tmpdir(), `hush-pg-${createHash("sha256").update(resolve(dir)).digest("hex").slice(0, 16)}`)
}

/** An owner-only directory that is ours: made 0700, or refused if someone else's or open to others. */
const ownerOnlyDir = async (path: string) => {
  await mkdir(path, { recursive: true, mode: 0o700 })
  const info = await stat(path)
  const uid = process.getuid?.()
  if (uid !== undefined && info.uid !== uid) throw new Error(`${path} belongs to another user`)
  if ((info.mode & 0o077) !== 0) await chmod(path, 0o700)
}

/** How to start a PostgreSQL binary here: in a user namespace as root, tied to this process's life where possible. */
const launcher = (() => {
  let found: ReadonlyArray<string> | undefined
  const works = (args: ReadonlyArray<string>) => spawnSync(args[0]!, [...args.slice(1), "true"], { stdio: "ignore" }).status === 0
  return () => {
    if (found !== undefined) return found
    const root = process.getuid?.() === 0
    if (root && !works(["unshare", "--user"])) {
      throw new Error("PostgreSQL does not run as root, and `unshare --user` is not available here: run Hush as an ordinary user, or set DATABASE_URL")
    }
    const prefix = root ? ["unshare", "--user"] : []
    const deathSignal = ["setpriv", "--pdeathsig", "INT"]
    found = works(deathSignal) ? [...prefix, ...deathSignal] : prefix
    return found
  }
})()

const run = (command: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<void>((resolvePromise, reject) => {
    const child = spawn(command[0]!, command.slice(1), { env, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-4_000)))
    child.once("error", reject)
    child.once("close", (code) => (code === 0 ? resolvePromise() : reject(new Error(`${command.join(" ")} exited with ${code}: ${stderr}`))))
  })

const childEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: "C", LANG: "C" }
  for (const name of Object.keys(env)) if (name.startsWith("PG")) delete env[name]
  return env
}

/** The pid in a cluster's postmaster.pid and whether it says "ready"; undefined without one. */
const postmasterStatus = async (dataDir: string) => {
  const text = await readFile(join(dataDir, "postmaster.pid"), "utf8").catch(() => undefined)
  if (text === undefined) return undefined
  const lines = text.split("\n")
  return { pid: Number.parseInt(lines[0] ?? "", 10), ready: lines[7]?.trim() === "ready" }
}

const isPostgres = async (pid: number) => {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => undefined)
  return cmdline === undefined ? isAlive(pid) : cmdline.includes("postgres")
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const waitUntilGone = async (pid: number, ms: number) => {
  const deadline = Date.now() + ms
  while (isAlive(pid) && Date.now() < deadline) await sleep(25)
  return !isAlive(pid)
}

/** A postmaster left running by a parent that died without stopping it: stopped (fast shutdown). */
const stopLeftover = async (dataDir: string) => {
  const status = await postmasterStatus(dataDir)
  if (status === undefined || !Number.isSafeInteger(status.pid) || !isAlive(status.pid) || !(await isPostgres(status.pid))) return
  process.kill(status.pid, "SIGINT")
  if (!(await waitUntilGone(status.pid, 30_000))) {
    process.kill(status.pid, "SIGQUIT")
    await waitUntilGone(status.pid, 10_000)
  }
}

/** Directories whose server this process runs (its own pid in a lock file is stale unless listed here). */
const openHere = new Set<string>()

type Lock = { readonly _tag: "Taken"; readonly path: string } | { readonly _tag: "HeldBy"; readonly pid: number }

/** Takes the lock file, or names the live process that holds it. A lock of a dead process is taken over. */
const tryLock = async (dir: string): Promise<Lock> => {
  const path = join(dir, LOCK_FILE)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(path, "wx", 0o600)
      await handle.writeFile(`${process.pid}\n`)
      await handle.close()
      openHere.add(dir)
      return { _tag: "Taken", path }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const holder = Number.parseInt(await readFile(path, "utf8").catch(() => ""), 10)
      const held = holder === process.pid ? openHere.has(dir) : Number.isSafeInteger(holder) && isAlive(holder)
      if (held) return { _tag: "HeldBy", pid: holder }
      await rm(path, { force: true }) // left by a process that is gone
    }
  }
  throw new Error(`cannot take the lock file ${path}`)
}

const initdb = async (initdbPath: string, dataDir: string, options: EmbeddedPostgresOptions) => {
  const staging = `${dataDir}.init`
  await rm(staging, { recursive: true, force: true })
  const passwordFile = options.tcp === undefined ? undefined : join(options.dir, "initdb.pw")
  if (passwordFile !== undefined) await writeFile(passwordFile, `${options.tcp!.password}\n`, { mode: 0o600 })
  try {
    await run([
      ...launcher(), initdbPath, "-D", staging, "-U", SUPERUSER, "-E", "UTF8", "--locale=C", "--no-instructions",
      "--auth-local=trust", ...(passwordFile === undefined ? ["--auth-host=reject"] : ["--auth-host=scram-sha-256", `--pwfile=${passwordFile}`]),
      ...(options.durable === false ? ["--no-sync"] : [])
    ], childEnv())
  } finally {
    if (passwordFile !== undefined) await rm(passwordFile, { force: true })
  }
  // only what is meant: the socket for this user, and 127.0.0.1 with the password when asked
  await writeFile(join(staging, "pg_hba.conf"), [
    "local all all trust",
    ...(options.tcp === undefined ? [] : ["host all all 127.0.0.1/32 scram-sha-256"]),
    ""
  ].join("\n"), { mode: 0o600 })
  await rename(staging, dataDir)
}

const settingsOf = (options: EmbeddedPostgresOptions, socketDir: string) => {
  const settings: Record<string, string> = {
    ...DEFAULT_SETTINGS,
    listen_addresses: options.tcp === undefined ? "" : "127.0.0.1",
    port: String(options.tcp?.port ?? SOCKET_PORT),
    unix_socket_directories: socketDir,
    unix_socket_permissions: "0700",
    ...(options.durable === false ? { fsync: "off", synchronous_commit: "off", full_page_writes: "off" } : {}),
    ...options.settings
  }
  return Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`])
}

/** Starts the postmaster and waits until it accepts connections; it is stopped (fast shutdown) when the scope closes. */
const startPostmaster = (postgresPath: string, dataDir: string, options: EmbeddedPostgresOptions, socketDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const log = openSync(join(options.dir, "postgres.log"), "a", 0o600)
        let child: ChildProcess
        try {
          // its own process group: a Ctrl-C meant for the app must not stop the database under it
          const command = [...launcher(), postgresPath, "-D", dataDir, ...settingsOf(options, socketDir)]
          child = spawn(command[0]!, command.slice(1), { env: childEnv(), stdio: ["ignore", log, log], detached: true })
        } finally {
          closeSync(log)
        }
        const exited = new Promise<number | string>((r) => child.once("exit", (code, signal) => r(code ?? signal ?? -1)))
        child.once("error", () => {})
        const deadline = Date.now() + 120_000
        for (;;) {
          const outcome = await Promise.race([exited, sleep(20).then(() => undefined)])
          if (outcome !== undefined) {
            const tail = (await readFile(join(options.dir, "postgres.log"), "utf8").catch(() => "")).slice(-2_000)
            throw new Error(`the embedded PostgreSQL exited (${outcome}) before it was ready:\n${tail}`)
          }
          const status = await postmasterStatus(dataDir)
          if (status?.ready === true && status.pid === child.pid) return { child, exited }
          if (Date.now() > deadline) {
            child.kill("SIGKILL")
            throw new Error("the embedded PostgreSQL was not ready within 120 s")
          }
        }
      },
      catch: fail(`cannot start the embedded PostgreSQL in ${options.dir}`)
    }),
    ({ child, exited }) =>
      Effect.promise(async () => {
        if (child.exitCode !== null || child.signalCode !== null) return
        child.kill("SIGINT") // fast shutdown: open transactions roll back, the rest is on disk
        let timer: NodeJS.Timeout | undefined
        const stopped = await Promise.race([
          exited.then(() => true),
          new Promise<false>((r) => (timer = setTimeout(() => r(false), 30_000)))
        ]).finally(() => clearTimeout(timer))
        if (!stopped) {
          child.kill("SIGQUIT")
          await exited
        }
      })
  )

/** Waits for the server another process runs on `dir`. */
const attach = (dataDir: string, holder: number) =>
  Effect.tryPromise({
    try: async () => {
      const deadline = Date.now() + 60_000
      while (Date.now() < deadline) {
        if ((await postmasterStatus(dataDir))?.ready === true) return
        if (!isAlive(holder)) throw new Error(`the process ${holder} that ran it has ended`)
        await sleep(50)
      }
      throw new Error(`the embedded PostgreSQL of process ${holder} was not ready within 60 s`)
    },
    catch: fail(`cannot reach the embedded PostgreSQL in ${dataDir}`)
  })

/**
 * The embedded server of `options.dir`: started here (initdb the first time) or, with
 * `attach`, the one another process runs. Scoped: closing the scope stops a server started
 * here and releases the lock.
 */
export const openEmbeddedPostgres = (options: EmbeddedPostgresOptions): Effect.Effect<EmbeddedPostgresInfo, EmbeddedPostgresError, Scope.Scope> =>
  Effect.gen(function*() {
    const started = performance.now()
    const dir = resolve(options.dir)
    const dataDir = join(dir, "data")
    const socketDir = socketDirOf(dir)
    yield* Effect.tryPromise({
      try: async () => {
        await ownerOnlyDir(dir)
        await ownerOnlyDir(socketDir)
      },
      catch: fail(`cannot prepare ${dir}`)
    })
    const info = (owned: boolean, created: boolean): EmbeddedPostgresInfo => ({
      dir,
      host: options.tcp === undefined ? socketDir : "127.0.0.1",
      port: options.tcp?.port ?? SOCKET_PORT,
      username: SUPERUSER,
      database: "postgres",
      url: options.tcp === undefined
        ? undefined
        : `postgres://${SUPERUSER}:${encodeURIComponent(options.tcp.password)}@127.0.0.1:${options.tcp.port}/postgres`,
      owned,
      created,
      openedInMs: performance.now() - started
    })
    const lock = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => tryLock(dir), catch: fail(`cannot take the lock of ${dir}`) }),
      (lock) =>
        lock._tag === "Taken"
          ? Effect.promise(async () => {
            openHere.delete(dir)
            await rm(lock.path, { force: true })
          })
          : Effect.void
    )
    if (lock._tag === "HeldBy") {
      if (options.attach !== true) {
        return yield* new EmbeddedPostgresError({
          message: `the embedded database in ${dir} is run by process ${lock.pid}; stop it, or run every process against one PostgreSQL server (DATABASE_URL)`
        })
      }
      yield* attach(dataDir, lock.pid)
      return info(false, false)
    }
    const binaries = yield* Effect.tryPromise({ try: postgresBinaries, catch: fail("cannot find the embedded PostgreSQL") })
    const created = yield* Effect.tryPromise({
      try: async () => {
        await stopLeftover(dataDir)
        if (await pathExists(join(dataDir, "PG_VERSION"))) return false
        await initdb(binaries.initdb, dataDir, { ...options, dir })
        return true
      },
      catch: fail(`cannot create the embedded PostgreSQL cluster in ${dataDir}`)
    })
    yield* startPostmaster(binaries.postgres, dataDir, { ...options, dir }, socketDir)
    const opened = info(true, created)
    yield* Effect.logDebug(`embedded PostgreSQL in ${dir} ready in ${opened.openedInMs.toFixed(0)} ms${created ? " (new cluster)" : ""}`)
    return opened
  })

/** The time node-postgres waits for a connection of the embedded server before giving up. */
export const CONNECT_TIMEOUT = Duration.seconds(10)
