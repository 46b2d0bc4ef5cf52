/**
 * The HTTP side of the local blob store: serves the signed URLs made by `./store.ts` under
 * `/storage/…`, outside `/v1`, so API handlers never touch file bytes.
 *
 * Mounting beside an HttpApi (the routes carry their `/storage` prefix, so they are concatenated,
 * not `mount`ed, into the API's router):
 *
 * ```ts
 * const StorageLive = layerLocalStorage({ rootDir, publicBaseUrl, signingSecret }) // BlobStore + LocalStorageConfig
 * const ApiLive = HttpApiBuilder.api(HushApi).pipe(Layer.provide(groupLayers))   // handlers may use BlobStore
 * const ServerLive = HttpApiBuilder.serve(middleware).pipe(
 *   Layer.provide(localStorageRoutes),     // adds /storage/* to HttpApiBuilder.Router
 *   Layer.provide(ApiLive),
 *   Layer.provide(StorageLive),            // config for the routes, BlobStore for the handlers
 *   Layer.provide(NodeHttpServer.layer(createServer, { port }))
 * )
 * ```
 *
 * (test/adapters/local-storage/store.test.ts, "mounted beside an HttpApi", runs exactly this shape.)
 *
 * Or, without HttpApi: `HttpRouter.concat(appRouter, localStorageRouter)` and provide
 * `LocalStorageConfig`. The router's requests then pass through the API's global middleware
 * (request ids, logging) but no endpoint security: a storage URL is its own credential.
 */
import * as NodePath from "node:path"
import * as Fs from "node:fs/promises"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Clock, Effect, Layer, Option } from "effect"
import type { BlobError } from "../../core/ports/blob-store.js"
import {
  keyProblem,
  LocalStorageConfig,
  objectPath,
  partFileName,
  partFilePrefix,
  type ResolvedLocalStorageConfig,
  STORAGE_PATH_PREFIX,
  uploadDir
} from "./config.js"
import { fileStream, removeFile, type SizeLimitExceeded, type SizeMismatch, statFile, writeAtomically } from "./files.js"
import { parseSignedRequest, type SignedRequest, verifySignature } from "./signing.js"
import { readManifest, readOpenUpload } from "./store.js"

// ---------------------------------------------------------------------------------------------
// Small pure helpers, shared with the memory store (core/rules/storage.ts; exported for tests)

import { contentDisposition, parseRange } from "../../core/rules/storage.js"

export { contentDisposition, parseRange }

// ---------------------------------------------------------------------------------------------
// Responses

const TITLES: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  416: "Range Not Satisfiable",
  500: "Internal Server Error"
}

const CODES: Record<number, string> = {
  400: "invalid_request",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  416: "range_not_satisfiable",
  500: "internal_error"
}

/** An RFC 9457 problem body, like the API's, with `detail` saying exactly what was wrong. */
const problem = (
  config: ResolvedLocalStorageConfig,
  status: number,
  detail: string,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    {
      type: `${config.publicBaseUrl}/errors/${CODES[status]}`,
      title: TITLES[status],
      status,
      code: CODES[status],
      detail
    },
    { status, contentType: "application/problem+json", headers: headers ?? {} }
  )

const quoted = (md5Hex: string) => `"${md5Hex}"`

// ---------------------------------------------------------------------------------------------
// The handler

const ALLOWED = "GET, HEAD, PUT"

type Parsed =
  | { readonly _tag: "Ok"; readonly key: string; readonly params: URLSearchParams }
  | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }

const parseTarget = (config: ResolvedLocalStorageConfig, url: string): Parsed => {
  const refuse = (status: number, detail: string): Parsed => ({ _tag: "Refused", response: problem(config, status, detail) })
  const queryAt = url.indexOf("?")
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  const params = new URLSearchParams(queryAt === -1 ? "" : url.slice(queryAt + 1))
  const prefix = `${STORAGE_PATH_PREFIX}/`
  if (!path.startsWith(prefix)) return refuse(404, "no storage object at this path")
  let key: string
  try {
    key = path.slice(prefix.length).split("/").map(decodeURIComponent).join("/")
  } catch {
    return refuse(400, "the object key in the path is not valid percent-encoding")
  }
  const problemWithKey = keyProblem(key)
  if (problemWithKey !== undefined) return refuse(400, `invalid object key: ${problemWithKey}`)
  return { _tag: "Ok", key, params }
}

type WriteFailure = BlobError | SizeLimitExceeded | SizeMismatch | { readonly _tag: "RequestError" }

