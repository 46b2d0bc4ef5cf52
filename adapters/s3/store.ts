import { Readable } from "node:stream"
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand
} from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Chunk, Clock, type ConfigError, Effect, Exit, Layer, Option, type Scope, Stream } from "effect"
import { BlobError, BlobStore, type UploadTarget } from "../../core/ports/blob-store.js"
import {
  contentDisposition,
  DEFAULT_COPY_PART_SIZE,
  DEFAULT_WRITE_PART_SIZE,
  isHeaderSafe,
  keyProblem,
  MAX_OBJECT_SIZE,
  MAX_PART_SIZE,
  MAX_PARTS,
  MIN_PART_SIZE,
  optionsProblem,
  presignWindow,
  reveal,
  S3Config,
  type S3Options
} from "./config.js"

const fail = (message: string) => Effect.fail(new BlobError({ message }))

/** What is safe to keep of an SDK error: never its request, headers or raw body. */
interface SdkErrorInfo {
  readonly name: string
  readonly message: string
  readonly httpStatusCode?: number | undefined
  readonly requestId?: string | undefined
}

export const sdkErrorInfo = (cause: unknown): SdkErrorInfo => {
  if (typeof cause !== "object" || cause === null) return { name: "Error", message: String(cause) }
  const error = cause as {
    readonly name?: unknown
    readonly message?: unknown
    readonly code?: unknown
    readonly $metadata?: { readonly httpStatusCode?: unknown; readonly requestId?: unknown }
  }
  const name = typeof error.name === "string" ? error.name : "Error"
  const rawMessage = typeof error.message === "string" ? error.message : ""
  const code = typeof error.code === "string" ? error.code : undefined
  const status = error.$metadata?.httpStatusCode
  const requestId = error.$metadata?.requestId
  return {
    name: code !== undefined && name === "Error" ? code : name,
    // The SDK says "UnknownError" for bodiless errors (HEAD); the name is more telling then.
    message: rawMessage === "" || rawMessage === "UnknownError" ? "" : rawMessage,
    httpStatusCode: typeof status === "number" ? status : undefined,
    requestId: typeof requestId === "string" ? requestId : undefined
  }
}

/** What a bodiless error answer (HEAD) most likely means. */
const BODILESS: Readonly<Record<number, string>> = {
  301: "the bucket is in another region or needs another endpoint style",
  400: "bad request",
  403: "access denied: the credentials were refused or lack permission",
  404: "not found",
  412: "precondition failed"
}

const describe = (info: SdkErrorInfo): string => {
  const status = info.httpStatusCode === undefined ? "" : ` (HTTP ${info.httpStatusCode})`
  const unnamed = info.name === "Unknown" || info.name === "UnknownError"
  const name = unnamed && info.httpStatusCode !== undefined ? "S3 error" : info.name
  const text = info.message !== ""
    ? info.message
    : unnamed && info.httpStatusCode !== undefined
    ? BODILESS[info.httpStatusCode] ?? ""
    : ""
  return `${name}${status}${text === "" ? "" : `: ${text}`}`
}

/** Names of SDK and network errors that say the store did not answer, or cannot now. */
const UNAVAILABLE_NAMES = /^(TimeoutError|RequestTimeout|RequestTimeoutException|SlowDown|ServiceUnavailable|InternalError|ThrottlingException|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ENOTFOUND)$/

/**
 * Whether the store was unreachable or said it cannot answer now (a network failure, a
 * timeout, 5xx, throttling), as opposed to refusing the operation (4xx): worth another try.
 */
export const isUnavailable = (info: SdkErrorInfo): boolean =>
  info.httpStatusCode === undefined
    ? UNAVAILABLE_NAMES.test(info.name) || /socket hang up|timed? ?out|ECONN|EPIPE|network|aborted/i.test(info.message)
    : info.httpStatusCode >= 500 || info.httpStatusCode === 429 || UNAVAILABLE_NAMES.test(info.name)

