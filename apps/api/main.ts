/**
 * `npm start`: the API, the storage handler, validation and the built-in worker on embedded defaults.
 * PORT (8787), DATA_DIR (./.hush), PUBLIC_BASE_URL; GPU_PROVIDER_URL/_TOKEN/_NAME add the GPU
 * provider's models (apps/runtime/config.ts). SIGTERM/SIGINT shut down gracefully.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { WorkerLive } from "../worker/background.js"
import { AdminSocketLive } from "../runtime/admin-socket.js"
import { loadConfig } from "../runtime/config.js"
import { requireFfmpeg } from "../runtime/preflight.js"
import { configuredRunners, coreLayer, denoiseProviderLayer, storageLayers } from "../runtime/layers.js"
import { loadOrCreateKeys, secureDataDir } from "../runtime/secrets.js"
import { createGatedServer, refuseUnavailable } from "./gated-server.js"
import { apiLayer, errorsBaseUrlOf } from "./server.js"

const program = Effect.gen(function*() {
  const config = yield* loadConfig
  yield* requireFfmpeg("Hush")
  yield* secureDataDir(config.dataDir)
  const keys = yield* loadOrCreateKeys(config.dataDir)
  const core = coreLayer(config, keys, { runners: configuredRunners(config) })
  const storage = storageLayers(config, keys)
  const http = apiLayer({ publicBaseUrl: config.publicBaseUrl, env: config.env, gpuConfigured: false }, storage.routes).pipe(
    HttpServer.withLogAddress,
    Layer.provide(NodeHttpServer.layer(
      () => createGatedServer(refuseUnavailable(errorsBaseUrlOf(config.publicBaseUrl))),
      { port: config.port }
    ))
  )
  // the built-in worker runs here unless HUSH_WORKER=off (e.g. when workers run apart, on PostgreSQL)
  const worker = config.workerEnabled === false ? Layer.empty : WorkerLive({ housekeeping: storage.housekeeping }).pipe(Layer.provide(denoiseProviderLayer(config)))
  const server = Layer.mergeAll(http, AdminSocketLive(config.dataDir), worker).pipe(Layer.provide(core))
  yield* Effect.logInfo(`Hush ${config.env}: data in ${config.dataDir}, store ${config.store}, links at ${config.publicBaseUrl}`)
  return yield* Layer.launch(server)
})

NodeRuntime.runMain(program)
