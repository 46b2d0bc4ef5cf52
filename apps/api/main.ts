/**
 * `npm start`: the API, the storage handler, validation and the built-in worker on embedded defaults.
 * PORT (8787), DATA_DIR (./.hush), PUBLIC_BASE_URL; GPU_PROVIDER_URL/_TOKEN/_NAME add the GPU
 * provider's models (apps/runtime/config.ts). SIGTERM/SIGINT shut down gracefully.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { requireFfmpeg } from "../runtime/preflight.js"
import { compose, loadDeployment } from "../runtime/root.js"
import { createGatedServer, refuseUnavailable } from "./gated-server.js"
import { errorsBaseUrlOf } from "./server.js"

const program = Effect.gen(function*() {
  const { config, keys } = yield* loadDeployment
  yield* requireFfmpeg("Hush")
  const root = compose(config, keys)
  const httpServer = Layer.effectDiscard(HttpServer.logAddress).pipe(Layer.provideMerge(NodeHttpServer.layer(
    () => createGatedServer(refuseUnavailable(errorsBaseUrlOf(config.publicBaseUrl))),
    { port: config.port }
  )))
  // the built-in worker runs here unless HUSH_WORKER=off (e.g. when workers run apart, on PostgreSQL)
  const server = root.server(httpServer).pipe(Layer.provide(root.core))
  yield* Effect.logInfo(`Hush ${config.env}: data in ${config.dataDir}, store ${config.store}, links at ${config.publicBaseUrl}`)
  return yield* Layer.launch(server)
})

NodeRuntime.runMain(program)
