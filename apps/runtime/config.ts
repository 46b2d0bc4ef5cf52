/**
 * Configuration shared by the API, the worker and the CLI (decisions.md: they read the same
 * settings, so a CLI command acts on the server's data).
 */
import { Config, ConfigError, Effect, Option, Redacted } from "effect"
import { resolve } from "node:path"
import type { RetryPolicy } from "../../adapters/http-provider/client.js"
import type { KeyCacheListen } from "../../adapters/postgres/key-cache.js"
import { S3Config, type S3Options } from "../../adapters/s3/config.js"
import type { StripeOptions } from "../../adapters/stripe/index.js"
import type { Limits } from "../../core/domain/limits.js"
import { type Cidr, parseTrustedProxies } from "../../core/rules/ip-address.js"
import { FFMPEG_SANDBOX_MODES, type FfmpegSandboxMode } from "../../adapters/ffmpeg/sandbox.js"
import { loadObservabilityConfig, type ObservabilityConfig } from "./observability.js"

export type StoreKind = "memory" | "embedded" | "postgres"
/** Where file bytes live: the local disk of this node, or S3 (any S3-compatible store). */
export type BlobStoreKind = "local" | "s3"

/**
 * A remote GPU host speaking docs/gpu-provider-protocol.md: `GPU_PROVIDER_URL` (its base URL;
 * set means configured), `GPU_PROVIDER_TOKEN` (bearer token, required with the URL),
 * `GPU_PROVIDER_NAME` (the runner name models refer to, default `gpu`), and optionally
 * `GPU_PROVIDER_POLL_MS`, `GPU_PROVIDER_DEADLINE_MS`, `GPU_PROVIDER_TIMEOUT_MS` (per request).
 */
export interface GpuProviderConfig {
  readonly name: string
  readonly url: string
  readonly token: Redacted.Redacted<string>
  readonly pollIntervalMs?: number | undefined
  readonly deadlineMs?: number | undefined
  readonly requestTimeoutMs?: number | undefined
  /** Retries of each call (not read from the environment: the defaults, or a test's). */
  readonly retry?: Partial<RetryPolicy> | undefined
}

export interface HushConfig {
  readonly port: number
  readonly dataDir: string
  readonly publicBaseUrl: string
  readonly env: string
  readonly store: StoreKind
  readonly databaseUrl: Option.Option<string>
  /**
   * `DATABASE_LISTEN_URL`: where the key cache listens for changes to keys and accounts
   * (adapters/postgres/key-cache.ts). Unset: like the pool. A PostgreSQL URL: there (set it when
   * DATABASE_URL is a PgBouncer in transaction mode). `off`: no key cache.
   */
  readonly keyCacheListen?: KeyCacheListen | undefined
  /**
   * `DATABASE_PREPARED_STATEMENTS=off`: the pool's statements run unnamed, for a pooler that
   * cannot keep named ones (PgBouncer in transaction mode before 1.21). Default on
   * (adapters/postgres/pool.ts).
   */
  readonly preparedStatements?: boolean | undefined
  readonly blobStore: BlobStoreKind
  /** The bucket and its settings (`S3_BUCKET` & co., adapters/s3/README.md), with `blobStore` "s3". */
  readonly s3?: S3Options | undefined
  /** Shared rate-limit buckets for several API nodes; in process when absent. */
  readonly redisUrl: Option.Option<string>
  /**
   * Overrides of the configured numbers (core/domain/limits.ts): `HUSH_JOB_LEASE_MS`, the
   * worker's lease on a job (default 30 s; heartbeats every third of it). Tests of worker
   * death shorten it so that a lapse comes within seconds. `HUSH_PUT_MAX_BYTES` and
   * `HUSH_MULTIPART_PART_BYTES`: where uploads turn multipart, and the part size (the chaos harness).
   */
  readonly limits?: Partial<Limits>
  /** The in-process worker of `npm start`; `HUSH_WORKER=off` when workers run apart. */
  readonly workerEnabled?: boolean
  /** The most jobs one worker runs at once (`WORKER_CONCURRENCY`; default and rule in apps/worker/loop.ts). */
  readonly workerConcurrency?: number
  /** The GPU provider, when GPU_PROVIDER_URL is set: its runner is then configured (catalog) and run (worker). */
  readonly gpuProvider?: GpuProviderConfig | undefined
  /** Mail, OAuth providers and terms of self-serve accounts (`loadAccountsConfig`); defaults when absent. */
  readonly accounts?: AccountsConfig | undefined
  /** Metrics, logs and traces (apps/runtime/observability.ts); all off or default when absent. */
  readonly observability?: ObservabilityConfig | undefined
  /** Who takes payments (`PAYMENTS`): the embedded fake when absent. */
  readonly payments?: PaymentsConfig | undefined
  /** WEBHOOKS_ALLOW_PRIVATE=true: live webhook endpoints may be http:// and private (local development only). */
  readonly webhooksAllowPrivate?: boolean | undefined
  /** `FFMPEG_SANDBOX`: ffmpeg children in bubblewrap when it works here (`auto`, the default), or never (`off`). */
  readonly ffmpegSandbox?: FfmpegSandboxMode | undefined
  /**
   * `TRUSTED_PROXIES`: the reverse proxies whose `X-Forwarded-For` names the client
   * (comma-separated CIDRs; default none: the socket's peer is the client).
   */
  readonly trustedProxies?: ReadonlyArray<Cidr> | undefined
}

