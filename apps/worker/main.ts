/**
 * `npm run worker`: a worker process alone (job loop + lifecycle sweeper), for deployments
 * that run workers apart from the API. It needs a shared store: DATABASE_URL (PostgreSQL),
 * and S3 for the bytes when it runs on another machine. SIGTERM/SIGINT stop it gracefully.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { loadConfig } from "../runtime/config.js"
import { requireFfmpeg } from "../runtime/preflight.js"
import { configuredRunners, coreLayer, denoiseProviderLayer, storageLayers } from "../runtime/layers.js"
import { loadOrCreateKeys, secureDataDir } from "../runtime/secrets.js"
import { WorkerLive } from "./background.js"

const program = Effect.gen(function*() {
  const config = yield* loadConfig
  if (config.store !== "postgres") {
    console.error("A separate worker needs a shared database: set DATABASE_URL (PostgreSQL). On the embedded default, `npm start` already runs the worker in the API process.")
    return yield* Effect.sync(() => process.exit(2))
  }
  yield* requireFfmpeg("Hush worker")
  yield* secureDataDir(config.dataDir)
  const keys = yield* loadOrCreateKeys(config.dataDir)
  const core = coreLayer(config, keys, { runners: configuredRunners(config) })
  const worker = WorkerLive({
    concurrency: config.workerConcurrency,
    housekeeping: storageLayers(config, keys).housekeeping
  }).pipe(
    Layer.provide(denoiseProviderLayer(config)),
    Layer.provide(core)
  )
  return yield* Layer.launch(worker)
})

NodeRuntime.runMain(program)
