/**
 * The key cache: every keyed request looks its key and account up by the key's hash, and on
 * these machines each statement costs ~110 µs of `writev` alone, so a poll made two statements
 * where one would do. Lookups found are kept here and forgotten whenever PostgreSQL announces a
 * change to a key or an account (the `hush_auth_changed` channel, migrations/0010_auth_changes.ts),
 * whoever made it: this node, another node, the operator CLI or a hand-written UPDATE.
 *
 * The rules that keep a revocation (or a freeze, or a scope change) immediate:
 * - Nothing is kept unless this node is listening. Until the listening connection is up, and
 *   from the moment it fails until it is back, every lookup goes to the database. A connection
 *   that stops answering (a half-open socket, which would lose announcements unseen) is given
 *   up within 15 s: it is pinged every 10 s.
 * - Every announcement, connection and loss of connection empties the cache and moves its
 *   generation on; a lookup stores its answer only if the generation did not move while it ran,
 *   so an answer read before a change never lands after the change's announcement.
 * - A change made by this node (`changedHere`) also stops storing for CHANGE_SETTLE_MS: its
 *   transaction may commit after the statement, and the announcement comes only then.
 * - Entries live at most ENTRY_TTL_MS, a bound should an announcement ever be lost unnoticed.
 * Another node's change is seen when its announcement arrives: milliseconds after its commit.
 * Lookups that find nothing are never kept (a new key is usable at once).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import pg from "pg"
import { type AccountRecord, KeyRecord } from "../../core/domain/records.js"

export const AUTH_CHANGED_CHANNEL = "hush_auth_changed"
/** The listening connection's application_name (pg_stat_activity). */
export const AUTH_LISTENER_NAME = "hush-auth-listener"

// wall-clock time (Date.now): the cache's own bookkeeping, not the domain's Clock
const ENTRY_TTL_MS = 60_000
const CHANGE_SETTLE_MS = 2_000
const MAX_ENTRIES = 10_000
const RECONNECT_EVERY = "1 second"
/** A connection that went silent (a half-open socket) is given up after at most this: a ping every 10 s, 5 s to answer. */
const PING_EVERY = "10 seconds"
const PING_TIMEOUT = "5 seconds"

/** What a lookup by hash finds (KeyRepo.findByHashWithAccount). */
export interface KeyWithAccount {
  readonly key: KeyRecord
  readonly account: Option.Option<AccountRecord>
}

export interface KeyCache {
  /** `load`'s answer, from the cache when it holds one; a Some is kept when the rules allow. */
  readonly lookup: <E>(hash: string, load: Effect.Effect<Option.Option<KeyWithAccount>, E>) => Effect.Effect<Option.Option<KeyWithAccount>, E>
  /** This node refreshed a key's `last_used_at` (a change not announced): the kept entry takes the new record. */
  readonly noteUsed: (key: KeyRecord) => void
  /** This node changed a key or an account. */
  readonly changedHere: Effect.Effect<void>
  /** Whether the cache is serving (listening); for tests and health. */
  readonly listening: () => boolean
}

export class PostgresKeyCache extends Context.Tag("hush/postgres/KeyCache")<PostgresKeyCache, KeyCache>() {}

/**
 * Where the cache listens: "pool", on a connection made like the pool's (the default); a URL of
 * its own, for a pool behind PgBouncer in transaction mode, where LISTEN on a pooled session
 * hears nothing reliably (operations.md, Connections); or "off", no cache.
 */
export type KeyCacheListen = "pool" | "off" | { readonly url: string }

export class PostgresKeyCacheListen extends Context.Reference<PostgresKeyCacheListen>()("hush/postgres/KeyCacheListen", {
  defaultValue: (): KeyCacheListen => "pool"
}) {}

interface Entry {
  found: KeyWithAccount
  readonly storedAt: number
}

/** A cache that keeps nothing: every lookup goes to the database. */
const passThrough: KeyCache = {
  lookup: (_hash, load) => load,
  noteUsed: () => undefined,
  changedHere: Effect.void,
  listening: () => false
}

const clientConfig = (config: PgClient.PgClientConfig): pg.ClientConfig | undefined =>
  config.url === undefined && config.host === undefined ? undefined : {
    ...(config.url === undefined ? {} : { connectionString: Redacted.value(config.url) }),
    ...(config.host === undefined ? {} : { host: config.host }),
    ...(config.port === undefined ? {} : { port: config.port }),
    ...(config.database === undefined ? {} : { database: config.database }),
    ...(config.username === undefined ? {} : { user: config.username }),
    ...(config.password === undefined ? {} : { password: Redacted.value(config.password) }),
    ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
    ...LISTENER_OPTIONS
  }

