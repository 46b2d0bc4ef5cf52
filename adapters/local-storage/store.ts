import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"
import { Clock, Effect, Layer, Option, Stream } from "effect"
import { BlobError, BlobStore, type UploadTarget } from "../../core/ports/blob-store.js"
import { isHeaderSafe } from "../../core/rules/storage.js"
import {
  LocalStorageConfig,
  type LocalStorageOptions,
  manifestPath,
  MAX_PARTS,
  normalizeEtag,
  objectPath,
  partFileName,
  isUploadId,
  type ResolvedLocalStorageConfig,
  type UploadManifest,
  uploadDir,
  validateKey,
  validateUploadId
} from "./config.js"
import { fileStream, io, ioOptional, removeFile, statFile, writeAtomically } from "./files.js"
import { signUrl } from "./signing.js"

const fail = (message: string) => Effect.fail(new BlobError({ message }))

export { isHeaderSafe }

const validateContentType = (contentType: string) =>
  isHeaderSafe(contentType)
    ? Effect.succeed(contentType)
    : fail(`invalid content type ${JSON.stringify(contentType)}`)

const validateExpiresAt = (expiresAt: number) =>
  Number.isFinite(expiresAt) && expiresAt >= 0
    ? Effect.succeed(Math.floor(expiresAt))
    : fail(`invalid expiresAt ${expiresAt}`)

/** Reads an upload's manifest; None when the upload does not exist (completed, aborted or never made). */
export const readManifest = (
  config: ResolvedLocalStorageConfig,
  uploadId: string
): Effect.Effect<Option.Option<UploadManifest>, BlobError> =>
  ioOptional("read upload manifest", () => Fs.readFile(manifestPath(config, uploadId), "utf8")).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(Option.none<UploadManifest>()),
      onSome: (text) =>
        Effect.try({
          try: () => Option.some(JSON.parse(text) as UploadManifest),
          catch: (cause) => new BlobError({ message: `corrupt manifest of upload ${uploadId}`, cause })
        })
    }))
  )

