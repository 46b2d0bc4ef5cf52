/**
 * An in-memory BlobStore: objects are arrays of Uint8Array chunks in a Map. Its upload URLs
 * (`memory://…`) cannot be fetched; a test plays the client through `MemoryBlobBackdoor`
 * (`putUpload` for a PUT upload, `putPart` for a multipart part, which answers the ETag). Like
 * the local store, it refuses bytes for an upload whose key was moved or deleted.
 */
import { createHash } from "node:crypto"
import { Chunk, Clock, Context, Effect, Layer, Option, Stream } from "effect"
import { BlobError, BlobStore, type UploadTarget } from "../../core/ports/blob-store.js"

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

/** What a client does with an upload target, done directly on the store. */
export class MemoryBlobBackdoor extends Context.Tag("hush/adapters/MemoryBlobBackdoor")<MemoryBlobBackdoor, {
  /** Stores an object directly (as the service's own writes do), whatever uploads are open. */
  readonly putObject: (key: string, bytes: Uint8Array, contentType?: string) => Effect.Effect<void>
  /** As a PUT to a PUT upload's URL: refused once the upload's key was moved or deleted, or with another size. */
  readonly putUpload: (target: UploadTarget, bytes: Uint8Array) => Effect.Effect<void, BlobError>
  /** As a PUT to a part URL (exactly the part's share of the size); answers its ETag (quoted MD5 hex, as S3 does). */
  readonly putPart: (uploadId: string, partNumber: number, bytes: Uint8Array) => Effect.Effect<string, BlobError>
  /** Keys of the stored objects. */
  readonly keys: () => Effect.Effect<ReadonlyArray<string>>
}>() {}

const fail = (message: string) => Effect.fail(new BlobError({ message }))

const bareEtag = (etag: string) => etag.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1").toLowerCase()

const md5 = (bytes: Uint8Array) => createHash("md5").update(bytes).digest("hex")

const sizeOf = (chunks: ReadonlyArray<Uint8Array>) => chunks.reduce((n, c) => n + c.byteLength, 0)

const stringParam = (value: string) => encodeURIComponent(value)

export const makeMemoryBlobStore = () => {
  const objects = new Map<string, StoredObject>()
  const uploads = new Map<string, PendingUpload>()
  /** Open PUT uploads: their URL → key and size. */
  const puts = new Map<string, { readonly key: string; readonly sizeBytes: number; readonly contentType: string }>()
  let nextUpload = 0

  const closeUploadsOf = (key: string) => {
    for (const [url, put] of puts) if (put.key === key) puts.delete(url)
  }

  const partLength = (upload: PendingUpload, partNumber: number) =>
    Math.min(upload.partSize, upload.sizeBytes - (partNumber - 1) * upload.partSize)

  const store: BlobStore["Type"] = {
    createUpload: (request) =>
      Effect.suspend((): Effect.Effect<UploadTarget, BlobError> => {
        if (!Number.isSafeInteger(request.sizeBytes) || request.sizeBytes < 0) {
          return fail(`invalid sizeBytes ${request.sizeBytes}`)
        }
        const expires = `expires=${Math.floor(request.expiresAt)}`
        if (request.partSize === undefined) {
          const target: UploadTarget = {
            _tag: "Put",
            url: `memory://put/${stringParam(request.key)}?${expires}&upload=${++nextUpload}`,
            headers: { "Content-Type": request.contentType, "Content-Length": String(request.sizeBytes) }
          }
          puts.set(target.url, { key: request.key, sizeBytes: request.sizeBytes, contentType: request.contentType })
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
            url: `memory://part/${uploadId}/${i + 1}?${expires}`
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
      Effect.succeed(
        `memory://get/${stringParam(request.key)}?expires=${Math.floor(request.expiresAt)}` +
          `&filename=${stringParam(request.filename)}&content_type=${stringParam(request.contentType)}`
      ),

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
    putObject: (key, bytes, contentType = "application/octet-stream") =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        void objects.set(key, { chunks: [bytes.slice()], sizeBytes: bytes.byteLength, contentType, modifiedAt: now })),
    putUpload: (target, bytes) =>
      Effect.suspend(() => {
        if (target._tag !== "Put") return fail("not a PUT upload")
        const put = puts.get(target.url)
        if (put === undefined) return fail("this upload no longer accepts bytes (its key was moved or deleted)")
        if (bytes.byteLength !== put.sizeBytes) return fail(`the body must be exactly ${put.sizeBytes} bytes`)
        return Effect.map(Clock.currentTimeMillis, (now) =>
          void objects.set(put.key, { chunks: [bytes.slice()], sizeBytes: bytes.byteLength, contentType: put.contentType, modifiedAt: now }))
      }),
    putPart: (uploadId, partNumber, bytes) =>
      Effect.suspend(() => {
        const upload = uploads.get(uploadId)
        if (upload === undefined) return fail(`no such upload ${uploadId}`)
        if (!Number.isSafeInteger(partNumber) || partNumber < 1 || partNumber > upload.partCount) {
          return fail(`invalid part number ${partNumber}`)
        }
        const length = partLength(upload, partNumber)
        if (upload.sizeIsMaximum ? bytes.byteLength > length : bytes.byteLength !== length) {
          return fail(`part ${partNumber} must be ${upload.sizeIsMaximum ? "at most" : "exactly"} ${length} bytes, not ${bytes.byteLength}`)
        }
        const etag = md5(bytes)
        upload.parts.set(partNumber, { etag, bytes: bytes.slice() })
        return Effect.succeed(`"${etag}"`)
      }),
    keys: () => Effect.sync(() => [...objects.keys()])
  }

  return { store, backdoor }
}

/** A fresh, empty store (one per build of the layer) and its backdoor. */
export const MemoryBlobStore: Layer.Layer<BlobStore | MemoryBlobBackdoor> = Layer.effectContext(
  Effect.sync(() => {
    const { store, backdoor } = makeMemoryBlobStore()
    return Context.make(BlobStore, store).pipe(Context.add(MemoryBlobBackdoor, backdoor))
  })
)
