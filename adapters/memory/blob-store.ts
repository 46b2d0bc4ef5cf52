/**
 * An in-memory BlobStore: objects are arrays of Uint8Array chunks in a Map. Its URLs
 * (`memory://…`) are signed and expire like the local store's, but no server answers them: a
 * test plays the client through `MemoryBlobBackdoor` — `request` as an HTTP request to one of
 * the URLs (what the blob-store contract suite sends), or, skipping signature and expiry,
 * `putUpload` for a PUT upload and `putPart` for a multipart part. Like the local store, it
 * refuses bytes for an upload whose key was moved or deleted.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { Chunk, Clock, Context, Effect, Layer, Option, Stream } from "effect"
import { BlobError, BlobStore, type UploadTarget } from "../../core/ports/blob-store.js"
import { contentDisposition, parseRange } from "../../core/rules/storage.js"

interface StoredObject {
  readonly chunks: ReadonlyArray<Uint8Array>
  readonly sizeBytes: number
  readonly contentType: string
  readonly modifiedAt: number
}

interface PendingUpload {
  readonly key: string
  readonly contentType: string
  readonly sizeBytes: number
  readonly partCount: number
  readonly partSize: number
  readonly sizeIsMaximum: boolean
  readonly parts: Map<number, { readonly etag: string; readonly bytes: Uint8Array }>
}

/** A request to one of the store's URLs, as `fetch` would send it. */
export interface MemoryRequest {
  readonly method?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: Uint8Array | undefined
}

/** The answer to a `MemoryRequest`, as `fetch` would give it. */
export interface MemoryResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: Uint8Array
}

/** What a client does with an upload target, done directly on the store. */
export class MemoryBlobBackdoor extends Context.Tag("hush/adapters/MemoryBlobBackdoor")<MemoryBlobBackdoor, {
  /**
   * As an HTTP request to a URL the store signed: answers what the local store's server would
   * (403 for a bad signature, an expired URL or a closed upload; 4xx for a wrong size; 206 and
   * 416 for ranges).
   */
  readonly request: (url: string, init?: MemoryRequest) => Effect.Effect<MemoryResponse>
  /** Stores an object directly (as the service's own writes do), whatever uploads are open. */
  readonly putObject: (key: string, bytes: Uint8Array, contentType?: string) => Effect.Effect<void>
  /** As a PUT to a PUT upload's URL, its signature and expiry taken as good: refused once the upload's key was moved or deleted, or with another size. */
  readonly putUpload: (target: UploadTarget, bytes: Uint8Array) => Effect.Effect<void, BlobError>
  /** As a PUT to a part URL (exactly the part's share of the size), its signature and expiry taken as good; answers its ETag (quoted MD5 hex, as S3 does). */
  readonly putPart: (uploadId: string, partNumber: number, bytes: Uint8Array) => Effect.Effect<string, BlobError>
  /** Keys of the stored objects. */
  readonly keys: () => Effect.Effect<ReadonlyArray<string>>
}>() {}

const fail = (message: string) => Effect.fail(new BlobError({ message }))

const bareEtag = (etag: string) => etag.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1").toLowerCase()

const md5 = (bytes: Uint8Array) => createHash("md5").update(bytes).digest("hex")

const sizeOf = (chunks: ReadonlyArray<Uint8Array>) => chunks.reduce((n, c) => n + c.byteLength, 0)

const concat = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(sizeOf(chunks))
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}

/** Bytes refused, and the HTTP status a server would refuse them with. */
interface Refusal {
  readonly status: 400 | 403 | 404
  readonly message: string
}

const refusedAsError = (refusal: Refusal) => new BlobError({ message: refusal.message })

const answer = (status: number, headers: Record<string, string> = {}, body: Uint8Array = new Uint8Array(0)): MemoryResponse => ({
  status,
  headers: new Headers(headers),
  body
})

const refusedAnswer = (refusal: Refusal) =>
  answer(refusal.status, { "content-type": "text/plain" }, new TextEncoder().encode(refusal.message))

/** The URL's signature: an HMAC of everything in it but the signature itself. */
const SIGNATURE_PARAM = "signature"

