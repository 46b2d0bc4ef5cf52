/**
 * The core's ports bound to adapters according to configuration: the one place an app's
 * environment is composed. Apps add only their own pieces (HTTP, worker loop, CLI).
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Context, Effect, Layer, Option } from "effect"
import { createReadStream } from "node:fs"
import { join } from "node:path"
import { layerFfmpegAudioProbe } from "../../adapters/ffmpeg/probe.js"
import { layerHttpProvider, layerRoutingProvider } from "../../adapters/http-provider/index.js"
import { BUILTIN_RUNNER, layerRnnoiseProvider } from "../../adapters/rnnoise/provider.js"
import {
  TEST_MODE_SAMPLE_BITRATE_KBPS, TEST_MODE_SAMPLE_DURATION_SECONDS, TEST_MODE_SAMPLE_PATH, testModeSamplePath
} from "../../adapters/ffmpeg/sample.js"
import { LocalStorageConfig, localStorageRoutes, layerLocalStorage, sweepStale } from "../../adapters/local-storage/index.js"
import { layerMemoryPersistence } from "../../adapters/memory/index.js"
import { layerEmbeddedPostgres } from "../../adapters/embedded-postgres/index.js"
import { layerPostgresFromUrl, PostgresKeyCacheListen } from "../../adapters/postgres/index.js"
import { layerMemoryRateLimiter } from "../../adapters/memory/rate-limiter.js"
import { layerRandomIds } from "../../adapters/webcrypto/ids.js"
import { layerNodeDigests } from "../../adapters/node-crypto/digests.js"
import { layerWebhookSender } from "../../adapters/webhook-http/sender.js"
import { DEFAULT_MODEL_DEFINITIONS, makeCatalog, ModelCatalog } from "../../core/domain/catalog.js"
import { DeploymentSecrets, TestSample } from "../../core/domain/deployment.js"
import { OUTPUT_FORMATS, type OutputFormat, outputBitrateKbps } from "../../core/domain/denoise-options.js"
import { DEFAULT_LIMITS, type Limits, LimitsConfig } from "../../core/domain/limits.js"
import { BlobError, BlobStore } from "../../core/ports/blob-store.js"
import { retryWhileUnavailable } from "../../core/ports/unavailable.js"
import type { DenoiseProvider } from "../../core/ports/denoise-provider.js"
import { layerArgon2Hasher } from "../../adapters/argon2/hasher.js"
import { layerOutboxMailer } from "../../adapters/mail/outbox.js"
import { DEFAULT_MAIL_FROM, layerSmtpMailer } from "../../adapters/mail/smtp.js"
import { layerOAuthProviders } from "../../adapters/oauth/providers.js"
import { type AccountSettings, AccountSettingsConfig, defaultAccountSettings } from "../../core/domain/account-settings.js"
import type { Mailer } from "../../core/ports/mailer.js"
import type { PasswordHasher } from "../../core/ports/password-hasher.js"
import { FakePayments, fakeWebhookSecret } from "../../adapters/fake-payments/service.js"
import { PaymentProvider } from "../../core/ports/payments.js"
import type { HushConfig } from "./config.js"
import { traced } from "./traced.js"
import type { DeploymentKeys } from "./secrets.js"

export const SAMPLE_STORAGE_KEY = "samples/test-mode.mp3"

const sampleStorageKey = (format: OutputFormat) => `samples/test-mode.${OUTPUT_FORMATS[format].extension}`

/** Puts the shipped sample into the blob store once, in every output format; every test-mode job returns one. */
export const layerTestSample = Layer.effect(TestSample, Effect.gen(function*() {
  const blobs = yield* BlobStore
  const store = (format: OutputFormat) => Effect.gen(function*() {
    const key = sampleStorageKey(format)
    const path = format === "mp3" ? TEST_MODE_SAMPLE_PATH : testModeSamplePath(OUTPUT_FORMATS[format].extension)
    const stored = yield* blobs.stat(key)
    const sizeBytes = Option.isSome(stored)
      ? stored.value.sizeBytes
      : (yield* blobs.write(
        key,
        NodeStream.fromReadable(() => createReadStream(path), (cause) => new BlobError({ message: `cannot read the ${format} sample`, cause })),
        { contentType: OUTPUT_FORMATS[format].contentType }
      )).sizeBytes
    const bitrateKbps = outputBitrateKbps(format, sizeBytes, TEST_MODE_SAMPLE_DURATION_SECONDS, format === "mp3" ? TEST_MODE_SAMPLE_BITRATE_KBPS : undefined)
    return { storageKey: key, sizeBytes, bitrateKbps, format }
  })
  // a process that starts while storage is unreachable waits for it (decisions.md, Faults)
  const all = Effect.all([store("mp3"), store("wav"), store("flac"), store("opus")])
  const [mp3, wav, flac, opus] = yield* retryWhileUnavailable(all, { forMs: STARTUP_WAIT_MS, what: "storing the test-mode samples" })
  return { mp3, wav, flac, opus }
}).pipe(Effect.orDie))

/** How long a starting process waits for storage that does not answer. */
const STARTUP_WAIT_MS = 60_000

