/**
 * The request body rules of the edge. Before routing or authentication: at most 1 MiB,
 * counted while the body streams in (a declared larger `Content-Length` is refused unread; a
 * chunked one stops being read at 1 MiB and the rest is discarded), `413 request_too_large`.
 * After routing (EdgeRules): JSON only (415), well-formed and not hostile (at most 32 levels
 * deep and 10,000 values: edge/json-shape.ts) (400), an object where the endpoint
 * takes one (400). Field-level validation is HttpApi's, answered 422.
 */
import { FileSystem, HttpIncomingMessage, HttpServerError, HttpServerRequest, UrlParams } from "@effect/platform"
import { Effect, Either, Inspectable, Layer, Option, Stream } from "effect"
import { excerpt, InvalidRequest, RequestTooLarge, UnsupportedMediaType } from "../../../../core/errors.js"
import type { EndpointFacts } from "./facts.js"
import { jsonShapeProblem } from "./json-shape.js"

export const MAX_BODY_BYTES = 1024 * 1024
const MAX_BODY_SIZE = FileSystem.Size(MAX_BODY_BYTES)

/**
 * The cap as every request's `MaxBodySize`, provided once where the app is served: a body read
 * anywhere (the edge's, a page's form) stops at 1 MiB, and the edge's read needs no
 * `withMaxBodySize` of its own, a copy of the request's whole context each time. A server that
 * provides its own, larger one (the platform's `NodeHttpServer`: 10 MB) gets the edge's per read.
 */
export const layerBodyCap = Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(MAX_BODY_SIZE))

/**
 * A body read under the 1 MiB cap: as it is where every request already has it (layerBodyCap),
 * under `withMaxBodySize` on a server with a larger one of its own.
 */
export const underBodyCap = <A, E, R>(read: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(HttpIncomingMessage.MaxBodySize, (ambient) =>
    Option.isSome(ambient) && ambient.value <= MAX_BODY_SIZE ? read : HttpIncomingMessage.withMaxBodySize(read, Option.some(MAX_BODY_BYTES)))

export const tooLarge = () => new RequestTooLarge({ detail: `the request body is over ${MAX_BODY_BYTES} bytes (1 MiB)` })

const hasBody = (request: HttpServerRequest.HttpServerRequest) => {
  const length = request.headers["content-length"]
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined
}

/**
 * Whether the request's body is read here, before routing: a body sent with anything but GET
 * or HEAD, or a declared size over the cap (refused unread). Otherwise the request goes on as
 * it is, and nothing is done for it.
 */
export const needsBuffering = (request: HttpServerRequest.HttpServerRequest) =>
  declaresTooLarge(request) || (request.method !== "GET" && request.method !== "HEAD" && hasBody(request))

/** A `Content-Length` over the cap: refused before a byte is read. */
const declaresTooLarge = (request: HttpServerRequest.HttpServerRequest) => {
  const declared = request.headers["content-length"]
  return declared !== undefined && Number(declared) > MAX_BODY_BYTES
}

const utf8 = new TextDecoder()

/**
 * The body's JSON, parsed once for everything that reads it (EdgeRules' shape check, HttpApi's
 * decoding, a handler): a hostile one (too deep, too wide: edge/json-shape.ts) is refused
 * before the parse, so no later step walks it.
 */
const parseJson = (text: string): Either.Either<unknown, InvalidRequest> => {
  const hostile = jsonShapeProblem(text)
  if (hostile !== undefined) return Either.left(new InvalidRequest({ status: 400, detail: hostile }))
  try {
    return Either.right(text === "" ? null : JSON.parse(text))
  } catch (e) {
    return Either.left(new InvalidRequest({ status: 400, detail: `the request body is not valid JSON: ${excerpt((e as Error).message)}` }))
  }
}

/**
 * A read over `MaxBodySize`: the platform's servers fail it with this cause (NodeStream's
 * `maxBytes exceeded`, and adapters/node-http's the same), any other failure is a body that
 * could not be read.
 */
export const exceedsMaxBodySize = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

/**
 * The body, read under the cap through the platform's `MaxBodySize`. Hush's server
 * (adapters/node-http) then drops the rest of it and the 413 reaches the client; the platform's
 * `NodeHttpServer` destroys the socket (docs/architecture.md, "Node-server-specific").
 */
const readUnderCap = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Uint8Array, RequestTooLarge | InvalidRequest> =>
  underBodyCap(request.arrayBuffer).pipe(
    Effect.mapBoth({
      onFailure: (error) => exceedsMaxBodySize(error)
        ? tooLarge()
        : new InvalidRequest({ status: 400, detail: `the request body could not be read: ${excerpt(String((error.cause as Error | undefined)?.message ?? error.message))}` }),
      onSuccess: (buffer) => new Uint8Array(buffer)
    })
  )

/**
 * A request whose body was read (bufferBody): `text`, `json`, `urlParamsBody`, `arrayBuffer` and
 * `stream` answer from memory, the rest is the original's. A class, not `Object.create(request,
 * …)`: that made every request a prototype, ~4 µs in V8 before any read of it.
 */
class BufferedRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  // parsed once, by whoever asks first (EdgeRules' shape check, then HttpApi's decoding); an
  // Either is itself an Effect, so no fiber is run to cache it
  private parsed: Either.Either<unknown, InvalidRequest> | undefined

  constructor(
    private readonly original: HttpServerRequest.HttpServerRequest,
    private readonly bytes: Uint8Array,
    private readonly body: string
  ) {
    super()
  }

  get source() {
    return this.original.source
  }
  get url() {
    return this.original.url
  }
  get originalUrl() {
    return this.original.originalUrl
  }
  get method() {
    return this.original.method
  }
  get cookies() {
    return this.original.cookies
  }
  get headers() {
    return this.original.headers
  }
  get remoteAddress() {
    return this.original.remoteAddress
  }
  get multipart() {
    return this.original.multipart
  }
  get multipartStream() {
    return this.original.multipartStream
  }
  get upgrade() {
    return this.original.upgrade
  }
  modify(options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]): HttpServerRequest.HttpServerRequest {
    return new BufferedRequest(this.original.modify(options), this.bytes, this.body)
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.succeed(this.body)
  }
  /** Fails with the edge's `InvalidRequest` (400), which `bodyJson` and the edge's answer read as such. */
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.suspend(() => (this.parsed ??= parseJson(this.body))) as Effect.Effect<unknown, never>
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.try({
      try: () => UrlParams.fromInput(new URLSearchParams(this.body)),
      catch: (cause) => new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
    })
  }
  /** A copy only for whoever asks (nothing on the API's own paths does). */
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.sync(() => this.bytes.buffer.slice(this.bytes.byteOffset, this.bytes.byteOffset + this.bytes.byteLength) as ArrayBuffer)
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return Stream.succeed(this.bytes)
  }
  toJSON(): unknown {
    return this.original.toJSON()
  }
}

