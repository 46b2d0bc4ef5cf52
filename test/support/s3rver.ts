/**
 * A real S3-compatible server for tests: `@20minutes/s3rver` (it verifies SigV4 signatures and
 * expiry) on 127.0.0.1 and a random port, storing into a fresh temp directory, with one bucket.
 *
 * s3rver 4.0.4 leaves out three parts of S3's multipart API that the BlobStore contract relies
 * on, so `installS3Fidelity` adds them, as S3 documents them, before any server starts:
 *  - AbortMultipartUpload (`DELETE ?uploadId`): s3rver answers 405; here it removes the upload
 *    (204), or answers 404 NoSuchUpload;
 *  - UploadPart to an unknown (completed, aborted) upload, or under another key: s3rver stores it
 *    anyway (200); here 404 NoSuchUpload;
 *  - CompleteMultipartUpload: s3rver ignores the ETags; here a part not uploaded or with another
 *    ETag is 400 InvalidPart, parts out of order 400 InvalidPartOrder, a part other than the last
 *    under 5 MiB 400 EntityTooSmall, an unknown upload 404 NoSuchUpload.
 * Requests still pass s3rver's signature check first (the additions sit behind it).
 *
 * DeleteObject no longer removes the key's folders: s3rver's cleanup could delete an object
 * written under the same prefix at the same moment (see installS3Fidelity).
 *
 * It also fixes one bug of s3rver's SigV4 check: it encodes the canonical query string with
 * `encodeURIComponent`, which leaves `!'()*` as they are where SigV4 (and the SDK) percent-encode
 * them, so a presigned GET whose `response-content-disposition` has `filename*=UTF-8''…` was
 * refused with 403 SignatureDoesNotMatch. And it drops the trailing slash of a bucket-level path
 * (`GET /bucket/?list-type=2`, as the SDK sends ListObjectsV2 in path style) from the canonical
 * URI, so every listing was refused the same way; the path as sent is kept now.
 */
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { Effect, type Scope } from "effect"
import type { S3Options } from "../../adapters/s3/index.js"

const require = createRequire(import.meta.url)

/** s3rver accepts only these credentials. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const

export interface RunningS3rver {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string
  readonly bucket: string
  /** Where s3rver keeps its files (objects under `<directory>/<bucket>/`). */
  readonly directory: string
  /** Options for `layerS3BlobStore` pointing at this server (path style, s3rver's credentials). */
  readonly options: S3Options
  /** Multipart uploads neither completed nor aborted, by upload id. */
  readonly openUploads: () => Promise<ReadonlyArray<string>>
}

// ---------------------------------------------------------------------------------------------
// The few s3rver internals used (CommonJS, untyped).

interface KoaContext {
  readonly method: string
  readonly params: { readonly bucket: string; readonly key: string; readonly queryMethod?: string }
  readonly query: Record<string, string | ReadonlyArray<string> | undefined>
  readonly store: FilesystemStore
  status: number
  body: unknown
}
type Middleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<unknown>
interface FilesystemStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string
  deleteObject(bucket: string, key: string): Promise<void>
  putObjectMultipart(
    bucket: string,
    uploadId: string,
    parts: ReadonlyArray<{ readonly number: number; readonly etag: string }>
  ): Promise<unknown>
}
interface RouterLayer {
  readonly path: string
  readonly methods: ReadonlyArray<string>
}
interface Router {
  readonly stack: Array<RouterLayer>
  delete(path: string, middleware: Middleware): Router
}
interface S3rverServer {
  run(): Promise<AddressInfo>
  close(): Promise<void>
  /** Koa's middleware list, composed when the server starts. */
  readonly middleware: Array<(ctx: { readonly path: string; readonly headers: object }, next: () => Promise<unknown>) => Promise<unknown>>
}
type S3rverConstructor = new(options: Record<string, unknown>) => S3rverServer
type S3ErrorConstructor = new(code: string, message: string, detail?: Record<string, unknown>) => Error

const S3rver = require("@20minutes/s3rver") as S3rverConstructor
const S3Error = require("@20minutes/s3rver/lib/models/error.js") as S3ErrorConstructor

