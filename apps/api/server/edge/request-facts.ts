/**
 * What the edge learns of a request while it runs (the route, the caller, headers for the
 * answer), kept in a `FiberRef` of the request's fiber rather than provided as a service.
 * Free of Node imports: the edge runs on any server of the platform.
 */
import { Effect, type Fiber, FiberRef } from "effect"

/** The route and who called, filled in by the edge's middleware once known (edge/rules.ts), read when the answer is logged. */
export interface RequestFacts {
  /** The template the router matched; absent when no endpoint's middleware ran (then the edge's RouteFinder finds it). */
  route?: string
  accountId?: string
  keyId?: string
  /** Headers for the answer, whatever it turns out to be; the edge writes them once (addAnswerHeaders). */
  readonly answerHeaders: Record<string, string>
}

/**
 * The request's facts, set once by the edge when the request arrives (`startRequest`, edge/index.ts):
 * one step and one copy of the fiber's refs, where providing a service per request copies the
 * whole context and a scoped `locally` takes two more steps. Fibers the request forks inherit it.
 */
export const CurrentRequestFacts = FiberRef.unsafeMake<RequestFacts | undefined>(undefined)

/** The request's facts; the edge is around every route (edge/index.ts), so a request without them is a defect. */
const withFacts = <A>(f: (facts: RequestFacts) => A): Effect.Effect<A> =>
  Effect.withFiberRuntime((fiber) => {
    const facts = fiber.getFiberRef(CurrentRequestFacts)
    return facts === undefined ? Effect.dieMessage("no edge facts for this request") : Effect.succeed(f(facts))
  })

/**
 * Adds `headers` to the request's answer, whatever it turns out to be (a problem or a replay
 * too), through the edge's one header write: a pre-response handler per request would cost a
 * fiber-ref copy, a step and a second copy of the answer's headers.
 */
export const addAnswerHeaders = (headers: Record<string, string>): Effect.Effect<void> =>
  withFacts((facts) => {
    Object.assign(facts.answerHeaders, headers)
  })

/**
 * A header the edge will add to the request's answer (its `x-request-id`, say). They are
 * added when the edge answers, not into the answer's own headers, so code that sees the answer
 * before it is sent (a pre-response handler) asks here.
 */
export const answerHeaderOf = (name: string): Effect.Effect<string | undefined> =>
  Effect.withFiberRuntime((fiber) => Effect.succeed(fiber.getFiberRef(CurrentRequestFacts)?.answerHeaders[name]))

/** Records the matched route and the caller, if any, for the request's metrics and log line (nothing outside the edge). */
export const noteRequest = (
  fiber: Fiber.RuntimeFiber<any, any>,
  route: string,
  caller: { readonly accountId: string; readonly keyId?: string | undefined } | undefined
) => {
  const facts = fiber.getFiberRef(CurrentRequestFacts)
  if (facts === undefined) return
  facts.route = route
  if (caller === undefined) return
  facts.accountId = caller.accountId
  if (caller.keyId !== undefined) facts.keyId = caller.keyId
}