const describeWriteFailure = (
  config: ResolvedLocalStorageConfig,
  error: WriteFailure,
  declared: number
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  switch (error._tag) {
    case "SizeLimitExceeded":
      return Effect.succeed(problem(config, 400, `the body is larger than the ${error.limit} bytes allowed`))
    case "SizeMismatch":
      return Effect.succeed(
        problem(config, 400, `the body had ${error.actual} bytes but Content-Length said ${declared}`)
      )
    case "RequestError":
      return Effect.succeed(problem(config, 400, "the request body could not be read to its end"))
    case "BlobError":
      return Effect.logError("local storage: write failed", error.message).pipe(
        Effect.as(problem(config, 500, "the object could not be stored"))
      )
  }
}

const contentLengthOf = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const header = request.headers["content-length"]
  if (header === undefined || !/^\d{1,16}$/.test(header.trim())) return undefined
  const n = Number(header.trim())
  return Number.isSafeInteger(n) ? n : undefined
}

const putObject = (
  config: ResolvedLocalStorageConfig,
  request: HttpServerRequest.HttpServerRequest,
  signed: Extract<SignedRequest, { op: "put" }>
) =>
  Effect.gen(function*() {
    const contentType = request.headers["content-type"]
    if (contentType !== signed.contentType) {
      return problem(
        config,
        400,
        `Content-Type must be exactly ${JSON.stringify(signed.contentType)} (it is part of the signature)`
      )
    }
    const length = contentLengthOf(request)
    if (length === undefined) return problem(config, 400, "a Content-Length header is required")
    if (length !== signed.contentLength) {
      return problem(config, 400, `Content-Length must be ${signed.contentLength} (it is part of the signature)`)
    }
    // decisions.md, Files: upload URLs work only while the upload is open (the file `uploading`)
    if (Option.isNone(yield* readOpenUpload(config, signed.key))) return uploadClosed(config)
    const path = objectPath(config, signed.key)
    const written = yield* writeAtomically(config.tmpDir, path, request.stream, { exactBytes: length }).pipe(Effect.either)
    if (written._tag === "Left") return yield* describeWriteFailure(config, written.left as WriteFailure, length)
    // closed while the body streamed in: these bytes must not stay where complete read them
    if (Option.isNone(yield* readOpenUpload(config, signed.key))) {
      yield* removeFile(path)
      return uploadClosed(config)
    }
    return HttpServerResponse.empty({ status: 200, headers: { etag: quoted(written.right.md5Hex) } })
  })

const uploadClosed = (config: ResolvedLocalStorageConfig) =>
  problem(config, 403, "this upload no longer accepts bytes: its file was completed or deleted")

const putPart = (
  config: ResolvedLocalStorageConfig,
  request: HttpServerRequest.HttpServerRequest,
  signed: Extract<SignedRequest, { op: "part" }>
) =>
  Effect.gen(function*() {
    const manifest = yield* readManifest(config, signed.uploadId)
    if (Option.isNone(manifest) || manifest.value.key !== signed.key) return uploadClosed(config)
    if (signed.partNumber < 1 || signed.partNumber > manifest.value.partCount) {
      return problem(config, 400, `part number ${signed.partNumber} is out of range`)
    }
    const length = contentLengthOf(request)
    if (length === undefined) return problem(config, 400, "a Content-Length header is required")
    if ("exact" in signed.length && length !== signed.length.exact) {
      return problem(config, 400, `Content-Length must be ${signed.length.exact} (it is part of the signature)`)
    }
    if ("max" in signed.length && length > signed.length.max) {
      return problem(config, 400, `a part may have at most ${signed.length.max} bytes; Content-Length is ${length}`)
    }
    const dir = uploadDir(config, signed.uploadId)
    const stored = yield* writeAtomically(
      config.tmpDir,
      (written) => NodePath.join(dir, partFileName(signed.partNumber, written.md5Hex)),
      request.stream,
      { exactBytes: length, createDirs: false }
    ).pipe(Effect.either)
    if (stored._tag === "Left") {
      const error = stored.left as WriteFailure
      if (error._tag === "BlobError" && Option.isNone(yield* readManifest(config, signed.uploadId))) return uploadClosed(config)
      return yield* describeWriteFailure(config, error, length)
    }
    // An earlier upload of the same part with other bytes is superseded.
    const keep = partFileName(signed.partNumber, stored.right.md5Hex)
    yield* Effect.promise(async () => {
      const names = await Fs.readdir(dir).catch(() => [] as Array<string>)
      await Promise.all(
        names
          .filter((name) => name.startsWith(partFilePrefix(signed.partNumber)) && name !== keep)
          .map((name) => Fs.unlink(NodePath.join(dir, name)).catch(() => undefined))
      )
    })
    return HttpServerResponse.empty({ status: 200, headers: { etag: quoted(stored.right.md5Hex) } })
  })

