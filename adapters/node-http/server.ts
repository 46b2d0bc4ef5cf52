/**
 * The platform's `HttpServer` on `node:http`, leaner per request than `NodeHttpServer.layer`
 * (docs/architecture.md, "A seventh pass"): each request's fiber starts with the
 * request already in its context, one copy of the serving context, where the platform's
 * server forks with the serving context and then provides the request (a second copy of it
 * and two fiber-ref copies); and an answer held in memory is handed to the socket without
 * waiting for Node's write callback, which only says the bytes left the process. Streams wait
 * for their `drain`s and end as the platform's do; an answer is interrupted when its client
 * goes away. The rest (error answers, pre-response handlers, the request span) is
 * `HttpApp.toHandled`, the platform's own. WebSocket upgrades are not served: a request asking
 * for one is answered as an ordinary request, as Node does with no `upgrade` listener.
 */
import {
  Cookies, HttpApp, type HttpMiddleware, HttpServer, HttpServerError, HttpServerRequest, type HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Chunk, Context, Effect, Layer, Runtime, Stream } from "effect"
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from "node:http"
import type { ListenOptions } from "node:net"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { AnswerHeaders, type AddAnswerHeaders } from "./answer-headers.js"
import { NodeServerRequest, nodeResponseOf } from "./server-request.js"

/** Onto Node's response, merged into its one head write (./answer-headers.ts); an answer already under way keeps what it sent. */
const setHeadersAhead: AddAnswerHeaders = (request, response, headers) => {
  const node = nodeResponseOf(request)
  if (!node.headersSent) for (const name in headers) node.setHeader(name, headers[name]!)
  return response
}

/** The answer's headers, with its cookies as `set-cookie` lines. */
const headersOf = (response: HttpServerResponse.HttpServerResponse): OutgoingHttpHeaders => {
  if (Cookies.isEmpty(response.cookies)) return response.headers
  const setCookie: Array<string> = Cookies.toSetCookieHeaders(response.cookies)
  const own = response.headers["set-cookie"]
  if (own !== undefined) setCookie.push(own)
  return { ...response.headers, "set-cookie": setCookie }
}

/** A body that failed while being sent: the status if nothing was sent yet, and the answer ended. */
const endOnFailure = (node: ServerResponse, response: HttpServerResponse.HttpServerResponse) => (failure: Cause.Cause<unknown>) =>
  Effect.flatMap(HttpServerError.causeResponse(failure), ([errorResponse, cause]) => {
    const headersSent = node.headersSent
    if (!headersSent) node.writeHead(errorResponse.status)
    if (!node.writableEnded) node.end()
    return Effect.failCause(headersSent ? Cause.sequential(failure, Cause.die(response)) : cause)
  })

const writeResponse = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<unknown, unknown> => {
  const node = nodeResponseOf(request)
  if (node.writableEnded) return Effect.void
  const headers = headersOf(response)
  const body = response.body
  if (request.method === "HEAD" || body._tag === "Empty") {
    node.writeHead(response.status, headers).end()
    return Effect.void
  }
  switch (body._tag) {
    case "Uint8Array": {
      node.writeHead(response.status, headers).end(body.body)
      return Effect.void
    }
    case "Raw": {
      node.writeHead(response.status, headers)
      const raw = body.body as { pipe?: unknown } | string | Uint8Array | null
      if (typeof raw === "object" && raw !== null && "pipe" in raw && typeof raw.pipe === "function") {
        return Effect.tryPromise({
          try: (signal) => pipeline(raw as unknown as Readable, node, { signal, end: true }),
          catch: (cause) => new HttpServerError.ResponseError({ request, response, reason: "Decode", cause })
        }).pipe(Effect.interruptible, Effect.tapErrorCause(endOnFailure(node, response)))
      }
      node.end(raw)
      return Effect.void
    }
    case "FormData": {
      const web = new Response(body.formData)
      node.writeHead(response.status, { ...headers, ...Object.fromEntries(web.headers) })
      return Effect.async<void, HttpServerError.ResponseError>((resume, signal) => {
        Readable.fromWeb(web.body! as import("node:stream/web").ReadableStream, { signal }).pipe(node)
          .on("error", (cause) => resume(Effect.fail(new HttpServerError.ResponseError({ request, response, reason: "Decode", cause }))))
          .once("finish", () => resume(Effect.void))
      }).pipe(Effect.interruptible, Effect.tapErrorCause(endOnFailure(node, response)))
    }
    case "Stream": {
      node.writeHead(response.status, headers)
      const drained = Effect.unsafeMakeLatch()
      node.on("drain", () => drained.unsafeOpen())
      return body.stream.pipe(
        Stream.orDie,
        Stream.runForEachChunk((chunk) => {
          // once a write says the buffer is full, the later ones say so too, until a drain
          let full = false
          for (const piece of Chunk.toReadonlyArray(chunk)) full = !node.write(piece)
          if (!full) return Effect.void
          // closed before Node can emit the drain: it comes on a later turn
          drained.unsafeClose()
          return drained.await
        }),
        Effect.interruptible,
        Effect.matchCauseEffect({ onSuccess: () => Effect.sync(() => node.end()), onFailure: endOnFailure(node, response) })
      )
    }
  }
}