/**
 * The request with its body read under the cap (when `needsBuffering`): later reads (`text`,
 * `json`, HttpApi's decoding) answer from memory.
 */
export const bufferBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<HttpServerRequest.HttpServerRequest, RequestTooLarge | InvalidRequest> =>
  declaresTooLarge(request)
    ? Effect.fail(tooLarge())
    : Effect.map(readUnderCap(request), (bytes) => new BufferedRequest(request, bytes, utf8.decode(bytes)))

const isJsonType = (contentType: string | undefined) =>
  contentType === undefined || /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType.trim())

/** Whether a method's requests to our endpoints carry a body to check (GET and DELETE never do). */
export const methodHasBody = (method: string) => method !== "GET" && method !== "DELETE"

/** The (buffered) body's JSON, parsed once (`parseJson`): a hostile or malformed one is `400 invalid_request`. */
export const bodyJson = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<unknown, InvalidRequest> =>
  (request.json as Effect.Effect<unknown, InvalidRequest | HttpServerError.RequestError>).pipe(
    Effect.catchTag("RequestError", (e) => Effect.fail(new InvalidRequest({ status: 400, detail: `the request body is not valid JSON: ${excerpt(e.message)}` })))
  )

/** Checks the (buffered) body's shape for the endpoint; returns its text ("" when there is none). */
export const checkBody = (request: HttpServerRequest.HttpServerRequest, facts: EndpointFacts) =>
  Effect.gen(function*() {
    if (!methodHasBody(request.method)) return ""
    const text = yield* Effect.orDie(request.text)
    if (text.trim() === "") {
      if (facts.hasPayload) {
        return yield* new InvalidRequest({ status: 400, detail: "a JSON object body is required (Content-Type: application/json)" })
      }
      return text
    }
    if (!isJsonType(request.headers["content-type"])) {
      return yield* new UnsupportedMediaType({
        detail: `request bodies must be JSON (Content-Type: application/json), not '${excerpt(request.headers["content-type"] ?? "")}'`
      })
    }
    const parsed = yield* bodyJson(request)
    const acceptsNull = !facts.hasPayload
    if (!(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) && !(acceptsNull && parsed === null)) {
      return yield* new InvalidRequest({ status: 400, detail: "the request body must be a JSON object" })
    }
    return text
  })
