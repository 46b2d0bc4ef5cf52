/**
 * The request body rules of the edge, before HttpApi sees the body: at most 1 MiB (413),
 * JSON only (415), well-formed (400), an object where the endpoint takes one (400).
 * Field-level validation is HttpApi's, answered 422.
 */
import { HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { InvalidRequest, RequestTooLarge, UnsupportedMediaType } from "../../../core/errors.js"
import type { RouteInfo } from "./routes.js"

export const MAX_BODY_BYTES = 1024 * 1024

/** How much of an undeclared-length body is read to answer it `413` (the platform's own default). */
const READ_LIMIT_BYTES = 10 * MAX_BODY_BYTES

const tooLarge = () => new RequestTooLarge({ detail: `the request body is over ${MAX_BODY_BYTES} bytes (1 MiB)` })

const isJsonType = (contentType: string | undefined) =>
  contentType === undefined || /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType.trim())

/** Reads and checks the body; returns its text ("" when there is none). */
export const readBody = (request: HttpServerRequest.HttpServerRequest, route: RouteInfo) =>
  Effect.gen(function*() {
    const declared = request.headers["content-length"]
    if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return yield* tooLarge()
    if (request.method === "GET" || request.method === "DELETE") return ""
    // A body without Content-Length (chunked) is only known to be too large once read. The
    // platform destroys the socket when its read limit is hit, so no answer could be sent:
    // the limit here is higher, and the 1 MiB rule is applied to what was read (below).
    // Only a body over READ_LIMIT_BYTES still ends with the connection reset.
    const text = yield* request.text.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(READ_LIMIT_BYTES)),
      Effect.mapError(() => tooLarge())
    )
    if (new TextEncoder().encode(text).length > MAX_BODY_BYTES) return yield* tooLarge()
    if (text.trim() === "") {
      if (route.hasPayload) {
        return yield* new InvalidRequest({ status: 400, detail: "a JSON object body is required (Content-Type: application/json)" })
      }
      return text
    }
    if (!isJsonType(request.headers["content-type"])) {
      return yield* new UnsupportedMediaType({
        detail: `request bodies must be JSON (Content-Type: application/json), not '${request.headers["content-type"]}'`
      })
    }
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new InvalidRequest({ status: 400, detail: `the request body is not valid JSON: ${(e as Error).message}` })
    })
    const acceptsNull = !route.hasPayload
    if (!(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) && !(acceptsNull && parsed === null)) {
      return yield* new InvalidRequest({ status: 400, detail: "the request body must be a JSON object" })
    }
    return text
  })
