import { createHmac, timingSafeEqual } from "node:crypto"
import { STORAGE_PATH_PREFIX } from "./config.js"

/**
 * Signed storage URLs.
 *
 *   {publicBaseUrl}/storage/{key, each `/`-separated segment percent-encoded}?x-hush-op=…&…&x-hush-signature=…
 *
 * Query parameters (all signed except the signature itself):
 * - `x-hush-op`: `put` (whole object), `part` (one part of a multipart upload) or `get` (download)
 * - `x-hush-expires`: expiry, epoch milliseconds; the URL is refused once now > expires
 * - `put`:  `x-hush-content-type`, `x-hush-content-length` (the exact Content-Type and size)
 * - `part`: `x-hush-upload-id`, `x-hush-part-number`, then `x-hush-content-length` (the part's exact
 *   size) or, for an upload whose size is only bounded, `x-hush-max-length` (its largest size)
 * - `get`:  `x-hush-filename`, `x-hush-content-type` (sent back in Content-Disposition / Content-Type)
 * - `x-hush-signature`: base64url HMAC-SHA256 over the canonical string below
 *
 * Canonical string: the JSON array
 *   ["hush-storage-v1", METHOD, key, op, expires, …op fields in the order above]
 * where METHOD is `PUT` for `put`/`part` and `GET` for `get` (HEAD is accepted with a GET URL).
 * JSON keeps the fields unambiguous whatever characters they contain.
 */
export const PARAM = {
  op: "x-hush-op",
  expires: "x-hush-expires",
  contentType: "x-hush-content-type",
  contentLength: "x-hush-content-length",
  maxLength: "x-hush-max-length",
  uploadId: "x-hush-upload-id",
  partNumber: "x-hush-part-number",
  filename: "x-hush-filename",
  signature: "x-hush-signature"
} as const

export type SignedRequest =
  | {
    readonly op: "put"
    readonly key: string
    readonly expiresAt: number
    readonly contentType: string
    readonly contentLength: number
  }
  | {
    readonly op: "part"
    readonly key: string
    readonly expiresAt: number
    readonly uploadId: string
    readonly partNumber: number
    /** The part's length: exactly this many bytes, or (`bound`) at most this many. */
    readonly length: { readonly exact: number } | { readonly max: number }
  }
  | {
    readonly op: "get"
    readonly key: string
    readonly expiresAt: number
    readonly filename: string
    readonly contentType: string
  }

export const methodOf = (request: SignedRequest): "PUT" | "GET" => request.op === "get" ? "GET" : "PUT"

const fieldsOf = (request: SignedRequest): ReadonlyArray<readonly [string, string]> => {
  switch (request.op) {
    case "put":
      return [[PARAM.contentType, request.contentType], [PARAM.contentLength, String(request.contentLength)]]
    case "part":
      return [
        [PARAM.uploadId, request.uploadId],
        [PARAM.partNumber, String(request.partNumber)],
        "exact" in request.length
          ? [PARAM.contentLength, String(request.length.exact)]
          : [PARAM.maxLength, String(request.length.max)]
      ]
    case "get":
      return [[PARAM.filename, request.filename], [PARAM.contentType, request.contentType]]
  }
}

const canonical = (request: SignedRequest): string =>
  JSON.stringify([
    "hush-storage-v1",
    methodOf(request),
    request.key,
    request.op,
    String(request.expiresAt),
    ...fieldsOf(request).map(([, value]) => value)
  ])

const hmac = (secret: string, request: SignedRequest): Buffer =>
  createHmac("sha256", secret).update(canonical(request), "utf8").digest()

/** Each `/`-separated segment percent-encoded, the separators kept. */
export const encodeKeyPath = (key: string): string => key.split("/").map(encodeURIComponent).join("/")

export const signUrl = (
  config: { readonly publicBaseUrl: string; readonly signingSecret: string },
  request: SignedRequest
): string => {
  const params = new URLSearchParams()
  params.set(PARAM.op, request.op)
  params.set(PARAM.expires, String(request.expiresAt))
  for (const [name, value] of fieldsOf(request)) params.set(name, value)
  params.set(PARAM.signature, hmac(config.signingSecret, request).toString("base64url"))
  return `${config.publicBaseUrl}${STORAGE_PATH_PREFIX}/${encodeKeyPath(request.key)}?${params.toString()}`
}

const parseNonNegativeInt = (value: string | null): number | undefined => {
  if (value === null || !/^\d{1,16}$/.test(value)) return undefined
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : undefined
}

/** Reads the signed fields of a URL's query (signature not yet checked). */
export const parseSignedRequest = (
  key: string,
  params: URLSearchParams
): { readonly _tag: "Ok"; readonly request: SignedRequest; readonly signature: string } | {
  readonly _tag: "Invalid"
  readonly message: string
} => {
  const invalid = (message: string) => ({ _tag: "Invalid" as const, message })
  const signature = params.get(PARAM.signature)
  if (signature === null) return invalid(`the URL is not signed (no ${PARAM.signature})`)
  const expiresAt = parseNonNegativeInt(params.get(PARAM.expires))
  if (expiresAt === undefined) return invalid(`the URL has no valid ${PARAM.expires}`)
  const op = params.get(PARAM.op)
  const required = (name: string): string | undefined => params.get(name) ?? undefined
  switch (op) {
    case "put": {
      const contentType = required(PARAM.contentType)
      const contentLength = parseNonNegativeInt(params.get(PARAM.contentLength))
      if (contentType === undefined || contentLength === undefined) return invalid("the URL lacks signed fields")
      return { _tag: "Ok", signature, request: { op, key, expiresAt, contentType, contentLength } }
    }
    case "part": {
      const uploadId = required(PARAM.uploadId)
      const partNumber = parseNonNegativeInt(params.get(PARAM.partNumber))
      const exact = parseNonNegativeInt(params.get(PARAM.contentLength))
      const max = parseNonNegativeInt(params.get(PARAM.maxLength))
      if (uploadId === undefined || partNumber === undefined || (exact === undefined) === (max === undefined)) {
        return invalid("the URL lacks signed fields")
      }
      const length = exact !== undefined ? { exact } : { max: max! }
      return { _tag: "Ok", signature, request: { op, key, expiresAt, uploadId, partNumber, length } }
    }
    case "get": {
      const filename = required(PARAM.filename)
      const contentType = required(PARAM.contentType)
      if (filename === undefined || contentType === undefined) return invalid("the URL lacks signed fields")
      return { _tag: "Ok", signature, request: { op, key, expiresAt, filename, contentType } }
    }
    default:
      return invalid(`the URL has no valid ${PARAM.op}`)
  }
}

/** Constant-time check of a base64url signature (compared as text, so no two spellings pass). */
export const verifySignature = (secret: string, request: SignedRequest, signature: string): boolean => {
  const given = Buffer.from(signature, "utf8")
  const expected = Buffer.from(hmac(secret, request).toString("base64url"), "utf8")
  return given.length === expected.length && timingSafeEqual(given, expected)
}
