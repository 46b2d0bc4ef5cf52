/**
 * The `node:http` server given to the HTTP server layer (adapters/node-http/server.ts). That
 * layer, like the platform's, listens before it attaches its request handler, and detaches the
 * handler before it closes the server: a request that arrives in either gap has no listener
 * and would never be answered (and a server still holding it open would never finish closing).
 * Here a request before the handler waits for it; one after the handler is gone is refused
 * (503, `Connection: close`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { randomId } from "../../../adapters/webcrypto/ids.js"
import { ServiceUnavailable, toProblem } from "../../../core/errors.js"
import { PROBLEM_CONTENT_TYPE } from "./edge/problem.js"

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

/** Requests held before the handler attaches; more are refused like late ones. */
const MAX_WAITING = 1_000

export const createGatedServer = (refuse: (response: ServerResponse) => void): Server => {
  const server = createServer()
  let waiting: Array<[IncomingMessage, ServerResponse]> | null = []
  const gate: RequestListener = (request, response) => {
    if (waiting !== null && waiting.length < MAX_WAITING) waiting.push([request, response])
    else refuse(response)
  }
  server.on("request", gate)
  server.on("newListener", (event: string | symbol, listener: RequestListener) => {
    if (event !== "request" || listener === gate) return
    server.off("request", gate)
    const early = waiting ?? []
    waiting = null
    // after this event the listener is attached; hand it what came before
    setImmediate(() => {
      for (const [request, response] of early) listener(request, response)
    })
  })
  server.on("removeListener", (event: string | symbol, listener: RequestListener) => {
    if (event === "request" && listener !== gate && server.listenerCount("request") === 0) server.on("request", gate)
  })
  return server
}

/** The refusal: `503 service_unavailable` as the edge would write it, and the connection closed. */
export const refuseUnavailable = (errorsBaseUrl: string) => (response: ServerResponse) => {
  const requestId = randomId("req")
  const error = new ServiceUnavailable({ detail: "the server is starting or shutting down; retry shortly", retryAfterSeconds: 1 })
  response.writeHead(error.status, {
    "content-type": PROBLEM_CONTENT_TYPE,
    "retry-after": String(error.retryAfterSeconds),
    "x-request-id": requestId,
    connection: "close"
  })
  response.end(JSON.stringify(toProblem(error, { errorsBaseUrl, requestId })))
}
