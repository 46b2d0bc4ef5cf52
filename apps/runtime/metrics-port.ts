/**
 * METRICS_PORT: `/metrics` on a port of its own (the public port then answers 404), in the API
 * and in a worker process alike, so each process can be scraped. The same bearer token; any
 * other path or method is 404, a wrong token 401. A plain node:http server: nothing of the
 * HTTP API is loaded for it.
 */
import { Effect, Layer, type Redacted, Runtime } from "effect"
import { createServer } from "node:http"
import { bearerMatches } from "../api/server/operations/access.js"
import { PROMETHEUS_CONTENT_TYPE } from "../api/server/operations/prometheus.js"
import { makeScrape } from "../api/server/operations/scrape.js"

export const layerMetricsPort = (options: { readonly port: number; readonly host?: string; readonly token: Redacted.Redacted<string> }) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const scrape = yield* makeScrape
    const runtime = yield* Effect.runtime<never>()
    const server = createServer((request, response) => {
      const answer = (status: number, body: string, contentType = "text/plain; charset=utf-8") => {
        response.writeHead(status, { "content-type": contentType, "cache-control": "no-store" })
        response.end(body)
      }
      if (request.method !== "GET" || request.url !== "/metrics") return answer(404, "not found\n")
      if (!bearerMatches(request.headers.authorization, options.token)) return answer(401, "unauthorized\n")
      Runtime.runPromise(runtime)(scrape).then(
        (text) => answer(200, text, PROMETHEUS_CONTENT_TYPE),
        () => answer(500, "scrape failed\n")
      )
    })
    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(options.port, options.host, () => resume(Effect.void))
      }),
      () => Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
    )
    yield* Effect.logInfo(`metrics on port ${options.port}`)
  }).pipe(Effect.orDie))
