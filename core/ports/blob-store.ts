import { Context, Data, Effect, Option, Stream } from "effect"

/** A storage fault or a refused object operation; never a client error by itself. */
export class BlobError extends Data.TaggedError("BlobError")<{
  readonly message: string
  readonly cause?: unknown
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
}

export class BlobStore extends Context.Tag("hush/BlobStore")<BlobStore, {
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
  /** Idempotent: deleting a missing object succeeds. */
  readonly delete: (key: string) => Effect.Effect<void, BlobError>
}>() {}