/** The local BlobStore; its URLs are served by `localStorageRouter` (./http.ts). */
export const make: Effect.Effect<BlobStore["Type"], never, LocalStorageConfig> = Effect.gen(function*() {
  const config = yield* LocalStorageConfig
  yield* Effect.forEach(
    [config.objectsDir, config.uploadsDir, config.tmpDir],
    (dir) => io("create storage dir", () => Fs.mkdir(dir, { recursive: true })),
    { discard: true }
  ).pipe(Effect.catchAll((error) => Effect.logWarning("local storage: cannot create its folders", error.message)))

  const createUpload: BlobStore["Type"]["createUpload"] = (request) =>
    Effect.gen(function*() {
      const key = yield* validateKey(request.key)
      const contentType = yield* validateContentType(request.contentType)
      const expiresAt = yield* validateExpiresAt(request.expiresAt)
      const sizeBytes = request.sizeBytes
      if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return yield* fail(`invalid sizeBytes ${sizeBytes}`)
      if (request.partSize === undefined) {
        const target: UploadTarget = {
          _tag: "Put",
          url: signUrl(config, { op: "put", key, expiresAt, contentType, contentLength: sizeBytes }),
          headers: { "Content-Type": contentType }
        }
        return target
      }
      const partSize = request.partSize
      if (!Number.isSafeInteger(partSize) || partSize <= 0) return yield* fail(`invalid partSize ${partSize}`)
      const partCount = Math.max(1, Math.ceil(sizeBytes / partSize))
      if (partCount > MAX_PARTS) return yield* fail(`${partCount} parts: more than ${MAX_PARTS}`)
      const uploadId = randomBytes(16).toString("hex")
      const createdAt = yield* Clock.currentTimeMillis
      const manifest: UploadManifest = { key, contentType, sizeBytes, partSize, partCount, createdAt, expiresAt }
      yield* io("create upload", () => Fs.mkdir(uploadDir(config, uploadId), { recursive: true }))
      yield* io("write upload manifest", () => Fs.writeFile(manifestPath(config, uploadId), JSON.stringify(manifest)))
      const parts = Array.from({ length: partCount }, (_, i) => ({
        partNumber: i + 1,
        url: signUrl(config, { op: "part", key, expiresAt, uploadId, partNumber: i + 1, maxLength: partSize })
      }))
      const target: UploadTarget = { _tag: "Multipart", uploadId, parts }
      return target
    })

  const manifestFor = (key: string, uploadId: string) =>
    readManifest(config, uploadId).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(Option.none<UploadManifest>()),
        onSome: (manifest) =>
          manifest.key === key
            ? Effect.succeed(Option.some(manifest))
            : fail(`upload ${uploadId} is not an upload of key ${JSON.stringify(key)}`)
      }))
    )

  const completeMultipart: BlobStore["Type"]["completeMultipart"] = (request) =>
    Effect.gen(function*() {
      const key = yield* validateKey(request.key)
      const uploadId = yield* validateUploadId(request.uploadId)
      const manifest = yield* manifestFor(key, uploadId)
      if (Option.isNone(manifest)) return yield* fail(`no such upload ${uploadId} (completed, aborted or unknown)`)
      if (request.parts.length === 0) return yield* fail("a multipart upload needs at least one part")
      const parts = [...request.parts].sort((a, b) => a.partNumber - b.partNumber)
      const files: Array<{ readonly path: string; readonly sizeBytes: number }> = []
      for (let i = 0; i < parts.length; i++) {
        const { etag, partNumber } = parts[i]
        if (!Number.isSafeInteger(partNumber) || partNumber < 1 || partNumber > manifest.value.partCount) {
          return yield* fail(`invalid part number ${partNumber}`)
        }
        if (i > 0 && parts[i - 1].partNumber === partNumber) return yield* fail(`part ${partNumber} listed twice`)
        const md5 = normalizeEtag(etag)
        if (md5 === undefined) return yield* fail(`part ${partNumber}: invalid ETag ${JSON.stringify(etag)}`)
        const path = NodePath.join(uploadDir(config, uploadId), partFileName(partNumber, md5))
        const stat = yield* statFile(path)
        if (Option.isNone(stat)) {
          return yield* fail(`part ${partNumber}: not uploaded, or its ETag does not match ${JSON.stringify(etag)}`)
        }
        files.push({ path, sizeBytes: stat.value.sizeBytes })
      }
      const body = Stream.fromIterable(files).pipe(
        Stream.flatMap((file) => fileStream(file.path, { expectedSize: file.sizeBytes }), { concurrency: 1 })
      )
      yield* writeAtomically(config.tmpDir, objectPath(config, key), body).pipe(
        Effect.catchTags({
          SizeLimitExceeded: () => fail("unexpected size limit"),
          SizeMismatch: () => fail("unexpected size mismatch")
        })
      )
      yield* io("remove upload staging", () => Fs.rm(uploadDir(config, uploadId), { recursive: true, force: true }))
    })

  const abortMultipart: BlobStore["Type"]["abortMultipart"] = (request) =>
    Effect.gen(function*() {
      const key = yield* validateKey(request.key)
      const uploadId = yield* validateUploadId(request.uploadId)
      yield* manifestFor(key, uploadId)
      yield* io("remove upload staging", () => Fs.rm(uploadDir(config, uploadId), { recursive: true, force: true }))
    })

  const stat: BlobStore["Type"]["stat"] = (key) =>
    validateKey(key).pipe(Effect.flatMap((key) => statFile(objectPath(config, key))))

  const read: BlobStore["Type"]["read"] = (key) =>
    validateKey(key).pipe(
      Effect.map((key) => fileStream(objectPath(config, key), { notFoundMessage: `no object ${JSON.stringify(key)}` })),
      Stream.unwrap
    )

  const write: BlobStore["Type"]["write"] = (key, body, options) =>
    Effect.gen(function*() {
      const valid = yield* validateKey(key)
      yield* validateContentType(options.contentType)
      const { sizeBytes } = yield* writeAtomically(config.tmpDir, objectPath(config, valid), body).pipe(
        Effect.catchTags({
          SizeLimitExceeded: () => fail("unexpected size limit"),
          SizeMismatch: () => fail("unexpected size mismatch")
        })
      )
      return { sizeBytes }
    })

  const signDownload: BlobStore["Type"]["signDownload"] = (request) =>
    Effect.gen(function*() {
      const key = yield* validateKey(request.key)
      const contentType = yield* validateContentType(request.contentType)
      const expiresAt = yield* validateExpiresAt(request.expiresAt)
      // eslint-disable-next-line no-control-regex
      if (request.filename.length === 0 || request.filename.length > 1024 || /[\u0000-\u001f\u007f]/.test(request.filename)) {
        return yield* fail(`invalid download filename ${JSON.stringify(request.filename)}`)
      }
      return signUrl(config, { op: "get", key, expiresAt, filename: request.filename, contentType })
    })

  const delete_: BlobStore["Type"]["delete"] = (key) =>
    validateKey(key).pipe(Effect.flatMap((key) => removeFile(objectPath(config, key))))

  return BlobStore.of({
    createUpload,
    completeMultipart,
    abortMultipart,
    stat,
    read,
    write,
    signDownload,
    delete: delete_
  })
})

