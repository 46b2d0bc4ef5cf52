import { Context, Data, Effect, Option, Stream } from "effect"

/** A storage fault or a refused object operation; never a client error by itself. */
export class BlobError extends Data.TaggedError("BlobError")<{
  readonly message: string
  readonly cause?: unknown
  /**
   * The store did not answer, or answered that it cannot now (a network failure, a timeout,
   * 5xx, throttling): worth another try later (core/ports/unavailable.ts), unlike a refusal.
   */
  readonly unavailable?: boolean | undefined
}> {}

export type UploadTarget =
  | {
    readonly _tag: "Put"
    readonly url: string
    /** Headers the client must send with the PUT (they are part of the signature). */
    readonly headers: Readonly<Record<string, string>>
  }
  | {
    readonly _tag: "Multipart"
    readonly uploadId: string
    readonly parts: ReadonlyArray<{ readonly partNumber: number; readonly url: string }>
  }

export interface CreateUploadRequest {
  readonly key: string
  readonly contentType: string
  readonly sizeBytes: number
  readonly expiresAt: number
  /** Present for a multipart upload. */
  readonly partSize?: number | undefined
  /**
   * `sizeBytes` is an upper bound, not the exact size (default: exact). For a multipart upload
   * whose writer learns the size only as it goes (a GPU host's output): its part URLs then bound
   * each part's length where the store can (local disk) instead of pinning it; S3 cannot bound a
   * presigned part, so the caller checks the assembled size. Never for a client's upload.
   */
  readonly sizeIsMaximum?: boolean | undefined
}

/** One object of a listing. */
export interface ListedObject {
  readonly key: string
  readonly sizeBytes: number
  /** When the object was last written, epoch milliseconds. */
  readonly modifiedAt: number
}

/**
 * Object storage. Clients write through upload targets into a staging key; `move` then puts the
 * bytes under the key the service reads, where no upload URL reaches (docs/security.md).
 */
export class BlobStore extends Context.Tag("hush/BlobStore")<BlobStore, {
  /**
   * Signed URLs that write `request.key` (PUT: exactly `sizeBytes`; multipart: each part exactly
   * its share of `sizeBytes`, unless `sizeIsMaximum`). They stop working at `expiresAt`, and on stores that can refuse
   * bytes (local disk) once the key is moved or deleted; on S3 later bytes land in the key only.
   */
  readonly createUpload: (request: CreateUploadRequest) => Effect.Effect<UploadTarget, BlobError>
  readonly completeMultipart: (request: {
    readonly key: string
    readonly uploadId: string
    readonly parts: ReadonlyArray<{ readonly partNumber: number; readonly etag: string }>
  }) => Effect.Effect<void, BlobError>
  readonly abortMultipart: (request: { readonly key: string; readonly uploadId: string }) => Effect.Effect<void, BlobError>
  /** The stored size, or None when no object exists under the key. */
  readonly stat: (key: string) => Effect.Effect<Option.Option<{ readonly sizeBytes: number }>, BlobError>
  /** Streams the object's bytes; never loads it whole. */
  readonly read: (key: string) => Stream.Stream<Uint8Array, BlobError>
  readonly write: (
    key: string, body: Stream.Stream<Uint8Array, BlobError>, options: { readonly contentType: string }
  ) => Effect.Effect<{ readonly sizeBytes: number }, BlobError>
  /** A signed GET that answers with `Content-Disposition: attachment; filename=…`. */
  readonly signDownload: (request: {
    readonly key: string
    readonly filename: string
    readonly contentType: string
    readonly expiresAt: number
  }) => Effect.Effect<string, BlobError>
  /**
   * Moves an object to another key inside the store (local disk: a rename; S3: a server-side
   * copy, then the source is deleted) and closes the uploads that wrote `from`. Fails when `from`
   * holds no object. Answers the size of the object now under `to`.
   */
  readonly move: (request: { readonly from: string; readonly to: string }) => Effect.Effect<{ readonly sizeBytes: number }, BlobError>
  /** The objects whose keys start with `prefix`, in any order. */
  readonly list: (prefix: string) => Stream.Stream<ListedObject, BlobError>
  /** Idempotent: deleting a missing object succeeds. Closes the uploads that wrote `key`. */
  readonly delete: (key: string) => Effect.Effect<void, BlobError>
}>() {}