const MIN_PART_SIZE = 5 * 1024 * 1024

const uploadsDir = (store: FilesystemStore, bucket: string) => store.getResourcePath(bucket, undefined, "uploads")

const noSuchUpload = (uploadId: string) =>
  new S3Error(
    "NoSuchUpload",
    "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
    { UploadId: uploadId }
  )

const queryString = (value: string | ReadonlyArray<string> | undefined): string =>
  typeof value === "string" ? value : ""

/** The key an open upload was created for, or undefined when there is no such open upload. */
const uploadKey = async (store: FilesystemStore, bucket: string, uploadId: string): Promise<string | undefined> => {
  if (!/^[0-9a-f]{32}$/.test(uploadId)) return undefined
  try {
    return await Fs.readFile(NodePath.join(uploadsDir(store, bucket), uploadId, "key"), "utf8")
  } catch {
    return undefined
  }
}

/** Throws NoSuchUpload unless `uploadId` is an open upload of the request's key. */
const requireUpload = async (ctx: KoaContext): Promise<string> => {
  const uploadId = queryString(ctx.query.uploadId)
  if ((await uploadKey(ctx.store, ctx.params.bucket, uploadId)) !== ctx.params.key) throw noSuchUpload(uploadId)
  return uploadId
}

const INSTALLED = Symbol.for("hush.test.s3rver.fidelity")
/** The request path as sent, stored on the request's headers object (never a header itself). */
const RAW_PATH = Symbol.for("hush.test.s3rver.rawPath")

/** `encodeURIComponent` output made RFC 3986 (what SigV4 canonical query strings use). */
const rfc3986 = (encoded: string): string =>
  encoded.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * Adds AbortMultipartUpload and S3's multipart checks to s3rver and fixes its canonical query
 * encoding (once per process; every s3rver in the process shares its modules).
 */