/** `what` failed: the SDK error's name, status and message, and a sanitised cause. */
export const toBlobError = (what: string, cause: unknown): BlobError => {
  const info = sdkErrorInfo(cause)
  return new BlobError({ message: `${what}: ${describe(info)}`, cause: info, unavailable: isUnavailable(info) })
}

/**
 * An object's size from its HEAD answer. An answer without `Content-Length` (cut short by the
 * network) says nothing of the object: the store did not answer, never "0 bytes" — which
 * complete would refuse as a size mismatch, the client's fault.
 */
const contentLengthOf = (head: { readonly ContentLength?: number | undefined }, what: string): Effect.Effect<number, BlobError> =>
  head.ContentLength === undefined
    ? Effect.fail(new BlobError({ message: `${what}: the answer has no Content-Length`, unavailable: true }))
    : Effect.succeed(head.ContentLength)

const isNotFound = (info: SdkErrorInfo): boolean =>
  info.name === "NotFound" || info.name === "NoSuchKey" || (info.httpStatusCode === 404 && info.name !== "NoSuchBucket")

const validateKey = (key: string): Effect.Effect<string, BlobError> => {
  const problem = keyProblem(key)
  return problem === undefined ? Effect.succeed(key) : fail(`invalid object key ${JSON.stringify(key)}: ${problem}`)
}

const validateContentType = (contentType: string): Effect.Effect<string, BlobError> =>
  isHeaderSafe(contentType) ? Effect.succeed(contentType) : fail(`invalid content type ${JSON.stringify(contentType)}`)

const validateExpiresAt = (expiresAt: number): Effect.Effect<number, BlobError> =>
  Number.isFinite(expiresAt) && expiresAt >= 0 ? Effect.succeed(expiresAt) : fail(`invalid expiresAt ${expiresAt}`)

const validateUploadId = (uploadId: string): Effect.Effect<string, BlobError> =>
  uploadId.length > 0 && uploadId.length <= 1024 && /^[\x21-\x7e]+$/.test(uploadId)
    ? Effect.succeed(uploadId)
    : fail(`invalid upload id ${JSON.stringify(uploadId)}`)

/** `"abc"`, `abc`, `W/"abc"` → `"abc"` (S3 compares ETags without their quotes), or undefined. */
export const normalizeEtag = (etag: string): string | undefined => {
  const bare = etag.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1")
  return /^[\x21\x23-\x7e]{1,1024}$/.test(bare) ? `"${bare}"` : undefined
}

/** How long opening a connection to the store may take. */
const CONNECTION_TIMEOUT_MS = 5_000
/** How long a request's socket may stay silent (no byte either way) before the attempt is given up. */
const SOCKET_TIMEOUT_MS = 10_000
/** The same while an object's body is read (its consumer may pause it). */
const READ_SOCKET_TIMEOUT_MS = 60_000

type PresignOptions = NonNullable<Parameters<typeof getSignedUrl>[2]>

const PUT_SIGNED_HEADERS: ReadonlySet<string> = new Set(["content-type", "content-length"])

/**
 * A BlobStore on one S3 bucket, over a client that lives as long as the scope. Invalid options
 * are a defect (a deployment error, like the local store's).
 */
