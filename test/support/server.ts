/**
 * A real Hush API on a random port inside the test process, composed as `npm start` is
 * (apps/runtime/root.ts) on a test configuration: memory store, local-disk blobs in a temp
 * dir, the real ffmpeg probe. `run` executes core effects against the same services the
 * server uses (e.g. to create accounts as the operator CLI would).
 *
 * Options: `limits` (partial override of the configured numbers), `runners` (the model
 * runners this deployment has; `[]` retires every model; default those of the configuration:
 * `builtin`, and the GPU provider's with `gpuProvider`), `clock` (a Clock every fiber of
 * the server reads, e.g. test/support/clock.ts), and `override` (a layer built on top of the
 * core's services whose outputs replace them, e.g. a failing RateLimiter or a dying repo; it
 * may read the originals to wrap them), `logLevel`, `s3` (the bytes on an S3 bucket), and for
 * self-serve accounts `accounts` (OAuth providers, SMTP) and `accountSettings` (their numbers).
 * Mail goes to the dev outbox in `dataDir`. `httpServer` (or `HUSH_TEST_HTTP_SERVER=platform`)
 * serves through the platform's `NodeHttpServer` instead of Hush's own (adapters/node-http).
 */
import { NodeHttpServer } from "@effect/platform-node"
import * as NodeHttp from "../../adapters/node-http/server.js"
import { type Clock, Effect, HashMap, Layer, Logger, LogLevel, ManagedRuntime, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckJsonAnswers } from "../../apps/api/server/edge/json-answer.js"
import { layerApi } from "../../apps/api/server/server.js"
import type { WorkerOptions } from "../../apps/worker/background.js"
import type { DenoiseProvider } from "../../core/ports/denoise-provider.js"
import type { AccountsConfig, GpuProviderConfig, HushConfig, PaymentsConfig } from "../../apps/runtime/config.js"
import { fakeWebhookSecret } from "../../adapters/fake-payments/service.js"
import { compose, type CoreServices } from "../../apps/runtime/root.js"
import { DEFAULT_OBSERVABILITY, type ObservabilityConfig } from "../../apps/runtime/observability.js"
import type { AccountSettings } from "../../core/domain/account-settings.js"
import type { Limits } from "../../core/domain/limits.js"
import { parseTrustedProxies } from "../../core/rules/ip-address.js"
import { createAccountWithKeys } from "../../core/services/accounts.js"
import type { S3Options } from "../../adapters/s3/index.js"
import { freePort } from "./ports.js"

export { freePort }

/** What the core layer provides: an `override` may need any of it and replace any of it. */
export type { CoreServices }

export interface TestServerOptions {
  readonly limits?: Partial<Limits>
  readonly runners?: ReadonlyArray<string>
  readonly clock?: Clock.Clock
  readonly override?: Layer.Layer<any, never, CoreServices>
  /** The least severe log level printed (e.g. `LogLevel.None` where failures are provoked on purpose). */
  readonly logLevel?: LogLevel.LogLevel
  /**
   * Collects the server's log lines here instead of printing them: `LEVEL message` followed by
   * its annotations as `key=value` (e.g. `jobId=job_…`), to check what is logged and not shown.
   */
  readonly logs?: Array<string>
  /**
   * Runs the built-in worker in the server (as `npm start` does): live jobs are claimed and
   * denoised. A layer given here replaces the RNNoise provider (e.g. one that fails on purpose).
   */
  readonly worker?: boolean | Layer.Layer<DenoiseProvider, never, CoreServices>
  readonly workerOptions?: WorkerOptions
  /**
   * A GPU provider as GPU_PROVIDER_URL & co. configure one: its runner joins the configured
   * runners (unless `runners` is given) and `worker: true` runs its models through it (beside
   * RNNoise), as `npm start` does.
   */
  readonly gpuProvider?: GpuProviderConfig
  /** File bytes on this S3 bucket (e.g. test/support/s3rver.ts's) instead of local disk. */
  readonly s3?: S3Options
  /** Self-serve accounts' configuration (OAuth providers, SMTP), as the environment gives it. */
  readonly accounts?: AccountsConfig
  /** Overrides of the accounts' numbers (e.g. a higher signup limit for a file that signs many up). */
  readonly accountSettings?: Partial<AccountSettings>
  /** Metrics, logs and traces as the environment configures them (METRICS_TOKEN & co.); off by default. */
  readonly observability?: Partial<ObservabilityConfig>
  /** Who takes payments (default: the embedded fake, as without PAYMENTS). */
  readonly payments?: PaymentsConfig
  /** WEBHOOKS_ALLOW_PRIVATE: live webhook endpoints may be local (a receiver inside the test). */
  readonly webhooksAllowPrivate?: boolean
  /**
   * PUBLIC_BASE_URL, when it is not the server's own address: e.g. a proxy in front of it
   * (test/support/storage-proxy.ts), which the signed storage URLs then point at.
   */
  readonly publicBaseUrl?: string
  /** TRUSTED_PROXIES, as its text (e.g. `127.0.0.1/32`): the tests' requests then come from the proxy it trusts. */
  readonly trustedProxies?: string
  /**
   * Which server answers: Hush's own (`hush`, adapters/node-http, what `npm start` runs) or the
   * platform's `NodeHttpServer` (`platform`). Default: `HUSH_TEST_HTTP_SERVER`, else `hush`
   * (`npm run test:platform-server` runs the API suite on the platform's).
   */
  readonly httpServer?: TestHttpServer
}

