/**
 * What the edge learns of a request while it runs (the route, the caller, headers for the
 * answer), kept by the request's Node message rather than provided as a service. Free of Node
 * imports: the dashboard's bundle reaches the rate limits (edge/rate-limit.ts) through the
 * session middleware, which the HttpApi definition names.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { requestKeyOf } from "../../../../adapters/node-http/request-key.js"

/** The route and who called, filled in by the edge's middleware once known (edge/rules.ts), read when the answer is logged. */
export interface RequestFacts {
  /** The template the router matched; absent when no endpoint's middleware ran (then routeOfRequest finds it). */
  route?: string
  accountId?: string
  keyId?: string
  /** Headers for the answer, whatever it turns out to be; the edge writes them once (addAnswerHeaders). */
  readonly answerHeaders: Record<string, string>
}

/**
 * Each request's facts, by its Node message (`source`: the same under every copy of the
 * request that the router and the body buffering make): cheaper than providing a service per
 * request, which copies the whole context.
 */
const factsByMessage = new WeakMap<object, RequestFacts>()

/** The edge starts the request's facts when it arrives, with the headers it will add to the answer. */
export const beginRequestFacts = (request: HttpServerRequest.HttpServerRequest, answerHeaders: Record<string, string>): RequestFacts => {
  const facts: RequestFacts = { answerHeaders }
  factsByMessage.set(requestKeyOf(request), facts)
  return facts
}

/**
 * Adds `headers` to the request's answer, whatever it turns out to be (a problem or a replay
 * too), through the edge's one header write: a pre-response handler per request would cost a
 * fiber-ref copy, a step and a second copy of the answer's headers. The edge is around every
 * route (edge/index.ts), so a request without facts is a defect, not a header to lose.
 */
export const addAnswerHeaders = (request: HttpServerRequest.HttpServerRequest, headers: Record<string, string>): Effect.Effect<void> => {
  const facts = factsByMessage.get(requestKeyOf(request))
  if (facts === undefined) return Effect.dieMessage(`no edge facts for ${request.method} ${request.url}`)
  Object.assign(facts.answerHeaders, headers)
  return Effect.void
}

/**
 * A header the edge will add to the request's answer (its `x-request-id`, say). They are
 * written onto Node's response, not into the answer's own headers, so code that sees the
 * answer before it is sent (a pre-response handler) asks here.
 */
export const answerHeaderOf = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined =>
  factsByMessage.get(requestKeyOf(request))?.answerHeaders[name]

/** Records the matched route and the caller, if any, for the request's metrics and log line (nothing outside the edge). */
export const noteRequest = (
  request: HttpServerRequest.HttpServerRequest,
  route: string,
  caller: { readonly accountId: string; readonly keyId?: string | undefined } | undefined
) => {
  const facts = factsByMessage.get(requestKeyOf(request))
  if (facts === undefined) return
  facts.route = route
  if (caller === undefined) return
  facts.accountId = caller.accountId
  if (caller.keyId !== undefined) facts.keyId = caller.keyId
}