export const make = (options: S3Options): Effect.Effect<BlobStore["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const problem = optionsProblem(options)
    if (problem !== undefined) return yield* Effect.dieMessage(`S3 configuration: ${problem}`)
    const bucket = options.bucket
    const writePartSize = options.writePartSizeBytes ?? DEFAULT_WRITE_PART_SIZE
    const singleCopyMax = options.singleCopyMaxBytes ?? MAX_PART_SIZE
    const copyPartSize = options.copyPartSizeBytes ?? DEFAULT_COPY_PART_SIZE
    const credentials = options.credentials
    /**
     * A client whose sockets may stay silent `socketTimeoutMs`. An unreachable endpoint fails in
     * seconds rather than at the OS's TCP timeout, and one that stops answering (a partition)
     * within that silence; with one retry, a call that cannot succeed ends in about twice it
     * (decisions.md, Faults: the caller answers 503 or tries again later, inside its lease).
     */
    const makeClient = (socketTimeoutMs: number) => Effect.acquireRelease(
      Effect.sync(() =>
        new S3Client({
          region: options.region,
          ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
          forcePathStyle: options.forcePathStyle,
          ...(credentials === undefined ? {} : {
            credentials: {
              accessKeyId: credentials.accessKeyId,
              secretAccessKey: reveal(credentials.secretAccessKey),
              ...(credentials.sessionToken === undefined ? {} : { sessionToken: reveal(credentials.sessionToken) })
            }
          }),
          // Checksums only where an operation requires them: with the SDK's default, presigned PUT
          // URLs carry the checksum of an empty body, and several S3-compatible stores refuse or
          // mishandle the flexible checksums.
          requestChecksumCalculation: "WHEN_REQUIRED",
          responseChecksumValidation: "WHEN_REQUIRED",
          requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: socketTimeoutMs },
          maxAttempts: 2
        })
      ),
      (client) => Effect.sync(() => client.destroy())
    )
    const client = yield* makeClient(SOCKET_TIMEOUT_MS)
    // an object's body is read at its consumer's pace (ffmpeg, the model): a slow consumer leaves
    // the socket quiet meanwhile, which is no fault of the store's
    const reader = yield* makeClient(READ_SOCKET_TIMEOUT_MS)

    /** Runs one SDK call; interruption aborts its HTTP request. Errors are kept raw. */
    const attempt = <A>(run: (abortSignal: AbortSignal) => Promise<A>): Effect.Effect<A, unknown> =>
      Effect.tryPromise({ try: run, catch: (cause) => cause })

    /** Runs one SDK call; an error becomes a BlobError saying `what` failed. */
    const call = <A>(what: string, run: (abortSignal: AbortSignal) => Promise<A>): Effect.Effect<A, BlobError> =>
      Effect.mapError(attempt(run), (cause) => toBlobError(what, cause))

    /** A presigned URL valid until `expiresAt` (capped at 7 days). */
    const presign = (
      what: string,
      expiresAt: number,
      sign: (options: PresignOptions) => Promise<string>
    ): Effect.Effect<string, BlobError> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({
          try: () => sign(presignWindow(expiresAt, now)),
          catch: (cause) => toBlobError(what, cause)
        }))

    const objectName = (key: string) => `s3://${bucket}/${key}`

    const createMultipartUpload = (key: string, contentType: string) =>
      call(
        `create multipart upload ${objectName(key)}`,
        (abortSignal) =>
          client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }), {
            abortSignal
          })
      ).pipe(
        Effect.flatMap((created) =>
          created.UploadId === undefined || created.UploadId === ""
            ? fail(`create multipart upload ${objectName(key)}: no UploadId in the answer`)
            : Effect.succeed(created.UploadId)
        )
      )

    /** AbortMultipartUpload; NoSuchUpload (already completed or aborted) is success. */
    const abortUpload = (key: string, uploadId: string): Effect.Effect<void, BlobError> =>
      attempt((abortSignal) =>
        client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }), { abortSignal })
      ).pipe(
        Effect.asVoid,
        Effect.catchAll((cause) =>
          sdkErrorInfo(cause).name === "NoSuchUpload"
            ? Effect.void
            : Effect.fail(toBlobError(`abort multipart upload ${uploadId} of ${objectName(key)}`, cause))
        )
      )

    const completeUpload = (
      key: string,
      uploadId: string,
      parts: ReadonlyArray<{ readonly PartNumber: number; readonly ETag: string }>
    ) =>
      call(
        `complete multipart upload ${uploadId} of ${objectName(key)}`,
        (abortSignal) =>
          client.send(
            new CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: key,
              UploadId: uploadId,
              MultipartUpload: { Parts: parts.map((part) => ({ ...part })) }
            }),
            { abortSignal }
          )
      )

    const createUpload: BlobStore["Type"]["createUpload"] = (request) =>
      Effect.gen(function*() {
        const key = yield* validateKey(request.key)
        const contentType = yield* validateContentType(request.contentType)
        const expiresAt = yield* validateExpiresAt(request.expiresAt)
        const sizeBytes = request.sizeBytes
        if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return yield* fail(`invalid sizeBytes ${sizeBytes}`)
        if (sizeBytes > MAX_OBJECT_SIZE) return yield* fail(`sizeBytes ${sizeBytes} is over S3's 5 TiB`)
        if (request.partSize === undefined) {
          if (sizeBytes > MAX_PART_SIZE) return yield* fail(`one PUT holds at most 5 GiB, not ${sizeBytes} bytes`)
          // Content-Type and Content-Length are signed: another type or length gets 403.
          const url = yield* presign(`sign PUT ${objectName(key)}`, expiresAt, (signing) =>
            getSignedUrl(
              client,
              new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: contentType, ContentLength: sizeBytes }),
              { ...signing, signableHeaders: new Set(PUT_SIGNED_HEADERS) }
            ))
          // Content-Length is not listed: every HTTP client sends its body's own length (which the
          // signature pins to sizeBytes), and fetch refuses a Content-Length contradicting the body.
          const target: UploadTarget = { _tag: "Put", url, headers: { "Content-Type": contentType } }
          return target
        }
        const partSize = request.partSize
        if (!Number.isSafeInteger(partSize) || partSize <= 0 || partSize > MAX_PART_SIZE) {
          return yield* fail(`invalid partSize ${partSize}`)
        }
        const partCount = Math.max(1, Math.ceil(sizeBytes / partSize))
        if (partCount > MAX_PARTS) return yield* fail(`${partCount} parts: more than S3's ${MAX_PARTS}`)
        if (partCount > 1 && partSize < MIN_PART_SIZE) {
          return yield* fail(`partSize ${partSize} is under S3's minimum part size (${MIN_PART_SIZE} bytes)`)
        }
        const uploadId = yield* createMultipartUpload(key, contentType)
        // Each part URL signs the part's exact Content-Length (its share of sizeBytes): a longer or
        // shorter part is refused (403), so the assembled object can never exceed sizeBytes. A
        // bounded size cannot be signed: those parts are checked by the caller once assembled.
        const exact = request.sizeIsMaximum !== true
        const parts = yield* Effect.forEach(
          Array.from({ length: partCount }, (_, i) => i + 1),
          (partNumber) =>
            presign(`sign part ${partNumber} of ${objectName(key)}`, expiresAt, (signing) =>
              getSignedUrl(
                client,
                new UploadPartCommand({
                  Bucket: bucket,
                  Key: key,
                  UploadId: uploadId,
                  PartNumber: partNumber,
                  ...(exact ? { ContentLength: Math.min(partSize, sizeBytes - (partNumber - 1) * partSize) } : {})
                }),
                exact ? { ...signing, signableHeaders: new Set(["content-length"]) } : signing
              )).pipe(Effect.map((url) => ({ partNumber, url })))
        ).pipe(Effect.tapError(() => Effect.ignore(abortUpload(key, uploadId))))
        const target: UploadTarget = { _tag: "Multipart", uploadId, parts }
        return target
      })

    const completeMultipart: BlobStore["Type"]["completeMultipart"] = (request) =>
      Effect.gen(function*() {
        const key = yield* validateKey(request.key)
        const uploadId = yield* validateUploadId(request.uploadId)
        if (request.parts.length === 0) return yield* fail("a multipart upload needs at least one part")
        if (request.parts.length > MAX_PARTS) return yield* fail(`more than ${MAX_PARTS} parts`)
        const sorted = [...request.parts].sort((a, b) => a.partNumber - b.partNumber)
        const parts: Array<{ readonly PartNumber: number; readonly ETag: string }> = []
        for (let i = 0; i < sorted.length; i++) {
          const { etag, partNumber } = sorted[i]
          if (!Number.isSafeInteger(partNumber) || partNumber < 1 || partNumber > MAX_PARTS) {
            return yield* fail(`invalid part number ${partNumber}`)
          }
          if (i > 0 && sorted[i - 1].partNumber === partNumber) return yield* fail(`part ${partNumber} listed twice`)
          const normalized = normalizeEtag(etag)
          if (normalized === undefined) return yield* fail(`part ${partNumber}: invalid ETag ${JSON.stringify(etag)}`)
          parts.push({ PartNumber: partNumber, ETag: normalized })
        }
        // S3 refuses unknown parts or ETags (InvalidPart), small parts (EntityTooSmall) and a
        // completed or aborted upload (NoSuchUpload); after a refusal the upload stays open.
        yield* completeUpload(key, uploadId, parts)
      })

    const abortMultipart: BlobStore["Type"]["abortMultipart"] = (request) =>
      Effect.gen(function*() {
        const key = yield* validateKey(request.key)
        const uploadId = yield* validateUploadId(request.uploadId)
        yield* abortUpload(key, uploadId)
      })

    const stat: BlobStore["Type"]["stat"] = (key) =>
      Effect.gen(function*() {
        const valid = yield* validateKey(key)
        return yield* attempt((abortSignal) =>
          client.send(new HeadObjectCommand({ Bucket: bucket, Key: valid }), { abortSignal })
        ).pipe(
          Effect.catchAll((cause) =>
            isNotFound(sdkErrorInfo(cause))
              ? Effect.succeed(undefined)
              : Effect.fail(toBlobError(`stat ${objectName(valid)}`, cause))
          ),
          Effect.flatMap((head) =>
            head === undefined ? Effect.succeed(Option.none()) : Effect.map(contentLengthOf(head, `stat ${objectName(valid)}`), (sizeBytes) => Option.some({ sizeBytes })))
        )
      })

    const read: BlobStore["Type"]["read"] = (key) =>
      Stream.unwrapScoped(
        Effect.gen(function*() {
          const valid = yield* validateKey(key)
          const what = `read ${objectName(valid)}`
          const object = yield* attempt((abortSignal) =>
            reader.send(new GetObjectCommand({ Bucket: bucket, Key: valid }), { abortSignal })
          ).pipe(
            Effect.mapError((cause) => {
              const info = sdkErrorInfo(cause)
              return isNotFound(info)
                ? new BlobError({ message: `no object ${JSON.stringify(valid)}`, cause: info })
                : toBlobError(what, cause)
            })
          )
          // In Node the SDK's body is the response (an IncomingMessage): streamed, never gathered.
          const body = object.Body
          if (!(body instanceof Readable)) return yield* fail(`${what}: the SDK gave no Node stream`)
          // However the stream ends (done, failed, or dropped early), the response is destroyed.
          yield* Effect.addFinalizer(() => Effect.sync(() => body.destroy()))
          return NodeStream.fromReadable<BlobError>(() => body, (cause) => toBlobError(what, cause))
        })
      )

    const write: BlobStore["Type"]["write"] = (key, body, writeOptions) =>
      Effect.gen(function*() {
        const valid = yield* validateKey(key)
        const contentType = yield* validateContentType(writeOptions.contentType)
        const name = objectName(valid)
        // Bytes not sent yet: at most one part plus one incoming chunk.
        const pending: Array<Uint8Array> = []
        let pendingBytes = 0
        let total = 0
        let uploadId: string | undefined
        const parts: Array<{ readonly PartNumber: number; readonly ETag: string }> = []

        /** The first `n` pending bytes, copied into one buffer. */
        const take = (n: number): Buffer => {
          const out = Buffer.allocUnsafe(n)
          let offset = 0
          while (offset < n) {
            const head = pending[0]
            const need = n - offset
            if (head.byteLength <= need) {
              out.set(head, offset)
              offset += head.byteLength
              pending.shift()
            } else {
              out.set(head.subarray(0, need), offset)
              pending[0] = head.subarray(need)
              offset += need
            }
          }
          pendingBytes -= n
          return out
        }

        const sendPart = (bytes: Buffer) =>
          Effect.gen(function*() {
            if (uploadId === undefined) uploadId = yield* createMultipartUpload(valid, contentType)
            const id = uploadId
            const partNumber = parts.length + 1
            if (partNumber > MAX_PARTS) return yield* fail(`write ${name}: more than ${MAX_PARTS} parts`)
            const answer = yield* call(
              `upload part ${partNumber} of ${name}`,
              (abortSignal) =>
                client.send(
                  new UploadPartCommand({
                    Bucket: bucket,
                    Key: valid,
                    UploadId: id,
                    PartNumber: partNumber,
                    Body: bytes,
                    ContentLength: bytes.byteLength
                  }),
                  { abortSignal }
                )
            )
            if (answer.ETag === undefined) return yield* fail(`upload part ${partNumber} of ${name}: no ETag`)
            parts.push({ PartNumber: partNumber, ETag: answer.ETag })
          })

        const consume = Stream.runForEachChunk(body, (chunk) =>
          Effect.gen(function*() {
            for (const piece of Chunk.toReadonlyArray(chunk)) {
              if (piece.byteLength === 0) continue
              pending.push(piece)
              pendingBytes += piece.byteLength
              total += piece.byteLength
            }
            if (total > MAX_OBJECT_SIZE) return yield* fail(`write ${name}: over S3's 5 TiB`)
            while (pendingBytes >= writePartSize) yield* sendPart(take(writePartSize))
          }))

        const finish = Effect.suspend((): Effect.Effect<unknown, BlobError> => {
          if (uploadId === undefined) {
            // The whole body fitted in one part: one PutObject.
            const bytes = take(pendingBytes)
            return call(
              `put ${name}`,
              (abortSignal) =>
                client.send(
                  new PutObjectCommand({
                    Bucket: bucket,
                    Key: valid,
                    Body: bytes,
                    ContentLength: bytes.byteLength,
                    ContentType: contentType
                  }),
                  { abortSignal }
                )
            )
          }
          const id = uploadId
          return Effect.zipRight(
            pendingBytes > 0 ? sendPart(take(pendingBytes)) : Effect.void,
            Effect.suspend(() => completeUpload(valid, id, parts))
          )
        })

        yield* Effect.zipRight(consume, finish).pipe(
          // A failed or interrupted write leaves no multipart upload behind (nor its parts' bytes).
          Effect.onExit((exit) =>
            Exit.isFailure(exit) && uploadId !== undefined
              ? abortUpload(valid, uploadId).pipe(
                Effect.catchAll((error) =>
                  Effect.logWarning(`write ${name}: could not abort its multipart upload`, error.message)
                )
              )
              : Effect.void
          )
        )
        return { sizeBytes: total }
      })

    const signDownload: BlobStore["Type"]["signDownload"] = (request) =>
      Effect.gen(function*() {
        const key = yield* validateKey(request.key)
        const contentType = yield* validateContentType(request.contentType)
        const expiresAt = yield* validateExpiresAt(request.expiresAt)
        const filename = request.filename
        // eslint-disable-next-line no-control-regex
        if (filename.length === 0 || filename.length > 1024 || /[\u0000-\u001f\u007f]/.test(filename)) {
          return yield* fail(`invalid download filename ${JSON.stringify(filename)}`)
        }
        // The response-content-* overrides are query parameters, so the signature covers them.
        return yield* presign(`sign GET ${objectName(key)}`, expiresAt, (signing) =>
          getSignedUrl(
            client,
            new GetObjectCommand({
              Bucket: bucket,
              Key: key,
              ResponseContentDisposition: contentDisposition(filename),
              ResponseContentType: contentType
            }),
            signing
          ))
      })

    /** `x-amz-copy-source`: the bucket and the key, each path segment URL-encoded. */
    const copySource = (key: string) => `${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`

    /** A copy too large for CopyObject: a multipart upload of UploadPartCopy ranges; aborted on failure. */
    const copyInParts = (from: string, to: string, sizeBytes: number, contentType: string | undefined) =>
      Effect.gen(function*() {
        const name = `copy ${objectName(from)} to ${objectName(to)}`
        const partSize = Math.max(copyPartSize, Math.ceil(sizeBytes / MAX_PARTS))
        const uploadId = yield* createMultipartUpload(to, contentType ?? "application/octet-stream")
        const partCount = Math.ceil(sizeBytes / partSize)
        yield* Effect.forEach(
          Array.from({ length: partCount }, (_, i) => i + 1),
          (partNumber) => {
            const first = (partNumber - 1) * partSize
            const last = Math.min(sizeBytes, first + partSize) - 1
            return call(`${name}: part ${partNumber}`, (abortSignal) =>
              client.send(
                new UploadPartCopyCommand({
                  Bucket: bucket,
                  Key: to,
                  UploadId: uploadId,
                  PartNumber: partNumber,
                  CopySource: copySource(from),
                  CopySourceRange: `bytes=${first}-${last}`
                }),
                { abortSignal }
              )).pipe(Effect.flatMap((answer) => {
                const etag = answer.CopyPartResult?.ETag
                return etag === undefined
                  ? fail(`${name}: part ${partNumber}: no ETag`)
                  : Effect.succeed({ PartNumber: partNumber, ETag: etag })
              }))
          }
        ).pipe(
          Effect.flatMap((parts) => completeUpload(to, uploadId, parts)),
          // a failed copy leaves no multipart upload (nor its parts' bytes) behind
          Effect.tapError(() => Effect.ignore(abortUpload(to, uploadId)))
        )
      })

    const move: BlobStore["Type"]["move"] = (request) =>
      Effect.gen(function*() {
        const from = yield* validateKey(request.from)
        const to = yield* validateKey(request.to)
        const name = `move ${objectName(from)} to ${objectName(to)}`
        const head = yield* attempt((abortSignal) =>
          client.send(new HeadObjectCommand({ Bucket: bucket, Key: from }), { abortSignal })
        ).pipe(
          Effect.mapError((cause) =>
            isNotFound(sdkErrorInfo(cause))
              ? new BlobError({ message: `${name}: no object ${JSON.stringify(from)}` })
              : toBlobError(name, cause)
          )
        )
        const sizeBytes = yield* contentLengthOf(head, name)
        if (sizeBytes <= singleCopyMax) {
          yield* call(name, (abortSignal) =>
            client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: copySource(from) }), { abortSignal }))
        } else {
          yield* copyInParts(from, to, sizeBytes, head.ContentType)
        }
        yield* delete_(from)
        return { sizeBytes }
      })

    const list: BlobStore["Type"]["list"] = (prefix) =>
      Stream.paginateChunkEffect(undefined as string | undefined, (token) =>
        call(`list ${objectName(prefix)}*`, (abortSignal) =>
          client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token === undefined ? {} : { ContinuationToken: token }) }),
            { abortSignal }
          )).pipe(Effect.map((page) => {
            const objects = (page.Contents ?? []).flatMap((object) =>
              object.Key === undefined ? [] : [{
                key: object.Key,
                sizeBytes: object.Size ?? 0,
                modifiedAt: object.LastModified?.getTime() ?? 0
              }]
            )
            const next = page.IsTruncated === true && page.NextContinuationToken !== undefined
              ? Option.some(page.NextContinuationToken)
              : Option.none()
            return [Chunk.fromIterable(objects), next] as const
          })))

    const delete_: BlobStore["Type"]["delete"] = (key) =>
      Effect.gen(function*() {
        const valid = yield* validateKey(key)
        // S3 answers 204 for a missing key; some compatible stores say NoSuchKey.
        yield* attempt((abortSignal) =>
          client.send(new DeleteObjectCommand({ Bucket: bucket, Key: valid }), { abortSignal })
        ).pipe(
          Effect.asVoid,
          Effect.catchAll((cause) =>
            isNotFound(sdkErrorInfo(cause)) ? Effect.void : Effect.fail(toBlobError(`delete ${objectName(valid)}`, cause))
          )
        )
      })

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
 * A BlobStore on an S3 bucket (AWS S3 or a compatible store). Credentials are looked up (and
 * their absence reported as a BlobError) when a request is made or a URL signed.
 */
export const layerS3BlobStore = (options: S3Options): Layer.Layer<BlobStore> => Layer.scoped(BlobStore, make(options))

/** The S3 BlobStore configured from the environment (see `S3Config`). */
export const layerFromEnv: Layer.Layer<BlobStore, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(S3Config, layerS3BlobStore)
)