const getObject = (
  config: ResolvedLocalStorageConfig,
  request: HttpServerRequest.HttpServerRequest,
  signed: Extract<SignedRequest, { op: "get" }>
) =>
  Effect.gen(function*() {
    const path = objectPath(config, signed.key)
    const stat = yield* statFile(path)
    if (Option.isNone(stat)) return problem(config, 404, "the object does not exist (any more)")
    const size = stat.value.sizeBytes
    const range = parseRange(request.headers["range"], size)
    const headers: Record<string, string> = {
      "accept-ranges": "bytes",
      "content-disposition": contentDisposition(signed.filename),
      "cache-control": "private, no-cache"
    }
    switch (range._tag) {
      case "Unsatisfiable":
        return problem(config, 416, `the range is outside the object's ${size} bytes`, {
          ...headers,
          "content-range": `bytes */${size}`
        })
      case "Full":
        return HttpServerResponse.stream(fileStream(path, { expectedSize: size }), {
          status: 200,
          contentType: signed.contentType,
          contentLength: size,
          headers: { ...headers, "content-length": String(size) }
        })
      case "Partial": {
        const length = range.end - range.start + 1
        return HttpServerResponse.stream(
          fileStream(path, { start: range.start, end: range.end, expectedSize: size }),
          {
            status: 206,
            contentType: signed.contentType,
            contentLength: length,
            headers: {
              ...headers,
              "content-length": String(length),
              "content-range": `bytes ${range.start}-${range.end}/${size}`
            }
          }
        )
      }
    }
  })

/** Answers one request to `/storage/…`. Never fails: every outcome is a response. */
export const handleStorageRequest: Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  LocalStorageConfig | HttpServerRequest.HttpServerRequest
> = Effect.gen(function*() {
  const config = yield* LocalStorageConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  return yield* Effect.gen(function*() {
    const method = request.method
    if (method !== "GET" && method !== "HEAD" && method !== "PUT") {
      return problem(config, 405, `${method} is not allowed on a storage URL`, { allow: ALLOWED })
    }
    const target = parseTarget(config, request.url)
    if (target._tag === "Refused") return target.response
    const parsed = parseSignedRequest(target.key, target.params)
    if (parsed._tag === "Invalid") return problem(config, 403, parsed.message)
    const signed = parsed.request
    const isRead = method === "GET" || method === "HEAD"
    if (isRead !== (signed.op === "get")) {
      return problem(config, 403, `this URL was signed for ${signed.op === "get" ? "GET" : "PUT"}, not ${method}`)
    }
    if (!verifySignature(config.signingSecret, signed, parsed.signature)) {
      return problem(config, 403, "the signature does not match this URL (it was altered or signed with another key)")
    }
    const now = yield* Clock.currentTimeMillis
    if (now > signed.expiresAt) {
      return problem(config, 403, `the URL expired at ${new Date(signed.expiresAt).toISOString()}`)
    }
    switch (signed.op) {
      case "put":
        return yield* putObject(config, request, signed)
      case "part":
        return yield* putPart(config, request, signed)
      case "get":
        return yield* getObject(config, request, signed)
    }
  }).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.logError("local storage: request failed", cause).pipe(
          Effect.as(problem(config, 500, "the storage request failed"))
        )
    )
  )
})

/**
 * Routes `/storage/*` (all methods; GET/HEAD/PUT served, others 405). Needs LocalStorageConfig.
 * Concatenate it into another router (`HttpRouter.concat`), do not `mount` it: the paths keep
 * their `/storage` prefix.
 */
export const localStorageRouter: HttpRouter.HttpRouter<never, LocalStorageConfig> = HttpRouter.empty.pipe(
  HttpRouter.all(`${STORAGE_PATH_PREFIX}/*`, handleStorageRequest)
)

/**
 * Adds `localStorageRouter` to the HttpApi's router (`HttpApiBuilder.Router`); provide it to
 * `HttpApiBuilder.serve()` together with the API layer. Needs LocalStorageConfig.
 */
export const localStorageRoutes: Layer.Layer<never, never, LocalStorageConfig> = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(LocalStorageConfig, (config) =>
    router.concat(localStorageRouter.pipe(HttpRouter.provideService(LocalStorageConfig, config))))
)
