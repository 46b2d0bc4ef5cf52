/**
 * The embedded, persistent default: a real PostgreSQL server from npm binaries, run by this
 * process with its cluster in a directory of ours (server.ts), and the Postgres adapter's
 * code on it unchanged, through an ordinary connection pool.
 *
 * Compose:
 *   - `layerEmbeddedPostgres({ dir })`: every repository port and the Transactor (migrated at
 *     start), plus `EmbeddedPostgres` (how to reach it), `PgClient` and `SqlClient`.
 *   - with `attach: true` it connects to the server another process runs on `dir` (the
 *     operator CLI while `npm start` runs) and starts one only when none runs.
 */
import { Context, Effect, Layer } from "effect"
import { layerPostgresPersistence, layerPostgresPool } from "../postgres/index.js"
import { CONNECT_TIMEOUT, type EmbeddedPostgresInfo, type EmbeddedPostgresOptions, openEmbeddedPostgres } from "./server.js"

export { EmbeddedPostgresError, type EmbeddedPostgresInfo, type EmbeddedPostgresOptions, openEmbeddedPostgres, socketDirOf } from "./server.js"

export class EmbeddedPostgres extends Context.Tag("hush/adapters/EmbeddedPostgres")<EmbeddedPostgres, EmbeddedPostgresInfo>() {}

/** The running server as a layer (started, or attached to, when built; stopped when its scope closes if started here). */
export const layerEmbeddedPostgresServer = (options: EmbeddedPostgresOptions) =>
  Layer.scoped(EmbeddedPostgres, openEmbeddedPostgres(options))

export interface EmbeddedPoolOptions {
  /** Connections of this process's pool (default 10). */
  readonly maxConnections?: number | undefined
}

/** A PgClient on the EmbeddedPostgres in context. */
export const layerEmbeddedClient = (pool: EmbeddedPoolOptions = {}) =>
  Layer.unwrapEffect(Effect.map(EmbeddedPostgres, (server) => {
    const password = server.url === undefined ? undefined : new URL(server.url).password
    return layerPostgresPool({
      host: server.host,
      port: server.port,
      user: server.username,
      database: server.database,
      password: password === undefined ? undefined : decodeURIComponent(password)
    }, { maxConnections: pool.maxConnections ?? 10, connectTimeout: CONNECT_TIMEOUT })
  }))

/** Persistence on the embedded server: the same services as layerPostgresPersistence, plus EmbeddedPostgres, PgClient and SqlClient. */
export const layerEmbeddedPostgres = (options: EmbeddedPostgresOptions, pool: EmbeddedPoolOptions = {}) =>
  layerPostgresPersistence.pipe(
    Layer.provideMerge(layerEmbeddedClient(pool)),
    Layer.provideMerge(layerEmbeddedPostgresServer(options))
  )