/**
 * `PAYMENTS=stripe` with `STRIPE_SECRET_KEY` and `STRIPE_WEBHOOK_SECRET` (and `STRIPE_API_URL`
 * for another API address, e.g. stripe-mock); otherwise the embedded fake provider, which
 * `HUSH_ENV=production` refuses (it credits without payment).
 */
export type PaymentsConfig =
  | { readonly provider: "fake" }
  | { readonly provider: "stripe"; readonly stripe: StripeOptions }

export interface OAuthClientConfig {
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** A local stand-in of the provider (tests only: adapters/oauth/providers.ts); never from the environment. */
  readonly endpoints?: { readonly web: string; readonly api?: string | undefined } | undefined
}

/**
 * Self-serve accounts (decisions.md, E-mail and Dashboard details): `SMTP_URL` and `MAIL_FROM`
 * (without SMTP_URL, mail goes to the dev outbox in DATA_DIR); `TERMS_VERSION`;
 * `GITHUB_CLIENT_ID`/`_SECRET`, `GOOGLE_CLIENT_ID`/`_SECRET` and `OIDC_ISSUER`/`OIDC_CLIENT_ID`/
 * `OIDC_CLIENT_SECRET` turn on each OAuth provider.
 */
export interface AccountsConfig {
  readonly smtpUrl?: Redacted.Redacted<string> | undefined
  readonly mailFrom?: string | undefined
  readonly termsVersion?: string | undefined
  readonly github?: OAuthClientConfig | undefined
  readonly google?: OAuthClientConfig | undefined
  readonly oidc?: (OAuthClientConfig & { readonly issuer: string }) | undefined
}

/** A setting that counts as unset when empty. */
const present = (name: string) =>
  Effect.map(Config.option(Config.string(name)), (value) => Option.getOrUndefined(Option.filter(Option.map(value, (v) => v.trim()), (v) => v !== "")))

/** Both halves of an OAuth client, or neither. */
const oauthClient = (prefix: string) =>
  Effect.gen(function*() {
    const clientId = yield* present(`${prefix}_CLIENT_ID`)
    const clientSecret = yield* present(`${prefix}_CLIENT_SECRET`)
    if (clientId === undefined && clientSecret === undefined) return undefined
    if (clientId === undefined || clientSecret === undefined) {
      return yield* Effect.fail(ConfigError.MissingData([`${prefix}_CLIENT_ID`, `${prefix}_CLIENT_SECRET`], `${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET go together`))
    }
    return { clientId, clientSecret: Redacted.make(clientSecret) } satisfies OAuthClientConfig
  })

