/**
 * The key cache (adapters/postgres/key-cache.ts) on a real server: what it keeps, how another
 * connection's change reaches it, and that it stops keeping anything while its notification
 * connection is down. A change "nobody announces" is made with the announcing trigger disabled,
 * the one way to tell a kept answer from a fresh one.
 */
import { it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { AUTH_CHANGED_CHANNEL, AUTH_LISTENER_NAME, type KeyCacheListen, PostgresKeyCache, PostgresKeyCacheListen } from "../../../adapters/postgres/index.js"
import { type HushConfig, loadConfig } from "../../../apps/runtime/config.js"
import { layerPersistence } from "../../../apps/runtime/layers.js"
import { AccountRepo, KeyRepo } from "../../../core/ports/repositories.js"
import { makeAccount, makeKey } from "../../contracts/fixtures.js"
import { createDatabase, databaseUrl, dropDatabase, freshSchemaPersistence, requirePostgres, runSql } from "../../support/postgres.js"

await requirePostgres()

const T1 = 1_900_000_000_000

/** Waits (up to 10 s) until `check` holds. */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let waited = 0; waited < 10_000; waited += 20) {
      if (yield* check) return
      yield* Effect.sleep("20 millis")
    }
    throw new Error("the condition did not hold within 10 s")
  })

const revokedAt = (hash: string) =>
  Effect.flatMap(KeyRepo, (keys) => keys.findByHashWithAccount(hash)).pipe(Effect.map((found) => Option.getOrThrow(found).key.revokedAt))

/**
 * A change to the key's row that no trigger announces. The trigger is back (as the migration
 * left it) when the transaction commits, so what the test does next is announced as ever.
 */
