/**
 * The embedded, persistent default: PGlite (PostgreSQL compiled to WASM) in this process, with
 * its data directory on disk, served to @effect/sql-pg through @electric-sql/pglite-socket on
 * 127.0.0.1. The Postgres adapter's code runs on it unchanged.
 *
 * PGlite is ONE Postgres session. Exactly one connection is allowed: the socket server accepts
 * one and the client pool holds one, never closed while idle. With more, concurrent
 * parameterised queries of different connections interleave inside that one session and return
 * wrong rows without an error (electric-sql/pglite#1046). With one, a transaction owns the
 * connection and every other query or transaction of the process queues in the pool until it
 * ends: correct, serial, and enough for one process. Several processes (API nodes, workers)
 * need a real PostgreSQL server (`DATABASE_URL`).
 *
 * One process at a time may open a data directory: a lock file (`hush.lock`, holding the pid)
 * refuses a second opener while the first is alive, instead of letting two PGlite instances
 * write the same files.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Data, Duration, Effect, Layer, type Scope } from "effect"
import { mkdir, open, readdir, readFile, rm } from "node:fs/promises"
import { join, resolve } from "node:path"
import { PostgresPersistence } from "../postgres/index.js"

export class PgliteOpenError extends Data.TaggedError("PgliteOpenError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface PgliteOptions {
  /** The database directory (the apps use `${DATA_DIR}/db`); created when missing. */
  readonly dataDir: string
  /** Skip the fsync after each commit (faster, loses the last commits on a crash). Default false. */
  readonly relaxedDurability?: boolean | undefined
}

/** A running embedded database and its socket. */
export interface PgliteServerInfo {
  readonly dataDir: string
  readonly host: string
  readonly port: number
  /** How long opening took: PGlite start (initdb on a new directory) plus the socket. */
  readonly openedInMs: number
  /** True when the directory was empty and initdb ran. */
  readonly created: boolean
  readonly db: PGlite
}

export class PgliteServer extends Context.Tag("hush/adapters/PgliteServer")<PgliteServer, PgliteServerInfo>() {}

const LOCK_FILE = "hush.lock"

/** Directories this process holds open (its pid in a lock file is stale unless listed here). */
const openHere = new Set<string>()

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Takes the directory's lock file, or fails naming the process that holds it. */
const takeLock = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const path = join(dataDir, LOCK_FILE)
        for (let attempt = 0; attempt < 2; attempt++) {
          try {
            const handle = await open(path, "wx")
            await handle.writeFile(`${process.pid}\n`)
            await handle.close()
            openHere.add(resolve(dataDir))
            return path
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
            const holder = Number.parseInt(await readFile(path, "utf8").catch(() => ""), 10)
            const held = holder === process.pid ? openHere.has(resolve(dataDir)) : Number.isSafeInteger(holder) && isAlive(holder)
            if (held) {
              throw new Error(
                `the embedded database ${dataDir} is open in process ${holder}; stop it, or run every process against one PostgreSQL server (DATABASE_URL)`
              )
            }
            await rm(path, { force: true }) // left by a process that is gone
          }
        }
        throw new Error(`cannot take the lock file of ${dataDir}`)
      },
      catch: (cause) =>
        new PgliteOpenError({ message: cause instanceof Error ? cause.message : String(cause), cause })
    }),
    (path) =>
      Effect.promise(async () => {
        openHere.delete(resolve(dataDir))
        await rm(path, { force: true })
      })
  )

const isEmptyDir = async (dir: string) => (await readdir(dir)).filter((name) => name !== LOCK_FILE).length === 0

/**
 * Opens PGlite on `dataDir` and serves it on 127.0.0.1 (a free port) to exactly one
 * connection. Scoped: closing the scope stops the socket server, then closes PGlite.
 */
export const openPgliteServer = (options: PgliteOptions): Effect.Effect<PgliteServerInfo, PgliteOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    const started = performance.now()
    yield* Effect.tryPromise({
      try: () => mkdir(options.dataDir, { recursive: true }),
      catch: (cause) => new PgliteOpenError({ message: `cannot create ${options.dataDir}`, cause })
    })
    yield* takeLock(options.dataDir)
    const created = yield* Effect.promise(() => isEmptyDir(options.dataDir))
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create({ dataDir: options.dataDir, relaxedDurability: options.relaxedDurability ?? false }),
        catch: (cause) => new PgliteOpenError({ message: `cannot open the embedded database in ${options.dataDir}`, cause })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.catchAllDefect(() => Effect.void))
    )
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => server.start(),
        catch: (cause) => new PgliteOpenError({ message: "cannot start the embedded database's socket", cause })
      }),
      () => Effect.promise(() => server.stop()).pipe(Effect.catchAllDefect(() => Effect.void))
    )
    const [host, port] = server.getServerConn().split(":")
    const info: PgliteServerInfo = {
      dataDir: options.dataDir,
      host: host!,
      port: Number(port),
      openedInMs: performance.now() - started,
      created,
      db
    }
    yield* Effect.logDebug(`embedded database ${options.dataDir} open in ${info.openedInMs.toFixed(0)} ms`)
    return info
  })

/** The running PGlite server as a layer. */
export const pgliteServerLayer = (options: PgliteOptions) => Layer.scoped(PgliteServer, openPgliteServer(options))

/**
 * A PgClient on the PgliteServer in context: one connection, kept open while idle (the socket
 * accepts exactly one, so a reconnect could race the old socket's close).
 */
export const pgliteClientLayer = Layer.unwrapEffect(Effect.map(PgliteServer, (server) =>
  PgClient.layer({
    host: server.host,
    port: server.port,
    username: "postgres",
    database: "postgres",
    applicationName: "hush-embedded",
    maxConnections: 1,
    minConnections: 1,
    idleTimeout: Duration.zero // 0 ms: node-postgres then never closes an idle connection
  })
))

/**
 * The embedded persistence: the same services as PostgresPersistence (every repository port
 * and the Transactor, migrated at start), plus PgliteServer, PgClient and SqlClient.
 */
export const pgliteLayer = (options: PgliteOptions) =>
  PostgresPersistence.pipe(
    Layer.provideMerge(pgliteClientLayer),
    Layer.provideMerge(pgliteServerLayer(options))
  )
