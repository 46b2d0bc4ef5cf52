/**
 * A request of `node:http` as the platform's `HttpServerRequest`, for this folder's server
 * (./server.ts). The platform-node server's own class is internal to it; this one has the same
 * behaviour (the Node message's headers as they are, cookies parsed once, bodies read under the
 * context's `MaxBodySize`, multipart through NodeMultipart), without WebSocket upgrades, which
 * Hush has no use for. One difference: a body over `MaxBodySize` (read as text, JSON, a form or
 * bytes) stops being kept and the rest is read and dropped, so the connection stays usable for
 * the answer (a 413); the platform's server destroys the socket instead.
 */
import {
  Cookies, type Headers, HttpIncomingMessage, type HttpMethod, HttpServerError, HttpServerRequest, UrlParams
} from "@effect/platform"
import { NodeMultipart, NodeStream } from "@effect/platform-node"
import { Effect, Inspectable, Option, type Stream } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * What a body read over `MaxBodySize` fails with: the platform's own wording
 * (@effect/platform-node-shared's NodeStream), so the edge tells one cap's refusal from any
 * other failed read the same way on either server (apps/api/server/edge/body.ts).
 */
const overMaxBodySize = () => new Error("maxBytes exceeded")

const utf8 = new TextDecoder()

/** Reads at most `maxBytes` of a Node message; past that, stops keeping it and lets Node discard the rest. */
const readCapped = <E>(source: IncomingMessage, maxBytes: number | undefined, onError: (cause: unknown) => E) =>
  Effect.async<Uint8Array, E>((resume) => {
    if (source.readableEnded) return resume(Effect.succeed(new Uint8Array(0)))
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onFailure)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (maxBytes !== undefined && size > maxBytes) {
        stop()
        // keep the connection usable: what is left is read and dropped, never kept
        source.resume()
        resume(Effect.fail(onError(overMaxBodySize())))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)))
    }
    const onFailure = (error: Error) => {
      stop()
      resume(Effect.fail(onError(error)))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onFailure)
    return Effect.sync(stop)
  })

export class NodeServerRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId

  constructor(
    readonly source: IncomingMessage,
    readonly response: ServerResponse,
    readonly url: string = source.url ?? "/",
    private readonly headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: string
  ) {
    super()
  }

  /** A body that could not be read (made only then: no closure per request). */
  private get onError(): (cause: unknown) => HttpServerError.RequestError {
    return (cause) => new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
  }

  get originalUrl(): string {
    return this.source.url ?? "/"
  }
  get method(): HttpMethod.HttpMethod {
    return this.source.method!.toUpperCase() as HttpMethod.HttpMethod
  }
  get headers(): Headers.Headers {
    // Node's own object (lower-case names, one value or an array): no copy per request
    return this.headersOverride ?? (this.source.headers as Headers.Headers)
  }
  get remoteAddress(): Option.Option<string> {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }

  private cookiesParsed: Record<string, string> | undefined
  get cookies(): Record<string, string> {
    return this.cookiesParsed ??= Cookies.parseHeader(this.headers.cookie ?? "")
  }

  private textRead: Effect.Effect<string, HttpServerError.RequestError> | undefined
  /** Read once, whoever asks first; the body is a stream that can be read only once. */
  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return this.textRead ??= Effect.runSync(Effect.cached(Effect.map(this.bytes, (bytes) => utf8.decode(bytes))))
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.tryMap(this.text, { try: (text) => text === "" ? null : JSON.parse(text) as unknown, catch: this.onError })
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text) => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: this.onError }))
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.map(this.bytes, (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
  }
  /** The body under the context's `MaxBodySize`, for `text` and `arrayBuffer` alike. */
  private get bytes(): Effect.Effect<Uint8Array, HttpServerError.RequestError> {
    return Effect.flatMap(HttpIncomingMessage.MaxBodySize, (maxBodySize) =>
      readCapped(this.source, Option.match(maxBodySize, { onNone: () => undefined, onSome: Number }), this.onError))
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return NodeStream.fromReadable(() => this.source, this.onError)
  }

  private multipartRead: HttpServerRequest.HttpServerRequest["multipart"] | undefined
  get multipart(): HttpServerRequest.HttpServerRequest["multipart"] {
    return this.multipartRead ??= Effect.runSync(Effect.cached(NodeMultipart.persisted(this.source, this.source.headers)))
  }
  get multipartStream(): HttpServerRequest.HttpServerRequest["multipartStream"] {
    return NodeMultipart.stream(this.source, this.source.headers)
  }
  get upgrade(): HttpServerRequest.HttpServerRequest["upgrade"] {
    return Effect.fail(new HttpServerError.RequestError({ request: this, reason: "Decode", description: "not an upgradeable ServerRequest" }))
  }

  modify(options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }): NodeServerRequest {
    return new NodeServerRequest(
      this.source, this.response, options.url ?? this.url, options.headers ?? this.headersOverride, options.remoteAddress ?? this.remoteAddressOverride
    )
  }

  override toString(): string {
    return `ServerRequest(${this.method} ${this.url})`
  }
  toJSON(): unknown {
    return HttpIncomingMessage.inspect(this, { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl })
  }
}

/** The Node response a request of this folder's server is answered on. */
export const nodeResponseOf = (request: HttpServerRequest.HttpServerRequest): ServerResponse => (request as NodeServerRequest).response
