import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { Context, Effect, Layer } from "effect"
import { BlobError } from "../../core/ports/blob-store.js"

/** What the local blob store and its HTTP handler share. */
export interface LocalStorageOptions {
  /** Directory holding everything: `objects/`, `uploads/` (multipart staging), `open/` (open PUT uploads) and `tmp/`. */
  readonly rootDir: string
  /** Absolute base written into signed URLs, e.g. `https://api.example.com` (no trailing `/`). */
  readonly publicBaseUrl: string
  /** HMAC-SHA256 key for the signed URLs. */
  readonly signingSecret: string
}

export interface ResolvedLocalStorageConfig extends LocalStorageOptions {
  readonly objectsDir: string
  readonly uploadsDir: string
  readonly openDir: string
  readonly tmpDir: string
}

export const resolveConfig = (options: LocalStorageOptions): ResolvedLocalStorageConfig => {
  if (options.signingSecret.length === 0) {
    throw new Error("local storage: signingSecret must not be empty")
  }
  const rootDir = NodePath.resolve(options.rootDir)
  return {
    rootDir,
    publicBaseUrl: options.publicBaseUrl.replace(/\/+$/, ""),
    signingSecret: options.signingSecret,
    objectsDir: NodePath.join(rootDir, "objects"),
    uploadsDir: NodePath.join(rootDir, "uploads"),
    openDir: NodePath.join(rootDir, "open"),
    tmpDir: NodePath.join(rootDir, "tmp")
  }
}

/** Shared by the store (`make`) and the HTTP handler (`localStorageRouter`). */
export class LocalStorageConfig extends Context.Tag("hush/LocalStorageConfig")<
  LocalStorageConfig,
  ResolvedLocalStorageConfig
>() {
  static readonly layer = (options: LocalStorageOptions): Layer.Layer<LocalStorageConfig> =>
    Layer.sync(LocalStorageConfig, () => resolveConfig(options))
}

/** The path prefix (outside `/v1`) under which the handler serves objects. */
export const STORAGE_PATH_PREFIX = "/storage" as const

export { keyProblem, MAX_KEY_BYTES } from "../../core/rules/storage.js"
import { keyProblem } from "../../core/rules/storage.js"

export const validateKey = (key: string): Effect.Effect<string, BlobError> => {
  const problem = keyProblem(key)
  return problem === undefined
    ? Effect.succeed(key)
    : Effect.fail(new BlobError({ message: `invalid object key ${JSON.stringify(key)}: ${problem}` }))
}

/** The file of an object; the key must have been validated. */
export const objectPath = (config: ResolvedLocalStorageConfig, key: string): string => {
  const path = NodePath.join(config.objectsDir, ...key.split("/"))
  // Belt and braces: the validated key can never leave objectsDir.
  if (!path.startsWith(config.objectsDir + NodePath.sep)) {
    throw new Error(`object key escapes the store: ${JSON.stringify(key)}`)
  }
  return path
}

const UPLOAD_ID = /^[0-9a-f]{32}$/

export const isUploadId = (uploadId: string): boolean => UPLOAD_ID.test(uploadId)

export const validateUploadId = (uploadId: string): Effect.Effect<string, BlobError> =>
  isUploadId(uploadId)
    ? Effect.succeed(uploadId)
    : Effect.fail(new BlobError({ message: `invalid upload id ${JSON.stringify(uploadId)}` }))

export const uploadDir = (config: ResolvedLocalStorageConfig, uploadId: string): string =>
  NodePath.join(config.uploadsDir, uploadId)

export const manifestPath = (config: ResolvedLocalStorageConfig, uploadId: string): string =>
  NodePath.join(uploadDir(config, uploadId), "manifest.json")

/** A stored part is named after its number and the MD5 of its bytes, so complete can check ETags by name. */
export const partFileName = (partNumber: number, md5Hex: string): string =>
  `part-${String(partNumber).padStart(5, "0")}.${md5Hex}`

export const partFilePrefix = (partNumber: number): string => `part-${String(partNumber).padStart(5, "0")}.`

/** `"abc…"`, `abc…`, `W/"abc…"` → `abc…` (lower case), or undefined when it is not an MD5 hex. */
export const normalizeEtag = (etag: string): string | undefined => {
  const bare = etag.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1").toLowerCase()
  return /^[0-9a-f]{32}$/.test(bare) ? bare : undefined
}

/** Every folder and file of the store is its owner's alone (docs/security.md). */
export const DIR_MODE = 0o700
export const FILE_MODE = 0o600

/**
 * The record of an open PUT upload of `key`: its URL is accepted only while this exists
 * (`createUpload` writes it; `move` and `delete` of the key remove it).
 */
export const openUploadPath = (config: ResolvedLocalStorageConfig, key: string): string =>
  NodePath.join(config.openDir, createHash("sha256").update(key, "utf8").digest("hex"))

export interface OpenUpload {
  readonly key: string
  readonly expiresAt: number
}

/** Written into the staging folder by `createUpload`. */
export interface UploadManifest {
  readonly key: string
  readonly contentType: string
  readonly sizeBytes: number
  readonly partSize: number
  readonly partCount: number
  readonly createdAt: number
  readonly expiresAt: number
}

/** Maximum number of parts of a multipart upload (as on S3). */
export const MAX_PARTS = 10_000
