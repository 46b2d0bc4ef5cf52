/**
 * How the edge adds its own headers (X-Request-Id, the rate limits, Allow) to an answer: the
 * one piece of the edge a server may do better. Free of Node imports: the edge reads it on any
 * server. By default the platform's `HttpServerResponse.setHeaders`; this folder's server
 * (./server.ts) provides a write onto Node's response, which merges them into its one head
 * write: `setHeaders` makes the platform copy the answer's headers twice, through objects V8
 * cannot copy fast, ~15 µs a request (measured: 2.5 % of a poll) for five headers.
 */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context } from "effect"

export type AddAnswerHeaders = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse,
  headers: Readonly<Record<string, string>>
) => HttpServerResponse.HttpServerResponse

/** The answer's own headers win a clash, as on Node's response: none of the edge's names is an answer's. */
const onResponse: AddAnswerHeaders = (_request, response, headers) => {
  const own = response.headers
  let merged: Record<string, string> | undefined
  for (const name in headers) {
    if (own[name] === undefined) (merged ??= {})[name] = headers[name]!
  }
  return merged === undefined ? response : HttpServerResponse.setHeaders(response, merged)
}

export class AnswerHeaders extends Context.Reference<AnswerHeaders>()("hush/node-http/AnswerHeaders", {
  defaultValue: (): AddAnswerHeaders => onResponse
}) {}