const LISTENER_OPTIONS = { application_name: AUTH_LISTENER_NAME, connectionTimeoutMillis: 5_000, keepAlive: true } as const

const makeKeyCache = (connection: pg.ClientConfig) =>
  Effect.gen(function*() {
    const entries = new Map<string, Entry>()
    let generation = 0
    let listening = false
    let settlesAt = 0
    const forget = () => {
      generation++
      entries.clear()
    }
    const storing = (now: number) => listening && now >= settlesAt

    // one connection that only listens; when it ends, the cache stops and it is made again
    const listenOnce = Effect.acquireUseRelease(
      Effect.tryPromise(async () => {
        const client = new pg.Client(connection)
        client.on("error", () => undefined) // an 'end' follows, which the use below waits for
        const ended = new Promise<void>((resolve) => client.once("end", () => resolve()))
        client.on("notification", forget)
        try {
          await client.connect()
          await client.query(`LISTEN ${AUTH_CHANGED_CHANNEL}`)
          return { client, ended }
        } catch (error) {
          await client.end().catch(() => undefined)
          throw error
        }
      }),
      ({ client, ended }) =>
        Effect.suspend(() => {
          forget()
          listening = true
          // until the connection ends, or stops answering (a notification could be lost unseen)
          const pings = Effect.tryPromise(() => client.query("SELECT 1")).pipe(
            Effect.timeoutFail({ duration: PING_TIMEOUT, onTimeout: () => new Error("no answer") }),
            Effect.repeat(Schedule.spaced(PING_EVERY))
          )
          return Effect.raceFirst(Effect.promise(() => ended), pings)
        }).pipe(
          Effect.ignore,
          Effect.zipRight(Effect.logWarning("key cache: its notification connection closed; keys are looked up in the database until it is back"))
        ),
      ({ client }) =>
        Effect.suspend(() => {
          listening = false
          forget()
          return Effect.promise(() => client.end().catch(() => undefined)).pipe(Effect.interruptible, Effect.timeoutOption(1_000))
        })
    )
    yield* listenOnce.pipe(
      Effect.catchAll(() => Effect.void),
      Effect.repeat(Schedule.spaced(RECONNECT_EVERY)),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      listening = false
      forget()
    }))

    const cache: KeyCache = {
      lookup: (hash, load) =>
        Effect.suspend(() => {
          const now = Date.now()
          const kept = entries.get(hash)
          if (kept !== undefined && storing(now) && now - kept.storedAt < ENTRY_TTL_MS) return Effect.succeed(Option.some(kept.found))
          const before = generation
          return Effect.tap(load, (found) => {
            const at = Date.now()
            if (Option.isNone(found) || generation !== before || !storing(at)) return
            if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!)
            entries.set(hash, { found: found.value, storedAt: at })
          })
        }),
      noteUsed: (key) => {
        const kept = entries.get(key.hash)
        // the time of use and nothing else, as markUsed writes it: the rest of the kept record stays
        if (kept !== undefined && kept.found.key.id === key.id) {
          kept.found = { ...kept.found, key: new KeyRecord({ ...kept.found.key, lastUsedAt: key.lastUsedAt }, { disableValidation: true }) }
        }
      },
      changedHere: Effect.sync(() => {
        settlesAt = Math.max(settlesAt, Date.now() + CHANGE_SETTLE_MS)
        forget()
      }),
      listening: () => listening
    }
    return cache
  })

/**
 * The key cache, one per persistence layer, shared by the key and account repositories. It
 * listens as PostgresKeyCacheListen says; with "pool" and no PgClient in context, or one made
 * from a pool (no connection settings to copy), it keeps nothing.
 */
export const layerPostgresKeyCache = Layer.scoped(
  PostgresKeyCache,
  Effect.gen(function*() {
    const listen = yield* PostgresKeyCacheListen
    if (listen === "off") return passThrough
    if (listen !== "pool") return yield* makeKeyCache({ connectionString: listen.url, ...LISTENER_OPTIONS })
    const connection = Option.flatMap(yield* Effect.serviceOption(PgClient.PgClient), (c) => Option.fromNullable(clientConfig(c.config)))
    return Option.isNone(connection) ? passThrough : yield* makeKeyCache(connection.value)
  })
)
