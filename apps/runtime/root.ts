/**
 * The composition root: the one place a Hush process is assembled from its configuration.
 * `npm start` (apps/api/server/main.ts), `npm run worker` (apps/worker/main.ts), the operator CLI
 * (apps/cli/main.ts) and the tests' server (test/support/server.ts) all take their layers
 * from `compose`, so they cannot drift: the blob store is built once and shared by the core
 * and its HTTP routes, the status page knows whether a GPU provider is configured, and every
 * worker runs with WORKER_CONCURRENCY.
 */
import type { HttpServer } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import type { AccountSettings } from "../../core/domain/account-settings.js"
import type { Limits } from "../../core/domain/limits.js"
import type { PasswordHasher } from "../../core/ports/password-hasher.js"
import type { DenoiseProvider } from "../../core/ports/denoise-provider.js"
import type { layerApi as ApiLayer } from "../api/server/server.js"
import { layerJobQueued } from "../../core/services/job-queued.js"
import { HUSH_VERSION } from "../../core/version.js"
import { layerWorker, type WorkerOptions } from "../worker/background.js"
import { type HushConfig, loadConfig } from "./config.js"
import { signedUrlOrigins } from "../../adapters/s3/config.js"
import { layerMetricsPort } from "./metrics-port.js"
import { layerTracing } from "./tracing.js"
import { DEFAULT_OBSERVABILITY, layerLogging } from "./observability.js"
import { configuredRunners, layerCore, layerDenoiseProvider, storageLayers } from "./layers.js"
import { type DeploymentKeys, loadOrCreateKeys, secureDataDir } from "./secrets.js"


export interface ComposeOptions {
  /** The model runners this deployment has (default: those of the configuration). */
  readonly runners?: ReadonlyArray<string> | undefined
  /** Overrides of the configured numbers, over those of the environment. */
  readonly limits?: Partial<Limits> | undefined
  /** Connect to the embedded database a running server holds (the CLI; see layerPersistence). */
  readonly attachEmbedded?: boolean | undefined
  /** False where no API key is authenticated (a separate worker, the CLI): no key cache (see layerPersistence). */
  readonly authenticates?: boolean | undefined
  /** Overrides of the self-serve accounts' numbers (tests). */
  readonly accountSettings?: Partial<AccountSettings> | undefined
  /** Another password hasher (tests: a fast one). */
  readonly hasher?: Layer.Layer<PasswordHasher> | undefined
}

/** The worker's pieces a caller may replace (tests: a failing provider, a short poll). */
export interface WorkerOverrides extends Omit<WorkerOptions, "housekeeping"> {
  readonly provider?: Layer.Layer<DenoiseProvider, never, CoreServices> | undefined
}

/** What the core layer provides. */
export type CoreServices = Layer.Layer.Success<ReturnType<typeof layerCore>>

export const compose = (config: HushConfig, keys: DeploymentKeys, options: ComposeOptions = {}) => {
  const observability = config.observability ?? DEFAULT_OBSERVABILITY
  const storage = storageLayers(config, keys)
  const core = layerCore(config, keys, storage.store, {
    runners: options.runners ?? configuredRunners(config),
    limits: options.limits,
    attachEmbedded: options.attachEmbedded,
    authenticates: options.authenticates,
    accountSettings: options.accountSettings,
    hasher: options.hasher
  })
  /**
   * The HTTP API with the blob store's routes, on the given server; needs the core. The app
   * (apps/api/server/server.ts `layerApi`) is passed in by the caller, so that a worker or the CLI
   * never loads the HTTP surface: its OpenAPI page alone is megabytes of script to parse.
   */
  const api = <A, E, R>(app: typeof ApiLayer, httpServer: Layer.Layer<A | HttpServer.HttpServer, E, R>) =>
    app({
      publicBaseUrl: config.publicBaseUrl, env: config.env, gpuConfigured: config.gpuProvider !== undefined,
      // local disk's signed URLs are the API's own origin
      storageOrigins: config.blobStore === "s3" && config.s3 !== undefined ? signedUrlOrigins(config.s3) : [],
      metrics: { token: observability.metricsToken, ownPort: Option.isSome(observability.metricsPort) },
      trustedProxies: config.trustedProxies
    }, storage.routes).pipe(
      Layer.provide(httpServer)
    )
  /** The job loop and the lifecycle sweeper (with the blob store's housekeeping); needs the core. */
  const worker = (overrides: WorkerOverrides = {}) => {
    const { provider, ...settings } = overrides
    return layerWorker({ concurrency: config.workerConcurrency, ...settings, housekeeping: storage.housekeeping }).pipe(
      Layer.provide(provider ?? layerDenoiseProvider(config))
    )
  }
  /** `npm start`: the API, and the built-in worker unless HUSH_WORKER=off; needs the core. */
  const server = <A, E, R>(app: typeof ApiLayer, httpServer: Layer.Layer<A | HttpServer.HttpServer, E, R>) =>
    config.workerEnabled === false
      ? api(app, httpServer)
      // one signal for both: a job created through the API wakes the worker at once
      : Layer.merge(api(app, httpServer), worker()).pipe(Layer.provide(layerJobQueued))
  /**
   * The process's logger and level (HUSH_LOG_FORMAT, HUSH_LOG_LEVEL) and its tracer
   * (OTEL_EXPORTER_OTLP_ENDPOINT): the entry points provide it below everything they run.
   */
  const tracing = layerTracing(observability, HUSH_VERSION)
  const telemetry = Layer.merge(layerLogging(observability), tracing)
  /** `/metrics` on METRICS_PORT with METRICS_TOKEN (needs the core); nothing otherwise. */
  const metricsPort = Option.isSome(observability.metricsPort) && Option.isSome(observability.metricsToken)
    ? layerMetricsPort({ port: observability.metricsPort.value, token: observability.metricsToken.value })
    : Layer.empty
  return { config, core, api, worker, server, telemetry, tracing, metricsPort }
}

/** The configuration and the deployment's secrets, as every entry point reads them. */
export const loadDeployment = Effect.gen(function*() {
  const config = yield* loadConfig
  // DATA_DIR owner-only before anything is written into it (docs/security.md)
  yield* secureDataDir(config.dataDir)
  const keys = yield* loadOrCreateKeys(config.dataDir)
  return { config, keys }
})
