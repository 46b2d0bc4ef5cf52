/**
 * Configuration shared by the API, the worker and the CLI (decisions.md: they read the same
 * settings, so a CLI command acts on the server's data).
 */
import { Config, Effect, Option } from "effect"
import { resolve } from "node:path"
import type { Limits } from "../../core/domain/limits.js"

export type StoreKind = "memory" | "embedded" | "postgres"
/** Where file bytes live: the local disk of this node, or S3 (any S3-compatible store). */
export type BlobStoreKind = "local" | "s3"

export interface HushConfig {
  readonly port: number
  readonly dataDir: string
  readonly publicBaseUrl: string
  readonly env: string
  readonly store: StoreKind
  readonly databaseUrl: Option.Option<string>
  readonly blobStore: BlobStoreKind
  /** Shared rate-limit buckets for several API nodes; in process when absent. */
  readonly redisUrl: Option.Option<string>
  /**
   * Overrides of the configured numbers (core/domain/limits.ts): `HUSH_JOB_LEASE_MS`, the
   * worker's lease on a job (default 30 s; heartbeats every third of it). Tests of worker
   * death shorten it so that a lapse comes within seconds.
   */
  readonly limits?: Partial<Limits>
}

export const loadConfig = Effect.gen(function*() {
  const port = yield* Config.integer("PORT").pipe(Config.withDefault(8787))
  const dataDir = resolve(yield* Config.string("DATA_DIR").pipe(Config.withDefault("./.hush")))
  const publicBaseUrl = (yield* Config.string("PUBLIC_BASE_URL").pipe(Config.withDefault(`http://localhost:${port}`))).replace(/\/+$/, "")
  const env = yield* Config.string("HUSH_ENV").pipe(Config.withDefault("development"))
  const databaseUrl = yield* Config.option(Config.string("DATABASE_URL"))
  const requested = yield* Config.option(Config.literal("memory", "embedded", "postgres")("HUSH_STORE"))
  const store: StoreKind = Option.getOrElse(requested, () => (Option.isSome(databaseUrl) ? "postgres" : "embedded"))
  const s3Bucket = yield* Config.option(Config.string("S3_BUCKET"))
  const blobStore: BlobStoreKind = Option.isSome(s3Bucket) && s3Bucket.value.trim() !== "" ? "s3" : "local"
  const redisUrl = yield* Config.option(Config.string("REDIS_URL"))
  const jobLeaseMs = yield* Config.option(Config.integer("HUSH_JOB_LEASE_MS").pipe(
    Config.validate({ message: "HUSH_JOB_LEASE_MS must be a positive number of milliseconds", validation: (ms) => ms > 0 })
  ))
  const limits: Partial<Limits> = Option.match(jobLeaseMs, { onNone: () => ({}), onSome: (ms) => ({ jobLeaseMs: ms }) })
  return { port, dataDir, publicBaseUrl, env, store, databaseUrl, blobStore, redisUrl, limits } satisfies HushConfig
})
