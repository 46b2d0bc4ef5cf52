/**
 * `npm run worker`: a worker process alone (job loop + lifecycle sweeper), for deployments
 * that run workers apart from the API. It needs a shared store: DATABASE_URL (PostgreSQL),
 * and S3 for the bytes when it runs on another machine. SIGTERM/SIGINT stop it gracefully.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { layerRequireFfmpeg, stopOnConfigError } from "../runtime/preflight.js"
import { compose, loadDeployment } from "../runtime/root.js"

const program = Effect.gen(function*() {
  const { config, keys } = yield* stopOnConfigError("Hush worker")(loadDeployment)
  if (config.store !== "postgres") {
    console.error("A separate worker needs a shared database: set DATABASE_URL (PostgreSQL). On the embedded default, `npm start` already runs the worker in the API process.")
    return yield* Effect.sync(() => process.exit(2))
  }
  const root = compose(config, keys, { authenticates: false })
  // the ffmpeg check runs while the core builds (database, migrations); claiming starts after both
  return yield* Layer.launch(Layer.merge(root.worker(), root.metricsPort).pipe(
    Layer.provide(Layer.merge(root.core, layerRequireFfmpeg("Hush worker", config.ffmpegSandbox))),
    Layer.provide(root.telemetry)
  ))
})

NodeRuntime.runMain(program)
