/**
 * `npm start`: the API, the storage handler, validation and the built-in worker on embedded defaults.
 * PORT (8787), DATA_DIR (./.hush), PUBLIC_BASE_URL; GPU_PROVIDER_URL/_TOKEN/_NAME add the GPU
 * provider's models (apps/runtime/config.ts). SIGTERM/SIGINT shut down gracefully.
 */
import { HttpServer } from "@effect/platform"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import * as NodeHttp from "../../../adapters/node-http/server.js"
import { layerRequireFfmpeg, stopOnConfigError } from "../../runtime/preflight.js"
import { compose, loadDeployment } from "../../runtime/root.js"
import { serviceAddresses, startMessage } from "./addresses.js"
import { refuseWithProblem } from "./refusal.js"
import { layerApi, errorsBaseUrlOf } from "./server.js"

const program = Effect.gen(function*() {
  const { config, keys } = yield* stopOnConfigError("Hush")(loadDeployment)
  const root = compose(config, keys)
  // where to go next, on the address links use (not 0.0.0.0): the dashboard, /docs, the API
  const announce = Effect.flatMap(HttpServer.HttpServer, ({ address }) => {
    const port = address._tag === "TcpAddress" ? address.port : config.port
    return Effect.logInfo(startMessage(serviceAddresses(config.publicBaseUrl, port), port))
  })
  const httpServer = Layer.effectDiscard(announce).pipe(Layer.provideMerge(NodeHttp.layer(
    createServer,
    { port: config.port },
    refuseWithProblem(errorsBaseUrlOf(config.publicBaseUrl))
  )))
  // the built-in worker runs here unless HUSH_WORKER=off (e.g. when workers run apart, on PostgreSQL)
  // the ffmpeg check runs while the core builds; serving starts after both
  const server = Layer.merge(root.server(layerApi, httpServer), root.metricsPort).pipe(
    Layer.provide(Layer.merge(root.core, layerRequireFfmpeg("Hush", config.ffmpegSandbox))),
    Layer.provide(root.telemetry)
  )
  yield* Effect.logInfo(`Hush ${config.env}: data in ${config.dataDir}, store ${config.store}, links at ${config.publicBaseUrl}`)
  return yield* Layer.launch(server)
})

NodeRuntime.runMain(program)