export const installS3Fidelity = (): void => {
  const router = require("@20minutes/s3rver/lib/routes.js") as Router & { [INSTALLED]?: true }
  if (router[INSTALLED]) return

  const v4 = require("@20minutes/s3rver/lib/signature/v4.js") as {
    getStringToSign: (
      canonicalRequest: { querystring: string; uri: string; headers: Record<PropertyKey, unknown> },
      request: unknown
    ) => string
  }
  const getStringToSign = v4.getStringToSign
  v4.getStringToSign = (canonicalRequest, request) => {
    const rawPath = canonicalRequest.headers[RAW_PATH]
    const uri = typeof rawPath === "string" && rawPath.endsWith("/") && !canonicalRequest.uri.endsWith("/")
      ? `${canonicalRequest.uri}/`
      : canonicalRequest.uri
    return getStringToSign({ ...canonicalRequest, uri, querystring: rfc3986(canonicalRequest.querystring) }, request)
  }
  const objectController = require("@20minutes/s3rver/lib/controllers/object.js") as Record<string, Middleware>
  const FilesystemStoreClass = require("@20minutes/s3rver/lib/stores/filesystem.js") as {
    prototype: FilesystemStore
  }

  // UploadPart and CompleteMultipartUpload: only on an open upload of that key.
  for (const name of ["uploadPart", "completeMultipartUpload"] as const) {
    const original = objectController[name]
    objectController[name] = async (ctx, next) => {
      await requireUpload(ctx)
      return original(ctx, next)
    }
  }

  // CompleteMultipartUpload: the listed parts must exist with those ETags, in order, and all but
  // the last must be at least 5 MiB.
  const assemble = FilesystemStoreClass.prototype.putObjectMultipart
  FilesystemStoreClass.prototype.putObjectMultipart = async function(this: FilesystemStore, bucket, uploadId, parts) {
    const dir = NodePath.join(uploadsDir(this, bucket), uploadId)
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]
      if (i > 0 && parts[i - 1].number >= part.number) {
        throw new S3Error("InvalidPartOrder", "The list of parts was not in ascending order.", { UploadId: uploadId })
      }
      const invalidPart = () =>
        new S3Error(
          "InvalidPart",
          "One or more of the specified parts could not be found. The part may not have been uploaded, " +
            "or the specified entity tag may not match the part's entity tag.",
          { UploadId: uploadId, PartNumber: part.number, ETag: part.etag }
        )
      const partPath = NodePath.join(dir, String(part.number))
      const md5 = await Fs.readFile(`${partPath}.md5`, "utf8").catch(() => undefined)
      if (md5 === undefined || md5.trim().toLowerCase() !== part.etag.trim().toLowerCase()) throw invalidPart()
      const { size } = await Fs.stat(partPath)
      if (i < parts.length - 1 && size < MIN_PART_SIZE) {
        throw new S3Error("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.", {
          ProposedSize: size,
          MinSizeAllowed: MIN_PART_SIZE,
          PartNumber: part.number
        })
      }
    }
    return assemble.call(this, bucket, uploadId, parts)
  }

  // DeleteObject: s3rver then removes the key's folders when a readdir finds them empty, with a
  // later recursive rm, which also takes any object written under that prefix in between: a PUT
  // answered 200 was then a 404 (the chaos run lost an upload so). S3 has no folders: keep them.
  FilesystemStoreClass.prototype.deleteObject = async function(this: FilesystemStore, bucket, key) {
    await Promise.all(["object", "object.md5", "metadata.json"].map((resource) =>
      Fs.unlink(this.getResourcePath(bucket, key, resource)).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "ENOENT") throw e
      })
    ))
  }

  // AbortMultipartUpload: s3rver's own DELETE route answers 405 for `?uploadId`; this route is
  // placed in front of it (behind the authentication and bucket checks, which are `use` layers).
  const objectRoute = "/:bucket/:key+"
  router.delete(objectRoute, async (ctx, next) => {
    if (ctx.params.queryMethod !== "uploadId") return next()
    const uploadId = await requireUpload(ctx)
    await Fs.rm(NodePath.join(uploadsDir(ctx.store, ctx.params.bucket), uploadId), { recursive: true, force: true })
    ctx.status = 204
    ctx.body = null
  })
  const added = router.stack.pop()!
  const stockDelete = router.stack.findIndex((layer) => layer.path === objectRoute && layer.methods.includes("DELETE"))
  if (stockDelete < 0) throw new Error("s3rver: its object DELETE route was not found (another s3rver version?)")
  router.stack.splice(stockDelete, 0, added)
  router[INSTALLED] = true
}

/**
 * Starts s3rver for the scope: 127.0.0.1, a random port, a fresh temp directory, bucket
 * `bucket` created; closed and its directory removed when the scope ends.
 */
export const startS3rver = (options?: { readonly bucket?: string }): Effect.Effect<RunningS3rver, never, Scope.Scope> =>
  Effect.gen(function*() {
    installS3Fidelity()
    const bucket = options?.bucket ?? "hush-test"
    const directory = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(NodePath.join(Os.tmpdir(), "hush-s3rver-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    const server = new S3rver({
      address: "127.0.0.1",
      port: 0,
      silent: true,
      directory,
      // Path-style only: `<bucket>.127.0.0.1` is no host name.
      vhostBuckets: false,
      configureBuckets: [{ name: bucket }]
    })
    // first of all: keep the path as sent, for the canonical URI (see installS3Fidelity)
    server.middleware.unshift((ctx, next) => {
      Object.defineProperty(ctx.headers, RAW_PATH, { value: ctx.path, enumerable: false })
      return next()
    })
    const address = yield* Effect.acquireRelease(
      Effect.promise(() => server.run()),
      () => Effect.promise(() => server.close().catch(() => undefined))
    )
    const endpoint = `http://127.0.0.1:${address.port}`
    const uploads = NodePath.join(directory, bucket, "._S3rver_uploads")
    return {
      endpoint,
      bucket,
      directory,
      options: {
        bucket,
        endpoint,
        region: "us-east-1",
        forcePathStyle: true,
        credentials: S3RVER_CREDENTIALS
      },
      openUploads: () => Fs.readdir(uploads).catch(() => [] as Array<string>)
    }
  })