/**
 * Housekeeping for a periodic job: removes multipart staging folders whose upload URLs have
 * expired (or that have no readable manifest) and temp files older than `tempMaxAgeMs`
 * (default 24 h), left by a crash. Returns how many entries it removed.
 */
export const sweepStale = (options?: { readonly tempMaxAgeMs?: number }): Effect.Effect<
  number,
  BlobError,
  LocalStorageConfig
> =>
  Effect.gen(function*() {
    const config = yield* LocalStorageConfig
    const now = yield* Clock.currentTimeMillis
    let removed = 0
    const uploads = yield* ioOptional("list uploads", () => Fs.readdir(config.uploadsDir))
    for (const uploadId of Option.getOrElse(uploads, () => [] as Array<string>)) {
      if (!isUploadId(uploadId)) continue
      const manifest = yield* readManifest(config, uploadId).pipe(
        Effect.catchAll(() => Effect.succeed(Option.none<UploadManifest>()))
      )
      const createdLongAgo = yield* ioOptional("stat upload", () => Fs.stat(uploadDir(config, uploadId))).pipe(
        Effect.map(Option.match({ onNone: () => false, onSome: (s) => now - s.mtimeMs > 60_000 }))
      )
      const expired = Option.match(manifest, { onNone: () => createdLongAgo, onSome: (m) => now > m.expiresAt })
      if (expired) {
        yield* io("remove stale upload", () => Fs.rm(uploadDir(config, uploadId), { recursive: true, force: true }))
        removed++
      }
    }
    const tempMaxAgeMs = options?.tempMaxAgeMs ?? 24 * 3_600_000
    const temps = yield* ioOptional("list temp files", () => Fs.readdir(config.tmpDir))
    for (const name of Option.getOrElse(temps, () => [] as Array<string>)) {
      const path = NodePath.join(config.tmpDir, name)
      const stats = yield* ioOptional("stat temp file", () => Fs.stat(path))
      if (Option.isSome(stats) && now - stats.value.mtimeMs > tempMaxAgeMs) {
        yield* removeFile(path)
        removed++
      }
    }
    return removed
  })

/** BlobStore over LocalStorageConfig (share the config layer with `localStorageRoutes`). */
export const layer: Layer.Layer<BlobStore, never, LocalStorageConfig> = Layer.effect(BlobStore, make)

/** A self-contained local BlobStore. */
export const makeLocalBlobStore = (options: LocalStorageOptions): Layer.Layer<BlobStore> =>
  layer.pipe(Layer.provide(LocalStorageConfig.layer(options)))

/** The store and its config together, for an app that also mounts `localStorageRoutes`. */
export const makeLocalStorage = (options: LocalStorageOptions): Layer.Layer<BlobStore | LocalStorageConfig> =>
  layer.pipe(Layer.provideMerge(LocalStorageConfig.layer(options)))