export type TestHttpServer = "hush" | "platform"

/** `HUSH_TEST_HTTP_SERVER`: the server the tests' servers run on unless a test names one. */
export const testHttpServer = (): TestHttpServer => {
  const named = process.env.HUSH_TEST_HTTP_SERVER ?? "hush"
  if (named !== "hush" && named !== "platform") throw new Error(`HUSH_TEST_HTTP_SERVER: '${named}' is neither hush nor platform`)
  return named
}

/**
 * What a test server prints when a test neither collects its logs nor sets a level: warnings and
 * worse (one info line per request made the CI log megabytes). `TEST_LOG_LEVEL=debug` (or `info`)
 * shows everything again when a test is being debugged.
 */
const PRINTED_LOG_LEVEL = LogLevel.allLevels.find((level) => level._tag.toLowerCase() === (process.env.TEST_LOG_LEVEL ?? "warning").toLowerCase()) ??
  LogLevel.Warning

const trustedProxiesOf = (text: string | undefined) => {
  const parsed = parseTrustedProxies(text)
  if ("invalid" in parsed) throw new Error(`trustedProxies: '${parsed.invalid}' is not a CIDR`)
  return parsed.cidrs
}

export const startTestServer = async (options: TestServerOptions = {}) => {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), "hush-e2e-"))
  const baseUrl = `http://127.0.0.1:${port}`
  const config: HushConfig = {
    port, dataDir, publicBaseUrl: options.publicBaseUrl ?? baseUrl, env: "test", store: "memory", databaseUrl: Option.none(),
    blobStore: options.s3 === undefined ? "local" : "s3", s3: options.s3, redisUrl: Option.none(),
    gpuProvider: options.gpuProvider, accounts: options.accounts, payments: options.payments,
    webhooksAllowPrivate: options.webhooksAllowPrivate,
    trustedProxies: trustedProxiesOf(options.trustedProxies),
    observability: { ...DEFAULT_OBSERVABILITY, ...options.observability }
  }
  const keys = { signingSecret: "e2e-signing-secret-0123456789abcdef", cursorKey: "e2e-cursor-key" }
  // the same composition as `npm start` (apps/runtime/root.ts), on a test configuration
  const root = compose(config, keys, { runners: options.runners, limits: options.limits, accountSettings: options.accountSettings })
  // the override's services win over the originals (provideMerge keeps the later ones)
  const core: Layer.Layer<CoreServices> = options.override === undefined
    ? root.core
    : Layer.provideMerge(options.override, root.core) as Layer.Layer<CoreServices>
  const listen = { port, host: "127.0.0.1" }
  const httpServer = (options.httpServer ?? testHttpServer()) === "platform"
    ? NodeHttpServer.layer(createServer, listen)
    : NodeHttp.layer(createServer, listen)
  const http = Layer.merge(root.api(layerApi, httpServer), root.metricsPort)
  const server = options.worker === undefined || options.worker === false
    ? http
    : Layer.merge(http, root.worker({ ...options.workerOptions, provider: options.worker === true ? undefined : options.worker }))
  // the clock and log level go in below everything, so the fibers the server forks inherit them
  const logs = options.logs
  const settings = Layer.mergeAll(
    root.tracing,
    // a direct JSON answer must be what the schema's encoding would have sent (edge/json-answer.ts)
    Layer.succeed(CheckJsonAnswers, true),
    options.clock === undefined ? Layer.empty : Layer.setClock(options.clock),
    Logger.minimumLogLevel(options.logLevel ?? (logs === undefined ? PRINTED_LOG_LEVEL : LogLevel.Info)),
    logs === undefined ? Layer.empty : Logger.replace(Logger.defaultLogger, Logger.make(({ annotations, logLevel, message }) => {
      const tags = [...HashMap.toEntries(annotations)].map(([key, value]) => ` ${key}=${String(value)}`).join("")
      logs.push(`${logLevel.label} ${Array.isArray(message) ? message.map(String).join(" ") : String(message)}${tags}`)
    }))
  )
  const runtime = ManagedRuntime.make(Layer.provideMerge(server, core).pipe(Layer.provide(settings)))
  await runtime.runPromise(Effect.void)
  return {
    baseUrl,
    dataDir,
    /** The fake payment provider's webhook signing secret (as the server derives it). */
    paymentsWebhookSecret: fakeWebhookSecret(keys.signingSecret),
    run: <A, E>(effect: Effect.Effect<A, E, ManagedRuntime.ManagedRuntime.Context<typeof runtime>>) => runtime.runPromise(effect),
    /** An active account with a live and a test key (all scopes) and optional credit, as `admin account create` makes. */
    createAccount: (creditMicros = 0) =>
      runtime.runPromise(createAccountWithKeys({ email: `user-${Math.random().toString(36).slice(2)}@example.com`, creditMicros })),
    close: async () => {
      await runtime.dispose()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

export type TestServer = Awaited<ReturnType<typeof startTestServer>>

/** Any Hush reached over HTTP: a test server, or `npm start` as its own process (its address and data folder, for the dev outbox). */
export interface Reachable {
  readonly baseUrl: string
  readonly dataDir: string
}