export const makeMemoryBlobStore = () => {
  const objects = new Map<string, StoredObject>()
  const uploads = new Map<string, PendingUpload>()
  /** Open PUT uploads, by their `upload` parameter. */
  const puts = new Map<string, { readonly key: string; readonly sizeBytes: number; readonly contentType: string }>()
  let nextUpload = 0
  const secret = randomBytes(32)

  const signatureOf = (url: URL) => {
    const unsigned = new URL(url.toString())
    unsigned.searchParams.delete(SIGNATURE_PARAM)
    return createHmac("sha256", secret).update(unsigned.toString()).digest("hex")
  }

  /** `memory://<kind>/<path>?<params>&signature=…` */
  const signedUrl = (kind: "put" | "part" | "get", path: string, params: Record<string, string>) => {
    const url = new URL(`memory://${kind}/${path}`)
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
    url.searchParams.set(SIGNATURE_PARAM, signatureOf(url))
    return url.toString()
  }

  const hasValidSignature = (url: URL) => {
    const given = Buffer.from(url.searchParams.get(SIGNATURE_PARAM) ?? "", "hex")
    const expected = Buffer.from(signatureOf(url), "hex")
    return given.byteLength === expected.byteLength && timingSafeEqual(given, expected)
  }

  const closeUploadsOf = (key: string) => {
    for (const [id, put] of puts) if (put.key === key) puts.delete(id)
  }

  const partLength = (upload: PendingUpload, partNumber: number) =>
    Math.min(upload.partSize, upload.sizeBytes - (partNumber - 1) * upload.partSize)

  /** The bytes of PUT upload `putId`, stored unless refused. */
  const acceptPut = (putId: string, bytes: Uint8Array, contentType: string | undefined, now: number): Refusal | undefined => {
    const put = puts.get(putId)
    if (put === undefined) return { status: 403, message: "this upload no longer accepts bytes (its key was moved or deleted)" }
    if (contentType !== undefined && contentType !== put.contentType) {
      return { status: 403, message: `the upload was signed for Content-Type ${put.contentType}, not ${contentType}` }
    }
    if (bytes.byteLength !== put.sizeBytes) return { status: 400, message: `the body must be exactly ${put.sizeBytes} bytes` }
    objects.set(put.key, { chunks: [bytes.slice()], sizeBytes: bytes.byteLength, contentType: put.contentType, modifiedAt: now })
    return undefined
  }

  /** Part `partNumber` of multipart upload `uploadId`: its quoted ETag, or why it was refused. */
  const acceptPart = (uploadId: string, partNumber: number, bytes: Uint8Array): Refusal | { readonly etag: string } => {
    const upload = uploads.get(uploadId)
    if (upload === undefined) return { status: 404, message: `no such upload ${uploadId}` }
    if (!Number.isSafeInteger(partNumber) || partNumber < 1 || partNumber > upload.partCount) {
      return { status: 400, message: `invalid part number ${partNumber}` }
    }
    const length = partLength(upload, partNumber)
    if (upload.sizeIsMaximum ? bytes.byteLength > length : bytes.byteLength !== length) {
      return {
        status: 400,
        message: `part ${partNumber} must be ${upload.sizeIsMaximum ? "at most" : "exactly"} ${length} bytes, not ${bytes.byteLength}`
      }
    }
    const etag = md5(bytes)
    upload.parts.set(partNumber, { etag, bytes: bytes.slice() })
    return { etag: `"${etag}"` }
  }

  const getObject = (key: string, params: URLSearchParams, range: string | undefined): MemoryResponse => {
    const object = objects.get(key)
    if (object === undefined) return refusedAnswer({ status: 404, message: "the object does not exist (any more)" })
    const size = object.sizeBytes
    const headers = {
      "accept-ranges": "bytes",
      "content-disposition": contentDisposition(params.get("filename") ?? "download"),
      "content-type": params.get("content_type") ?? object.contentType
    }
    const parsed = parseRange(range, size)
    switch (parsed._tag) {
      case "Unsatisfiable":
        return answer(416, { ...headers, "content-range": `bytes */${size}` })
      case "Full":
        return answer(200, { ...headers, "content-length": String(size) }, concat(object.chunks))
      case "Partial": {
        const body = concat(object.chunks).slice(parsed.start, parsed.end + 1)
        return answer(206, {
          ...headers,
          "content-length": String(body.byteLength),
          "content-range": `bytes ${parsed.start}-${parsed.end}/${size}`
        }, body)
      }
    }
  }

  const store: BlobStore["Type"] = {
    createUpload: (request) =>
      Effect.suspend((): Effect.Effect<UploadTarget, BlobError> => {
        if (!Number.isSafeInteger(request.sizeBytes) || request.sizeBytes < 0) {
          return fail(`invalid sizeBytes ${request.sizeBytes}`)
        }
        const expires = String(Math.floor(request.expiresAt))
        if (request.partSize === undefined) {
          const putId = String(++nextUpload)
          const target: UploadTarget = {
            _tag: "Put",
            url: signedUrl("put", encodeURIComponent(request.key), {
              expires, upload: putId, size: String(request.sizeBytes), content_type: request.contentType
            }),
            headers: { "Content-Type": request.contentType, "Content-Length": String(request.sizeBytes) }
          }
          puts.set(putId, { key: request.key, sizeBytes: request.sizeBytes, contentType: request.contentType })
          return Effect.succeed(target)
        }
        const partSize = request.partSize
        if (!Number.isSafeInteger(partSize) || partSize <= 0) return fail(`invalid partSize ${partSize}`)
        const partCount = Math.max(1, Math.ceil(request.sizeBytes / partSize))
        const uploadId = `upload-${++nextUpload}`
        uploads.set(uploadId, {
          key: request.key, contentType: request.contentType, sizeBytes: request.sizeBytes, partCount, partSize,
          sizeIsMaximum: request.sizeIsMaximum === true, parts: new Map()
        })
        const target: UploadTarget = {
          _tag: "Multipart",
          uploadId,
          parts: Array.from({ length: partCount }, (_, i) => ({
            partNumber: i + 1,
            url: signedUrl("part", `${uploadId}/${i + 1}`, { expires })
          }))
        }
        return Effect.succeed(target)
      }),
    completeMultipart: (request) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const upload = uploads.get(request.uploadId)
        if (upload === undefined || upload.key !== request.key) {
          return fail(`no such upload ${request.uploadId} of key ${JSON.stringify(request.key)}`)
        }
        if (request.parts.length === 0) return fail("a multipart upload needs at least one part")
        const listed = [...request.parts].sort((a, b) => a.partNumber - b.partNumber)
        const chunks: Array<Uint8Array> = []
        for (let i = 0; i < listed.length; i++) {
          const { partNumber, etag } = listed[i]!
          if (i > 0 && listed[i - 1]!.partNumber === partNumber) return fail(`part ${partNumber} listed twice`)
          const part = upload.parts.get(partNumber)
          if (part === undefined) return fail(`part ${partNumber} was not uploaded`)
          if (bareEtag(etag) !== part.etag) return fail(`part ${partNumber}: ETag ${JSON.stringify(etag)} does not match`)
          chunks.push(part.bytes)
        }
        objects.set(request.key, { chunks, sizeBytes: sizeOf(chunks), contentType: upload.contentType, modifiedAt: now })
        uploads.delete(request.uploadId)
        return Effect.void
      }),

    abortMultipart: (request) =>
      Effect.suspend(() => {
        const upload = uploads.get(request.uploadId)
        if (upload !== undefined && upload.key !== request.key) {
          return fail(`upload ${request.uploadId} is not an upload of key ${JSON.stringify(request.key)}`)
        }
        uploads.delete(request.uploadId)
        return Effect.void
      }),

    stat: (key) =>
      Effect.sync(() => Option.map(Option.fromNullable(objects.get(key)), (o) => ({ sizeBytes: o.sizeBytes }))),

    read: (key) =>
      Stream.suspend(() => {
        const object = objects.get(key)
        return object === undefined
          ? Stream.fail(new BlobError({ message: `no object ${JSON.stringify(key)}` }))
          : Stream.fromIterable(object.chunks)
      }),

    write: (key, body, options) =>
      Effect.flatMap(Stream.runCollect(body), (collected) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const chunks = Chunk.toReadonlyArray(collected).map((c) => c.slice())
          const sizeBytes = sizeOf(chunks)
          objects.set(key, { chunks, sizeBytes, contentType: options.contentType, modifiedAt: now })
          return { sizeBytes }
        })),

    signDownload: (request) =>
      Effect.sync(() =>
        signedUrl("get", encodeURIComponent(request.key), {
          expires: String(Math.floor(request.expiresAt)), filename: request.filename, content_type: request.contentType
        })),

    move: ({ from, to }) =>
      Effect.suspend(() => {
        const object = objects.get(from)
        if (object === undefined) return fail(`no object ${JSON.stringify(from)} to move`)
        closeUploadsOf(from)
        objects.set(to, object)
        objects.delete(from)
        return Effect.succeed({ sizeBytes: object.sizeBytes })
      }),

    list: (prefix) =>
      Stream.suspend(() =>
        Stream.fromIterable(
          [...objects].filter(([key]) => key.startsWith(prefix))
            .map(([key, object]) => ({ key, sizeBytes: object.sizeBytes, modifiedAt: object.modifiedAt }))
        )
      ),

    delete: (key) =>
      Effect.sync(() => {
        closeUploadsOf(key)
        objects.delete(key)
      })
  }

  const backdoor: MemoryBlobBackdoor["Type"] = {
    request: (url, init = {}) =>
      Effect.map(Clock.currentTimeMillis, (now): MemoryResponse => {
        const parsed = new URL(url)
        const method = (init.method ?? "GET").toUpperCase()
        const header = (name: string) =>
          Object.entries(init.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1]
        const kind = parsed.host
        if (kind !== "put" && kind !== "part" && kind !== "get") return refusedAnswer({ status: 404, message: `no ${kind} URLs here` })
        if (method !== (kind === "get" ? "GET" : "PUT")) return answer(405, { allow: kind === "get" ? "GET" : "PUT" })
        if (!hasValidSignature(parsed)) {
          return refusedAnswer({ status: 403, message: "the signature does not match this URL (it was altered)" })
        }
        if (Number(parsed.searchParams.get("expires")) <= now) return refusedAnswer({ status: 403, message: "the URL has expired" })
        const path = parsed.pathname.slice(1)
        const body = init.body ?? new Uint8Array(0)
        switch (kind) {
          case "put": {
            const refused = acceptPut(parsed.searchParams.get("upload") ?? "", body, header("content-type"), now)
            return refused === undefined ? answer(200) : refusedAnswer(refused)
          }
          case "part": {
            const [uploadId = "", partNumber = ""] = path.split("/")
            const accepted = acceptPart(uploadId, Number(partNumber), body)
            return "etag" in accepted ? answer(200, { etag: accepted.etag }) : refusedAnswer(accepted)
          }
          case "get":
            return getObject(decodeURIComponent(path), parsed.searchParams, header("range"))
        }
      }),
    putObject: (key, bytes, contentType = "application/octet-stream") =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        void objects.set(key, { chunks: [bytes.slice()], sizeBytes: bytes.byteLength, contentType, modifiedAt: now })),
    putUpload: (target, bytes) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (target._tag !== "Put") return fail("not a PUT upload")
        const refused = acceptPut(new URL(target.url).searchParams.get("upload") ?? "", bytes, undefined, now)
        return refused === undefined ? Effect.void : Effect.fail(refusedAsError(refused))
      }),
    putPart: (uploadId, partNumber, bytes) =>
      Effect.suspend(() => {
        const accepted = acceptPart(uploadId, partNumber, bytes)
        return "etag" in accepted ? Effect.succeed(accepted.etag) : Effect.fail(refusedAsError(accepted))
      }),
    keys: () => Effect.sync(() => [...objects.keys()])
  }

  return { store, backdoor }
}

/** A fresh, empty store (one per build of the layer) and its backdoor. */
export const layerMemoryBlobStore: Layer.Layer<BlobStore | MemoryBlobBackdoor> = Layer.effectContext(
  Effect.sync(() => {
    const { store, backdoor } = makeMemoryBlobStore()
    return Context.make(BlobStore, store).pipe(Context.add(MemoryBlobBackdoor, backdoor))
  })
)