const makeHandler = <E, R>(httpApp: HttpApp.Default<E, R>, middleware?: HttpMiddleware.HttpMiddleware) =>
  Effect.map(Effect.runtime<Exclude<R, HttpServerRequest.HttpServerRequest>>(), (runtime) => {
    const handled = HttpApp.toHandled(httpApp, writeResponse, middleware)
    const serving = runtime.context.unsafeMap
    return (source: IncomingMessage, nodeResponse: ServerResponse) => {
      const request = new NodeServerRequest(source, nodeResponse)
      const services = new Map(serving)
      services.set(HttpServerRequest.HttpServerRequest.key, request)
      const serve = Runtime.make({ context: Context.unsafeMake(services), runtimeFlags: runtime.runtimeFlags, fiberRefs: runtime.fiberRefs })
      const fiber = Runtime.runFork(serve)(handled as Effect.Effect<void>)
      nodeResponse.on("close", () => {
        if (!nodeResponse.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
      })
    }
  })

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

/** Requests held before the app is served; more are refused like late ones. */
const MAX_WAITING = 1_000

/** The refusal of a request that came while nothing serves: 503, retry in a second, the connection closed. */
export const refuseUnavailable: RequestListener = (_request, response) => {
  response.writeHead(503, { "retry-after": "1", connection: "close" }).end()
}

const make = (evaluate: () => Server, options: ListenOptions, refuse: RequestListener) =>
  Effect.gen(function*() {
    // The platform's contract listens first (the address is known before the app is built),
    // serves later, and stops serving before the server closes; Node never answers a request
    // that finds no listener. So the server's one listener is here from the start: it holds
    // what comes before the app is served and refuses what comes after it stopped.
    let handler: RequestListener | undefined
    let waiting: Array<[IncomingMessage, ServerResponse]> | undefined = []
    const dispatch: RequestListener = (request, response) => {
      if (handler !== undefined) handler(request, response)
      else if (waiting !== undefined && waiting.length < MAX_WAITING) waiting.push([request, response])
      else refuse(request, response)
    }
    const server = yield* Effect.acquireRelease(
      Effect.sync(() => evaluate().on("request", dispatch)),
      (server) => Effect.async<void>((resume) => {
        if (!server.listening) return resume(Effect.void)
        server.close((error) => resume(error === undefined ? Effect.void : Effect.die(error)))
      })
    )
    yield* Effect.async<void, HttpServerError.ServeError>((resume) => {
      const onError = (cause: Error) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
      server.on("error", onError)
      server.listen(options, () => {
        server.off("error", onError)
        resume(Effect.void)
      })
    })
    const address = server.address()!
    return HttpServer.make({
      address: typeof address === "string"
        ? { _tag: "UnixAddress", path: address }
        : { _tag: "TcpAddress", hostname: address.address === "::" ? "0.0.0.0" : address.address, port: address.port },
      serve: (httpApp, middleware) =>
        Effect.gen(function*() {
          const serving = yield* makeHandler(httpApp, middleware)
          yield* Effect.addFinalizer(() => Effect.sync(() => handler = undefined))
          handler = serving
          const early = waiting ?? []
          waiting = undefined
          for (const [request, response] of early) serving(request, response)
        })
    })
  })

/**
 * The server and what the platform needs beside it (file system, path, ETags), as
 * `NodeHttpServer.layer`, with its way of adding the edge's headers (./answer-headers.ts).
 * `refuse` answers a request that comes after serving stopped, or past 1,000 waiting before it
 * started (default `refuseUnavailable`).
 */
export const layer = (evaluate: () => Server, options: ListenOptions, refuse: RequestListener = refuseUnavailable) =>
  Layer.mergeAll(
    Layer.scoped(HttpServer.HttpServer, make(evaluate, options, refuse)),
    NodeHttpServer.layerContext,
    Layer.succeed(AnswerHeaders, setHeadersAhead)
  )
