import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"
import { Clock, Effect, Layer, Option, Stream } from "effect"
import { BlobError, BlobStore, type UploadTarget } from "../../core/ports/blob-store.js"
import { isHeaderSafe } from "../../core/rules/storage.js"
import {
  DIR_MODE,
  FILE_MODE,
  LocalStorageConfig,
  type LocalStorageOptions,
  manifestPath,
  MAX_PARTS,
  normalizeEtag,
  objectPath,
  type OpenUpload,
  openUploadPath,
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

/**
 * The open PUT upload of `key`, or None once it was closed (`move`, `delete`) or never opened.
 * An expired one still counts here: the URL's own expiry refuses it.
 */
export const readOpenUpload = (
  config: ResolvedLocalStorageConfig,
  key: string
): Effect.Effect<Option.Option<OpenUpload>, BlobError> =>
  ioOptional("read open upload", () => Fs.readFile(openUploadPath(config, key), "utf8")).pipe(
    Effect.map(Option.flatMap((text) => {
      try {
        const open = JSON.parse(text) as OpenUpload
        return open.key === key ? Option.some(open) : Option.none()
      } catch {
        return Option.none()
      }
    }))
  )

/** Closes the PUT upload of `key` (if any): its URL is refused from now on. */
const closeUpload = (config: ResolvedLocalStorageConfig, key: string) => removeFile(openUploadPath(config, key))

/** Every file under `dir`, as `/`-separated paths relative to `base`. */
const walk = (base: string, dir: string): Effect.Effect<ReadonlyArray<{ readonly relative: string; readonly sizeBytes: number; readonly modifiedAt: number }>, BlobError> =>
  Effect.gen(function*() {
    const entries = yield* ioOptional("list objects", () => Fs.readdir(dir, { withFileTypes: true }))
    const found: Array<{ readonly relative: string; readonly sizeBytes: number; readonly modifiedAt: number }> = []
    for (const entry of Option.getOrElse(entries, () => [])) {
      const path = NodePath.join(dir, entry.name)
      if (entry.isDirectory()) {
        found.push(...(yield* walk(base, path)))
      } else if (entry.isFile()) {
        const stats = yield* ioOptional("stat object", () => Fs.stat(path))
        if (Option.isSome(stats)) {
          found.push({
            relative: NodePath.relative(base, path).split(NodePath.sep).join("/"),
            sizeBytes: stats.value.size,
            modifiedAt: stats.value.mtimeMs
          })
        }
      }
    }
    return found
  })

/** The local BlobStore; its URLs are served by `localStorageRouter` (./http.ts). */
export const make: Effect.Effect<BlobStore["Type"], never, LocalStorageConfig> = Effect.gen(function*() {
  const config = yield* LocalStorageConfig
  yield* Effect.forEach(
    [config.objectsDir, config.uploadsDir, config.openDir, config.tmpDir],
    (dir) => io("create storage dir", () => Fs.mkdir(dir, { recursive: true, mode: DIR_MODE })),
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
        const open: OpenUpload = { key, expiresAt }
        yield* io("open upload", () => Fs.writeFile(openUploadPath(config, key), JSON.stringify(open), { mode: FILE_MODE }))
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
      yield* io("create upload", () => Fs.mkdir(uploadDir(config, uploadId), { recursive: true, mode: DIR_MODE }))
      yield* io("write upload manifest", () => Fs.writeFile(manifestPath(config, uploadId), JSON.stringify(manifest), { mode: FILE_MODE }))
      // each part URL signs its exact length (or, for a bounded size, its largest): no part can be
      // larger than its share
      const parts = Array.from({ length: partCount }, (_, i) => {
        const share = Math.min(partSize, sizeBytes - i * partSize)
        return {
          partNumber: i + 1,
          url: signUrl(config, {
            op: "part", key, expiresAt, uploadId, partNumber: i + 1,
            length: request.sizeIsMaximum === true ? { max: share } : { exact: share }
          })
        }
      })
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

  const move: BlobStore["Type"]["move"] = (request) =>
    Effect.gen(function*() {
      const from = yield* validateKey(request.from)
      const to = yield* validateKey(request.to)
      // closed first: a PUT still streaming finds it gone before it lands (http.ts checks again)
      yield* closeUpload(config, from)
      const target = objectPath(config, to)
      yield* io("create object dir", () => Fs.mkdir(NodePath.dirname(target), { recursive: true, mode: DIR_MODE }))
      const moved = yield* ioOptional("move", () => Fs.rename(objectPath(config, from), target))
      if (Option.isNone(moved)) return yield* fail(`no object ${JSON.stringify(from)} to move`)
      const stored = yield* statFile(target)
      if (Option.isNone(stored)) return yield* fail(`the object moved to ${JSON.stringify(to)} is gone`)
      return stored.value
    })

  const list: BlobStore["Type"]["list"] = (prefix) =>
    Stream.unwrap(Effect.gen(function*() {
      // the deepest folder the prefix names whole; its files are filtered by the rest
      const folder = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/")) : ""
      if (folder !== "") yield* validateKey(folder)
      const dir = folder === "" ? config.objectsDir : objectPath(config, folder)
      const files = yield* walk(config.objectsDir, dir)
      return Stream.fromIterable(
        files.filter((file) => file.relative.startsWith(prefix))
          .map((file) => ({ key: file.relative, sizeBytes: file.sizeBytes, modifiedAt: file.modifiedAt }))
      )
    }))

  const delete_: BlobStore["Type"]["delete"] = (key) =>
    validateKey(key).pipe(
      Effect.tap((key) => closeUpload(config, key)),
      Effect.flatMap((key) => removeFile(objectPath(config, key)))
    )

  return BlobStore.of({
    createUpload,
    completeMultipart,
    abortMultipart,
    stat,
    read,
    write,
    signDownload,
    move,
    list,
    delete: delete_
  })
})

/**
 * Housekeeping for a periodic job: removes multipart staging folders and open-upload records
 * whose upload URLs have expired (or that cannot be read) and temp files older than
 * `tempMaxAgeMs` (default 24 h), left by a crash. Returns how many entries it removed.
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
    const opened = yield* ioOptional("list open uploads", () => Fs.readdir(config.openDir))
    for (const name of Option.getOrElse(opened, () => [] as Array<string>)) {
      const path = NodePath.join(config.openDir, name)
      const text = yield* ioOptional("read open upload", () => Fs.readFile(path, "utf8"))
      const expiresAt = Option.flatMap(text, (t) => {
        try {
          const value = (JSON.parse(t) as Partial<OpenUpload>).expiresAt
          return typeof value === "number" ? Option.some(value) : Option.none()
        } catch {
          return Option.none()
        }
      })
      if (Option.isSome(text) && Option.match(expiresAt, { onNone: () => true, onSome: (at) => now > at })) {
        yield* removeFile(path)
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
export const layerLocalBlobStore = (options: LocalStorageOptions): Layer.Layer<BlobStore> =>
  layer.pipe(Layer.provide(LocalStorageConfig.layer(options)))

/** The store and its config together, for an app that also mounts `localStorageRoutes`. */
export const layerLocalStorage = (options: LocalStorageOptions): Layer.Layer<BlobStore | LocalStorageConfig> =>
  layer.pipe(Layer.provideMerge(LocalStorageConfig.layer(options)))