const unannouncedRevoke = (id: string, at: number | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.all([
      sql.unsafe(`ALTER TABLE api_keys DISABLE TRIGGER api_keys_auth_changed`),
      sql.unsafe(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1`, [id, at]),
      sql.unsafe(`ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_auth_changed`)
    ])))

describe("postgres key cache", () => {
  let database = ""
  beforeAll(async () => {
    database = await createDatabase("hush_key_cache")
  })
  afterAll(async () => {
    if (database !== "") await dropDatabase(database)
  })

  const layer = () => freshSchemaPersistence(database)

  const setUp = Effect.gen(function*() {
    const cache = yield* PostgresKeyCache
    yield* eventually(Effect.sync(() => cache.listening()))
    const owner = makeAccount()
    yield* Effect.flatMap(AccountRepo, (accounts) => accounts.insert(owner))
    const key = makeKey({ accountId: owner.id })
    yield* Effect.flatMap(KeyRepo, (keys) => keys.insert(key))
    return { cache, owner, key }
  })

  it.live("keeps what it found while listening, until an announcement", () =>
    Effect.gen(function*() {
      const { key } = yield* setUp
      expect(yield* revokedAt(key.hash)).toBeNull()
      yield* unannouncedRevoke(key.id, T1)
      expect(yield* revokedAt(key.hash)).toBeNull() // the kept answer
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`NOTIFY ${AUTH_CHANGED_CHANNEL}`))
      yield* eventually(Effect.map(revokedAt(key.hash), (at) => at === T1))
    }).pipe(Effect.provide(layer())))

  it.live("sees another connection's revocation and freeze once they commit (the triggers announce them)", () =>
    Effect.gen(function*() {
      const { key, owner } = yield* setUp
      expect(yield* revokedAt(key.hash)).toBeNull()
      const sql = yield* SqlClient.SqlClient
      // as the operator CLI or another node would: plain SQL on another connection
      yield* sql.unsafe(`UPDATE accounts SET status = 'frozen' WHERE id = $1`, [owner.id])
      yield* eventually(Effect.map(Effect.flatMap(KeyRepo, (keys) => keys.findByHashWithAccount(key.hash)), (found) =>
        Option.getOrThrow(Option.getOrThrow(found).account).status === "frozen"))
      yield* sql.unsafe(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1`, [key.id, T1])
      yield* eventually(Effect.map(revokedAt(key.hash), (at) => at === T1))
    }).pipe(Effect.provide(layer())))

  it.live("does not announce a last_used_at refresh, and follows this node's own: its time of use, nothing else", () =>
    Effect.gen(function*() {
      const { key } = yield* setUp
      const keys = yield* KeyRepo
      yield* keys.findByHashWithAccount(key.hash)
      yield* unannouncedRevoke(key.id, T1)
      // markUsed writes only the time: the other fields passed with it are not the key's
      yield* keys.markUsed(makeKey({ ...key, lastUsedAt: T1 + 5, name: "not this", scopes: [] }))
      yield* Effect.sleep("200 millis") // time for an announcement, were there one
      const found = Option.getOrThrow(yield* keys.findByHashWithAccount(key.hash)).key
      expect(found.lastUsedAt).toBe(T1 + 5)
      expect(found.revokedAt).toBeNull() // still the kept answer: the refresh announced nothing
      expect(found).toEqual(makeKey({ ...key, lastUsedAt: T1 + 5 }))
    }).pipe(Effect.provide(layer())))

  it.live("keeps nothing while its notification connection is down, and resumes once it is back", () =>
    Effect.gen(function*() {
      const { cache, key } = yield* setUp
      const sql = yield* SqlClient.SqlClient
      expect(yield* revokedAt(key.hash)).toBeNull()
      yield* sql.unsafe(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
        [AUTH_LISTENER_NAME]
      )
      yield* eventually(Effect.sync(() => !cache.listening()))
      yield* unannouncedRevoke(key.id, T1)
      expect(yield* revokedAt(key.hash)).toBe(T1) // from the database: nothing was kept
      yield* eventually(Effect.sync(() => cache.listening()))
      expect(yield* revokedAt(key.hash)).toBe(T1)
      yield* unannouncedRevoke(key.id, null)
      expect(yield* revokedAt(key.hash)).toBe(T1) // kept again
    }).pipe(Effect.provide(layer())))

  const listeningAs = (listen: KeyCacheListen) => freshSchemaPersistence(database).pipe(Layer.provide(Layer.succeed(PostgresKeyCacheListen, listen)))

  it.live("keeps nothing with DATABASE_LISTEN_URL=off", () =>
    Effect.gen(function*() {
      const cache = yield* PostgresKeyCache
      const owner = makeAccount()
      yield* Effect.flatMap(AccountRepo, (accounts) => accounts.insert(owner))
      const key = makeKey({ accountId: owner.id })
      yield* Effect.flatMap(KeyRepo, (keys) => keys.insert(key))
      expect(yield* revokedAt(key.hash)).toBeNull()
      yield* unannouncedRevoke(key.id, T1)
      expect(yield* revokedAt(key.hash)).toBe(T1)
      expect(cache.listening()).toBe(false)
    }).pipe(Effect.provide(listeningAs("off"))))

  it.live("listens on DATABASE_LISTEN_URL when it is a URL", () =>
    Effect.gen(function*() {
      const { key } = yield* setUp
      expect(yield* revokedAt(key.hash)).toBeNull()
      yield* unannouncedRevoke(key.id, T1)
      expect(yield* revokedAt(key.hash)).toBeNull()
      const sql = yield* SqlClient.SqlClient
      const [listener] = yield* sql.unsafe<{ readonly n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [AUTH_LISTENER_NAME])
      expect(listener?.n).toBeGreaterThanOrEqual(1)
    }).pipe(Effect.provide(listeningAs({ url: databaseUrl(database) }))))

  it("reads DATABASE_LISTEN_URL: unset, a URL, off; set but empty stops start-up", async () => {
    const load = (env: Record<string, string>) =>
      Effect.runPromise(Effect.either(loadConfig.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: "/tmp/hush-config-test", ...env }))))
      )))
    const listen = async (env: Record<string, string>) => {
      const config = await load(env)
      return config._tag === "Right" ? config.right.keyCacheListen : "refused"
    }
    expect(await listen({})).toBe("pool")
    expect(await listen({ DATABASE_LISTEN_URL: "off" })).toBe("off")
    expect(await listen({ DATABASE_LISTEN_URL: " postgres://db:5432/hush " })).toEqual({ url: "postgres://db:5432/hush" })
    expect(await listen({ DATABASE_LISTEN_URL: "" })).toBe("refused")
  })

  it("a process that authenticates no key (a separate worker, the CLI) holds no listening connection", async () => {
    const own = await createDatabase("hush_key_cache_worker")
    const listeners = () =>
      runSql(databaseUrl(own), (sql) =>
        sql.unsafe<{ readonly n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = $2`, [AUTH_LISTENER_NAME, own]))
        .then((rows) => rows[0]?.n)
    const config = {
      port: 1, dataDir: "/tmp", publicBaseUrl: "http://x", env: "test", store: "postgres", databaseUrl: Option.some(databaseUrl(own)),
      blobStore: "local", redisUrl: Option.none()
    } satisfies HushConfig
    /** The listening connections seen while the layer is built: once one shows, or after 2 s. */
    const whileBuilt = (authenticates: boolean) =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(layerPersistence(config, { authenticates }))
        let seen = 0
        // the listener connects in the background
        for (let waited = 0; waited < 2_000 && seen === 0; waited += 50) {
          yield* Effect.sleep("50 millis")
          seen = (yield* Effect.promise(listeners)) ?? 0
        }
        return seen
      })))
    try {
      expect(await whileBuilt(false)).toBe(0)
      expect(await whileBuilt(true)).toBe(1)
    } finally {
      await dropDatabase(own)
    }
  })
})
