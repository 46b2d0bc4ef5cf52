/**
 * How `npm start`'s server refuses a request that comes while nothing serves (after shutdown
 * began, or past the requests held before the app is served; adapters/node-http/server.ts):
 * `503 service_unavailable` as the edge would write it, and the connection closed.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { randomId } from "../../../adapters/webcrypto/ids.js"
import { ServiceUnavailable, toProblem } from "../../../core/errors.js"
import { PROBLEM_CONTENT_TYPE } from "./edge/problem.js"

export const refuseWithProblem = (errorsBaseUrl: string) => (_request: IncomingMessage, response: ServerResponse) => {
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