export const loadAccountsConfig = Effect.gen(function*() {
  const smtpUrl = yield* present("SMTP_URL")
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) {
    return yield* Effect.fail(ConfigError.InvalidData(["SMTP_URL"], "SMTP_URL must be smtp://user:pass@host:port or smtps://…"))
  }
  const issuer = yield* present("OIDC_ISSUER")
  const oidcClient = yield* oauthClient("OIDC")
  if ((issuer === undefined) !== (oidcClient === undefined)) {
    return yield* Effect.fail(ConfigError.MissingData(["OIDC_ISSUER"], "OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together"))
  }
  return {
    smtpUrl: smtpUrl === undefined ? undefined : Redacted.make(smtpUrl),
    mailFrom: yield* present("MAIL_FROM"),
    termsVersion: yield* present("TERMS_VERSION"),
    github: yield* oauthClient("GITHUB"),
    google: yield* oauthClient("GOOGLE"),
    oidc: issuer === undefined || oidcClient === undefined ? undefined : { ...oidcClient, issuer }
  } satisfies AccountsConfig
})

const positiveMs = (name: string) =>
  Config.option(Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a positive number of milliseconds`, validation: (ms) => ms > 0 })
  )).pipe(Config.map(Option.getOrUndefined))

const positiveInteger = (name: string) =>
  Config.option(Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 })
  )).pipe(Config.map(Option.getOrUndefined))

/** Undefined unless GPU_PROVIDER_URL is set (an empty value counts as unset). */
export const loadGpuProviderConfig = Effect.gen(function*() {
  const url = Option.filter(
    Option.map(yield* Config.option(Config.string("GPU_PROVIDER_URL")), (text) => text.trim()),
    (text) => text !== ""
  )
  if (Option.isNone(url)) return undefined
  let parsed: URL | undefined
  try {
    parsed = new URL(url.value)
  } catch {
    parsed = undefined
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    return yield* Effect.fail(ConfigError.InvalidData(["GPU_PROVIDER_URL"], "GPU_PROVIDER_URL must be an http(s) URL"))
  }
  const token = yield* Config.redacted("GPU_PROVIDER_TOKEN").pipe(
    Config.validate({ message: "GPU_PROVIDER_TOKEN must not be empty", validation: (token) => Redacted.value(token).trim() !== "" })
  )
  const name = yield* Config.string("GPU_PROVIDER_NAME").pipe(
    Config.withDefault("gpu"),
    Config.validate({
      message: "GPU_PROVIDER_NAME must be a runner name (letters, digits, '-', '_') other than 'builtin'",
      validation: (name) => /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(name) && name !== "builtin"
    })
  )
  return {
    name,
    url: url.value,
    token,
    pollIntervalMs: yield* positiveMs("GPU_PROVIDER_POLL_MS"),
    deadlineMs: yield* positiveMs("GPU_PROVIDER_DEADLINE_MS"),
    requestTimeoutMs: yield* positiveMs("GPU_PROVIDER_TIMEOUT_MS")
  } satisfies GpuProviderConfig
})

/**
 * A variable that selects a backend when set: None when unset, its trimmed value when set. Set
 * but empty (e.g. `DATABASE_URL=` left in a file) stops start-up: silently falling back to
 * the embedded default would lose the operator's data to the wrong store.
 */
const selector = (name: string, meaning: string) =>
  Effect.flatMap(Config.option(Config.string(name)), (value) => {
    if (Option.isNone(value)) return Effect.succeed(Option.none<string>())
    const trimmed = value.value.trim()
    return trimmed === ""
      ? Effect.fail(ConfigError.InvalidData([name], `${name} is set but empty: give ${meaning}, or unset it`))
      : Effect.succeed(Option.some(trimmed))
  })

/** A value quoted in a start-up message: short, control characters shown as escapes. */
const quoted = (value: string) => JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)

/**
 * `HUSH_ENV` (decisions.md, Deployment settings): `development` when unset, else exactly
 * `development` or `production`. Anything else stops start-up: `Production`, `prod`, `staging`
 * or an empty value left by a template would otherwise run as development, with the fake
 * payment provider's free credit.
 */
export const HUSH_ENVS = ["development", "production"] as const
export type HushEnv = typeof HUSH_ENVS[number]

export const loadHushEnv = Effect.flatMap(Config.option(Config.string("HUSH_ENV")), (value): Effect.Effect<HushEnv, ConfigError.ConfigError> => {
  if (Option.isNone(value)) return Effect.succeed("development")
  const env = HUSH_ENVS.find((known) => known === value.value)
  return env !== undefined
    ? Effect.succeed(env)
    : Effect.fail(ConfigError.InvalidData(["HUSH_ENV"], `HUSH_ENV must be development or production, exactly; it is ${quoted(value.value)}`))
})

/** `PAYMENTS`: `stripe` or `fake` (the default), exactly; anything else stops start-up. */
export const loadPaymentsConfig = Effect.gen(function*() {
  const chosen = (yield* present("PAYMENTS")) ?? "fake"
  if (chosen === "fake") return { provider: "fake" } satisfies PaymentsConfig
  if (chosen !== "stripe") {
    return yield* Effect.fail(ConfigError.InvalidData(["PAYMENTS"], `PAYMENTS must be stripe or fake, exactly; it is ${quoted(chosen)}`))
  }
  const secretKey = yield* present("STRIPE_SECRET_KEY")
  const webhookSecret = yield* present("STRIPE_WEBHOOK_SECRET")
  if (secretKey === undefined || webhookSecret === undefined) {
    return yield* Effect.fail(ConfigError.MissingData(["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"], "PAYMENTS=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET"))
  }
  const apiUrl = yield* present("STRIPE_API_URL")
  let api: StripeOptions["api"]
  if (apiUrl !== undefined) {
    const url = URL.canParse(apiUrl) ? new URL(apiUrl) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return yield* Effect.fail(ConfigError.InvalidData(["STRIPE_API_URL"], "STRIPE_API_URL must be an http(s) URL"))
    }
    const protocol = url.protocol === "http:" ? "http" as const : "https" as const
    api = { host: url.hostname, port: url.port === "" ? (protocol === "http" ? 80 : 443) : Number(url.port), protocol }
  }
  return {
    provider: "stripe",
    stripe: { secretKey: Redacted.make(secretKey), webhookSecret: Redacted.make(webhookSecret), api }
  } satisfies PaymentsConfig
})

/** The fake provider credits without payment: a production deployment must not start with it. */
export const checkPaymentsForEnv = (env: HushEnv, payments: PaymentsConfig) =>
  env === "production" && payments.provider === "fake"
    ? Effect.fail(ConfigError.InvalidData(
      ["PAYMENTS"],
      "HUSH_ENV=production needs PAYMENTS=stripe (with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET): the embedded fake payment provider credits without payment"
    ))
    : Effect.void

/** `TRUSTED_PROXIES`; an entry that is not a CIDR stops start-up, named. */
export const loadTrustedProxies = Effect.flatMap(Config.option(Config.string("TRUSTED_PROXIES")), (value) => {
  const parsed = parseTrustedProxies(Option.getOrUndefined(value))
  return "invalid" in parsed
    ? Effect.fail(ConfigError.InvalidData(
      ["TRUSTED_PROXIES"],
      `TRUSTED_PROXIES must be comma-separated CIDRs (e.g. 10.0.0.0/8, 192.0.2.7, fd00::/8): '${parsed.invalid}' is not one`
    ))
    : Effect.succeed(parsed.cidrs)
})

export const loadConfig = Effect.gen(function*() {
  const port = yield* Config.integer("PORT").pipe(Config.withDefault(8787))
  const dataDir = resolve(yield* Config.string("DATA_DIR").pipe(Config.withDefault("./.hush")))
  const publicBaseUrl = (yield* Config.string("PUBLIC_BASE_URL").pipe(Config.withDefault(`http://localhost:${port}`))).replace(/\/+$/, "")
  const env = yield* loadHushEnv
  const databaseUrl = yield* selector("DATABASE_URL", "a PostgreSQL URL (postgres://user:password@host:5432/db)")
  const requested = yield* Config.option(Config.literal("memory", "embedded", "postgres")("HUSH_STORE"))
  const store: StoreKind = Option.getOrElse(requested, () => (Option.isSome(databaseUrl) ? "postgres" : "embedded"))
  if (store === "postgres" && Option.isNone(databaseUrl)) {
    return yield* Effect.fail(ConfigError.MissingData(["DATABASE_URL"], "HUSH_STORE=postgres needs DATABASE_URL"))
  }
  const listenUrl = yield* selector("DATABASE_LISTEN_URL", "a PostgreSQL URL the key cache can LISTEN on, or off")
  const keyCacheListen: KeyCacheListen = Option.match(listenUrl, { onNone: () => "pool", onSome: (url) => (url === "off" ? "off" : { url }) })
  const preparedStatements = (yield* Config.literal("on", "off")("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault("on" as const))) === "on"
  const s3Bucket = yield* selector("S3_BUCKET", "the bucket's name")
  const s3 = Option.isSome(s3Bucket) ? yield* S3Config : undefined
  const blobStore: BlobStoreKind = s3 === undefined ? "local" : "s3"
  const redisUrl = yield* selector("REDIS_URL", "a Redis URL (redis://host:6379)")
  const jobLeaseMs = yield* Config.option(Config.integer("HUSH_JOB_LEASE_MS").pipe(
    Config.validate({ message: "HUSH_JOB_LEASE_MS must be a positive number of milliseconds", validation: (ms) => ms > 0 })
  ))
  const webhookLeaseMs = yield* Config.option(Config.integer("HUSH_WEBHOOK_LEASE_MS").pipe(
    Config.validate({ message: "HUSH_WEBHOOK_LEASE_MS must be a positive number of milliseconds", validation: (ms) => ms > 0 })
  ))
  // where an upload turns multipart, and its parts' size: small in the chaos harness (bench), so
  // that multipart uploads of a few MiB are exercised; S3 wants parts of at least 5 MiB
  const putMaxBytes = yield* positiveInteger("HUSH_PUT_MAX_BYTES")
  const multipartPartBytes = yield* positiveInteger("HUSH_MULTIPART_PART_BYTES")
  const limits: Partial<Limits> = {
    ...Option.match(jobLeaseMs, { onNone: () => ({}), onSome: (ms) => ({ jobLeaseMs: ms }) }),
    ...Option.match(webhookLeaseMs, { onNone: () => ({}), onSome: (ms) => ({ webhookLeaseMs: ms }) }),
    ...(putMaxBytes === undefined ? {} : { putMaxBytes }),
    ...(multipartPartBytes === undefined ? {} : { multipartPartBytes })
  }
  const gpuProvider = yield* loadGpuProviderConfig
  const workerEnabled = (yield* Config.string("HUSH_WORKER").pipe(Config.withDefault("on"))) !== "off"
  const workerConcurrency = Option.getOrUndefined(yield* Config.option(Config.integer("WORKER_CONCURRENCY")))
  const accounts = yield* loadAccountsConfig
  const observability = yield* loadObservabilityConfig
  const payments = yield* loadPaymentsConfig
  yield* checkPaymentsForEnv(env, payments)
  const webhooksAllowPrivate = yield* Config.boolean("WEBHOOKS_ALLOW_PRIVATE").pipe(Config.withDefault(false))
  const ffmpegSandbox = yield* Config.literal(...FFMPEG_SANDBOX_MODES)("FFMPEG_SANDBOX").pipe(Config.withDefault("auto" as const))
  const trustedProxies = yield* loadTrustedProxies
  return {
    ffmpegSandbox, trustedProxies,
    port, dataDir, publicBaseUrl, env, store, databaseUrl, keyCacheListen, preparedStatements, blobStore, s3, redisUrl, limits, gpuProvider, workerEnabled, workerConcurrency,
    accounts, payments, webhooksAllowPrivate, observability
  } satisfies HushConfig
})