/** Where the embedded PostgreSQL of a data directory lives (adapters/embedded-postgres). */
export const embeddedDatabaseDir = (dataDir: string) => join(dataDir, "postgres")

export interface PersistenceOptions {
  /**
   * Connect to the embedded database that a running server holds, and start it only when
   * none runs (the operator CLI); a server refuses a directory another process holds.
   */
  readonly attachEmbedded?: boolean | undefined
  /**
   * False for a process that never authenticates an API key (a separate worker, the operator
   * CLI): it keeps no key cache, so it holds no listening connection (adapters/postgres/key-cache.ts).
   */
  readonly authenticates?: boolean | undefined
}

/**
 * The repositories: a PostgreSQL server when DATABASE_URL is set, else the embedded
 * PostgreSQL in DATA_DIR/postgres, or memory for tests and HUSH_STORE=memory.
 */
export const layerPersistence = (config: HushConfig, options: PersistenceOptions = {}): Layer.Layer<Persistence> => {
  switch (config.store) {
    case "memory":
      return layerMemoryPersistence
    case "embedded":
      return layerEmbeddedPostgres({ dir: embeddedDatabaseDir(config.dataDir), attach: options.attachEmbedded }).pipe(
        Layer.provide(Layer.succeed(PostgresKeyCacheListen, options.authenticates === false ? "off" : "pool")),
        Layer.orDie
      )
    case "postgres":
      return Option.match(config.databaseUrl, {
        onNone: () => Layer.die(new Error("HUSH_STORE=postgres needs DATABASE_URL")),
        onSome: (url) =>
          layerPostgresFromUrl(url, { preparedStatements: config.preparedStatements }, options.authenticates === false ? "off" : config.keyCacheListen)
            .pipe(Layer.orDie)
      })
  }
}

type Persistence = Layer.Layer.Success<typeof layerMemoryPersistence>

export interface StorageLayers {
  readonly store: Layer.Layer<BlobStore>
  /** Its own HTTP routes (local disk serves signed URLs under /storage); none for S3. */
  readonly routes: Layer.Layer<never>
  /** Housekeeping run with each lifecycle sweep. */
  readonly housekeeping: Effect.Effect<void, unknown>
}

/**
 * The blob store and the HTTP routes it needs on this node: local disk serves its signed
 * URLs under /storage; S3 serves them itself.
 */
export const storageLayers = (config: HushConfig, keys: DeploymentKeys): StorageLayers => {
  const layers = untracedStorageLayers(config, keys)
  // one span per blob-store call (a no-op without a tracer)
  return { ...layers, store: traced(BlobStore, layers.store) }
}

const untracedStorageLayers = (config: HushConfig, keys: DeploymentKeys): StorageLayers => {
  if (config.blobStore === "s3") {
    // loaded only when configured: the AWS SDK costs ~20 MB of memory in every process that imports it
    const store = config.s3 === undefined
      ? Layer.die(new Error("blobStore s3 needs the S3 settings (S3_BUCKET)"))
      : Layer.unwrapEffect(Effect.map(Effect.promise(() => import("../../adapters/s3/index.js")), (s3) => s3.layerS3BlobStore(config.s3!)))
    return { store, routes: Layer.empty, housekeeping: Effect.void }
  }
  const options = { rootDir: join(config.dataDir, "blobs"), publicBaseUrl: config.publicBaseUrl, signingSecret: keys.signingSecret }
  const local = layerLocalStorage(options)
  return {
    store: local,
    routes: localStorageRoutes.pipe(Layer.provide(local)),
    // staging of lapsed multipart uploads and temp files a crash left behind
    housekeeping: sweepStale().pipe(Effect.provide(LocalStorageConfig.layer(options)), Effect.asVoid)
  }
}

/** The model runners this deployment has: the built-in CPU worker always, the GPU provider when configured. */
export const configuredRunners = (config: HushConfig): ReadonlyArray<string> =>
  config.gpuProvider === undefined ? [BUILTIN_RUNNER] : [BUILTIN_RUNNER, config.gpuProvider.name]

/**
 * The worker's DenoiseProvider for the configured runners: RNNoise alone, or RNNoise and the
 * GPU provider (HTTP) behind a router that sends each model to its runner's provider.
 */
export const layerDenoiseProvider = (config: HushConfig): Layer.Layer<DenoiseProvider, never, BlobStore | ModelCatalog> => {
  const gpu = config.gpuProvider
  if (gpu === undefined) return layerRnnoiseProvider()
  return layerRoutingProvider([
    layerRnnoiseProvider(),
    layerHttpProvider({
      name: gpu.name,
      baseUrl: gpu.url,
      token: gpu.token,
      pollIntervalMs: gpu.pollIntervalMs,
      deadlineMs: gpu.deadlineMs,
      requestTimeoutMs: gpu.requestTimeoutMs,
      retry: gpu.retry
    })
  ])
}

