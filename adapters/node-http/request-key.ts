/**
 * Free of Node imports (unlike ./server-request.ts): the edge's request facts, which the
 * dashboard's bundle reaches, key by it too.
 */
import type { HttpServerRequest } from "@effect/platform"

/**
 * What stays the same under every copy of a request (the router's, the body buffering's): its
 * Node message, or the request itself where it has none (one made in a test from a web
 * `Request`). A key for what is remembered per request, in a WeakMap.
 */
export const requestKeyOf = (request: HttpServerRequest.HttpServerRequest): object =>
  typeof request.source === "object" && request.source !== null ? request.source : request
