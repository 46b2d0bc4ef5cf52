/**
 * The pool's named statements (adapters/postgres/pool.ts) on a real server: what each
 * connection prepares, what it leaves unnamed, that failures stay failures, and the switch
 * that turns naming off (DATABASE_PREPARED_STATEMENTS=off).
 */
import { it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { namingClient, layerPostgresPool } from "../../../adapters/postgres/index.js"
import { reusesShapes } from "../../../adapters/postgres/result-shapes.js"
import { type HushConfig, loadConfig } from "../../../apps/runtime/config.js"
import { layerPersistence } from "../../../apps/runtime/layers.js"
import { createDatabase, databaseUrl, dropDatabase, requirePostgres } from "../../support/postgres.js"

await requirePostgres()

const PLUS_ONE = "SELECT $1::int + 1 AS n"

/** The statements this connection has prepared, seen from inside one transaction (one connection). */
const preparedHere = <A, E, R>(before: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.zipRight(
      before,
      sql.unsafe<{ readonly name: string; readonly statement: string }>("SELECT name, statement FROM pg_prepared_statements ORDER BY name")
    )))

describe("the pool's named statements", () => {
  let database: string
  beforeAll(async () => {
    database = await createDatabase("hush_pool")
  })
  afterAll(() => dropDatabase(database))

  it.live("a statement with parameters is prepared once per connection and answers as before; one without stays unnamed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const prepared = yield* preparedHere(Effect.gen(function*() {
        for (const x of [1, 41, -5]) expect((yield* sql.unsafe<{ readonly n: number }>(PLUS_ONE, [x]))[0]?.n).toBe(x + 1)
        yield* sql.unsafe("SELECT 1")
      }))
      const plusOne = prepared.filter((row) => row.statement === PLUS_ONE)
      expect(plusOne).toHaveLength(1)
      expect(plusOne[0]?.name).toMatch(/^hush_\d+$/)
      expect(prepared.some((row) => row.statement === "SELECT 1")).toBe(false)
    }).pipe(Effect.provide(layerPostgresPool({ url: databaseUrl(database) }, { maxConnections: 2 }))))

  it.live("preparedStatements: false names nothing", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const prepared = yield* preparedHere(sql.unsafe(PLUS_ONE, [1]))
      expect(prepared).toEqual([])
    }).pipe(Effect.provide(layerPostgresPool({ url: databaseUrl(database) }, { preparedStatements: false }))))

  it.live("a failing statement fails every time with its own error, and a statement that failed to parse is parsed again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < 2; i++) {
        const division = yield* Effect.flip(sql.unsafe("SELECT 1 / $1::int AS n", [0]))
        expect(String((division.cause as Error).message)).toMatch(/division by zero/)
        const syntax = yield* Effect.flip(sql.unsafe("SELECT $1::int +", [1]))
        expect(String((syntax.cause as Error).message)).toMatch(/syntax error/)
      }
      expect((yield* sql.unsafe<{ readonly n: number }>("SELECT 6 / $1::int AS n", [3]))[0]?.n).toBe(2)
    }).pipe(Effect.provide(layerPostgresPool({ url: databaseUrl(database) }, { maxConnections: 1 }))))

  it("names at most `max` statement texts; further ones run unnamed", async () => {
    const Client = namingClient(2)
    const client = new Client({ connectionString: databaseUrl(database) })
    await client.connect()
    try {
      const texts = ["SELECT $1::int AS a", "SELECT $1::int AS b", "SELECT $1::int AS c"]
      for (const text of texts) {
        for (const x of [1, 2]) {
          const result = await new Promise<pg.QueryResult>((resolve, reject) => client.query(text, [x], (e, r) => (e ? reject(e) : resolve(r))))
          expect(Object.values(result.rows[0] ?? {})).toEqual([x])
        }
      }
      const { rows } = await client.query("SELECT name, statement FROM pg_prepared_statements ORDER BY name")
      expect(rows).toEqual([{ name: "hush_0", statement: texts[0] }, { name: "hush_1", statement: texts[1] }])
    } finally {
      await client.end()
    }
  })

  it("a named statement's rows keep their columns' types on every run, and follow its table when it changes shape", async () => {
    const Client = namingClient()
    const connect = async () => {
      const client = new Client({ connectionString: databaseUrl(database) })
      await client.connect()
      return client
    }
    const run = (client: pg.Client, text: string, values: Array<unknown>) =>
      new Promise<ReadonlyArray<Record<string, unknown>>>((resolve, reject) => client.query(text, values, (e, r) => (e ? reject(e) : resolve(r.rows))))
    const first = await connect()
    const second = await connect()
    try {
      const mixed = "SELECT $1::int AS small, $1::bigint AS big, $2::text AS word, $3::boolean AS flag, NULL::int AS nothing"
      for (const [n, word, flag] of [[1, "a", true], [2, "b", false], [3, "c", true]] as const) {
        expect(await run(first, mixed, [n, word, flag])).toEqual([{ small: n, big: String(n), word, flag, nothing: null }])
      }
      await first.query("CREATE TABLE shaped (a int)")
      await first.query("INSERT INTO shaped VALUES (1)")
      const read = "SELECT * FROM shaped WHERE a = $1"
      expect(await run(first, read, [1])).toEqual([{ a: 1 }])
      await first.query("ALTER TABLE shaped ADD COLUMN b bigint DEFAULT 7")
      // a connection that prepared it before is refused by the server; one that prepares it now gets the new shape
      await expect(run(first, read, [1])).rejects.toThrow(/cached plan must not change result type/)
      expect(await run(second, read, [1])).toEqual([{ a: 1, b: "7" }])
      expect(await run(second, read, [1])).toEqual([{ a: 1, b: "7" }])
    } finally {
      await first.query("DROP TABLE IF EXISTS shaped")
      await Promise.all([first.end(), second.end()])
    }
  })

  it("the pinned node-postgres has the unexported fields whose result shapes are reused (result-shapes.ts)", () => {
    expect(reusesShapes).toBe(true)
  })

  it.live("DATABASE_URL persistence names its statements unless DATABASE_PREPARED_STATEMENTS=off", () =>
    Effect.gen(function*() {
      const config = (preparedStatements: boolean) =>
        ({ store: "postgres", databaseUrl: Option.some(databaseUrl(database)), preparedStatements, dataDir: "/tmp/hush-pool-test" }) as unknown as HushConfig
      const namedWith = (preparedStatements: boolean) =>
        preparedHere(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(PLUS_ONE, [1]))).pipe(
          Effect.map((rows) => rows.some((row) => row.statement === PLUS_ONE)),
          // the postgres store's persistence carries its SqlClient too (layerPostgresFromUrl), though its type names only the ports
          Effect.provide(Layer.fresh(layerPersistence(config(preparedStatements), { authenticates: false })) as unknown as Layer.Layer<SqlClient.SqlClient>)
        )
      expect(yield* namedWith(true)).toBe(true)
      expect(yield* namedWith(false)).toBe(false)
    }))

  it("reads DATABASE_PREPARED_STATEMENTS: on by default, off, anything else stops start-up", async () => {
    const prepared = async (env: Record<string, string>) => {
      const config = await Effect.runPromise(Effect.either(loadConfig.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: "/tmp/hush-config-test", ...env }))))
      )))
      return config._tag === "Right" ? config.right.preparedStatements : "refused"
    }
    expect(await prepared({})).toBe(true)
    expect(await prepared({ DATABASE_PREPARED_STATEMENTS: "on" })).toBe(true)
    expect(await prepared({ DATABASE_PREPARED_STATEMENTS: "off" })).toBe(false)
    expect(await prepared({ DATABASE_PREPARED_STATEMENTS: "no" })).toBe("refused")
  })
})