/** SMTP when `SMTP_URL` is set, else the dev outbox in DATA_DIR (each message logged with its links in development). */
export const layerMailer = (config: HushConfig): Layer.Layer<Mailer> => {
  const smtpUrl = config.accounts?.smtpUrl
  return smtpUrl === undefined
    ? layerOutboxMailer(config.dataDir, { logLinks: config.env === "development" })
    : layerSmtpMailer({ url: smtpUrl, from: config.accounts?.mailFrom ?? DEFAULT_MAIL_FROM })
}

/**
 * What self-serve accounts need beyond the repositories: their settings (PUBLIC_BASE_URL,
 * TERMS_VERSION, the numbers of decisions.md), mail, password hashing and the configured
 * OAuth providers.
 */
export const layerAccounts = (
  config: HushConfig,
  options: { readonly settings?: Partial<AccountSettings>; readonly hasher?: Layer.Layer<PasswordHasher> } = {}
) =>
  Layer.mergeAll(
    Layer.succeed(AccountSettingsConfig, {
      ...defaultAccountSettings(config.publicBaseUrl),
      ...(config.accounts?.termsVersion === undefined ? {} : { termsVersion: config.accounts.termsVersion }),
      ...options.settings
    }),
    layerMailer(config),
    options.hasher ?? layerArgon2Hasher(),
    layerOAuthProviders({
      publicBaseUrl: config.publicBaseUrl,
      github: config.accounts?.github,
      google: config.accounts?.google,
      oidc: config.accounts?.oidc
    })
  )

/**
 * The payment provider: Stripe with `PAYMENTS=stripe`, else the embedded fake (whose events
 * are signed with a secret derived from the deployment's, so the server and the CLI agree).
 * `FakePayments` is there only with the fake: its page and CLI command look for it.
 */
export const layerPayments = (config: HushConfig, keys: DeploymentKeys): Layer.Layer<PaymentProvider> => {
  const payments = config.payments ?? { provider: "fake" }
  // the SDK (~20 MB) is loaded on first use: a worker never needs it
  if (payments.provider === "stripe") {
    return lazyProvider("stripe", () => import("../../adapters/stripe/index.js").then((m) => m.stripePaymentProvider(payments.stripe)))
  }
  const load = () =>
    import("../../adapters/fake-payments/index.js").then((m) =>
      m.fakePaymentServices({ publicBaseUrl: config.publicBaseUrl, webhookSecret: fakeWebhookSecret(keys.signingSecret) }))
  return Layer.effectContext(Effect.map(Effect.cached(Effect.promise(load)), (loaded) =>
    Context.make(PaymentProvider, delegateProvider("fake", Effect.map(loaded, (s) => s.provider))).pipe(
      Context.add(FakePayments, {
        signedEvent: (checkout, kind, refundMicros) => Effect.flatMap(loaded, (s) => s.fake.signedEvent(checkout, kind, refundMicros))
      })
    )))
}

const delegateProvider = (name: string, loaded: Effect.Effect<PaymentProvider["Type"]>): PaymentProvider["Type"] => ({
  name,
  createCheckout: (request) => Effect.flatMap(loaded, (p) => p.createCheckout(request)),
  parseEvent: (body, signature) => Effect.flatMap(loaded, (p) => p.parseEvent(body, signature))
})

const lazyProvider = (name: string, load: () => Promise<PaymentProvider["Type"]>) =>
  Layer.effect(PaymentProvider, Effect.map(Effect.cached(Effect.promise(load)), (loaded) => delegateProvider(name, loaded)))

/** Everything the core's services need, for one process, over the given blob store (storageLayers). */
export const layerCore = (
  config: HushConfig,
  keys: DeploymentKeys,
  storage: StorageLayers["store"],
  options: PersistenceOptions & {
    readonly runners: ReadonlyArray<string>
    readonly limits?: Partial<Limits> | undefined
    readonly accountSettings?: Partial<AccountSettings> | undefined
    readonly hasher?: Layer.Layer<PasswordHasher> | undefined
  }
) =>
  Layer.mergeAll(
    layerAccounts(config, { settings: options.accountSettings, hasher: options.hasher }),
    layerPayments(config, keys),
    layerPersistence(config, options),
    layerRandomIds,
    layerNodeDigests,
    // defaults, then the environment's (config.limits), then the caller's
    Layer.succeed(LimitsConfig, { ...DEFAULT_LIMITS, ...config.limits, ...options.limits }),
    Layer.succeed(ModelCatalog, makeCatalog(DEFAULT_MODEL_DEFINITIONS, options.runners)),
    Layer.succeed(DeploymentSecrets, { cursorKey: new TextEncoder().encode(keys.cursorKey) }),
    layerFfmpegAudioProbe(),
    layerWebhookSender({ allowPrivate: config.webhooksAllowPrivate === true }),
    Option.match(config.redisUrl, {
      onNone: () => layerMemoryRateLimiter,
      // loaded only when configured, like S3
      onSome: (url) =>
        Layer.unwrapEffect(Effect.map(Effect.promise(() => import("../../adapters/redis/rate-limiter.js")), (redis) => redis.layerRedisRateLimiter(url)))
    }),
    storage,
    layerTestSample.pipe(Layer.provide(storage))
  )
