import { Schema } from "effect"
import { FileStatus, Mode } from "../domain/enums.js"
import { constant, Text, Timestamp } from "./common.js"

export const FileError = Schema.Struct({
  code: Schema.String,
  message: Schema.String
}).annotations({ identifier: "FileError" })
export type FileError = typeof FileError.Type

export class File extends Schema.Class<File>("File")({
  id: Schema.String,
  object: constant("file"),
  filename: Schema.String,
  content_type: Schema.String,
  size_bytes: Schema.Int,
  status: FileStatus,
  duration_seconds: Schema.NullOr(Schema.Number),
  /** Set when the file is rejected. */
  error: Schema.NullOr(FileError),
  mode: Mode,
  created_at: Timestamp,
  ready_at: Schema.NullOr(Timestamp),
  expires_at: Schema.NullOr(Timestamp)
}) {}

/**
 * Body of `POST /v1/files`. Whether `content_type` is an accepted audio type is not checked
 * here: that is `415 unsupported_media_type`, not `invalid_request`; likewise a size over
 * the limits is `413 file_too_large`.
 */
export const CreateIn = Schema.Struct({
  filename: Text.pipe(Schema.minLength(1), Schema.maxLength(1024)),
  size_bytes: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  content_type: Text.pipe(Schema.minLength(1), Schema.maxLength(255))
}).annotations({ identifier: "CreateIn" })
export type CreateIn = typeof CreateIn.Type

export const PutUpload = Schema.Struct({
  method: Schema.Literal("PUT"),
  url: Schema.String,
  /** To be sent with the PUT; they are part of the signature. */
  headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  expires_at: Timestamp
}).annotations({ identifier: "PutUpload" })
export type PutUpload = typeof PutUpload.Type

export const UploadPart = Schema.Struct({
  part_number: Schema.Int,
  url: Schema.String
}).annotations({ identifier: "UploadPart" })
export type UploadPart = typeof UploadPart.Type

export const MultipartUpload = Schema.Struct({
  method: Schema.Literal("multipart"),
  part_size: Schema.Int,
  parts: Schema.Array(UploadPart),
  expires_at: Timestamp
}).annotations({ identifier: "MultipartUpload" })
export type MultipartUpload = typeof MultipartUpload.Type

export const Upload = Schema.Union(PutUpload, MultipartUpload)
export type Upload = typeof Upload.Type

export class CreateOut extends Schema.Class<CreateOut>("CreateOut")({
  id: Schema.String,
  status: FileStatus,
  upload: Schema.NullOr(Upload)
}) {}

export const CompletedPart = Schema.Struct({
  part_number: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  etag: Text
}).annotations({ identifier: "CompletedPart" })
export type CompletedPart = typeof CompletedPart.Type

/** Body of `POST /v1/files/{file_id}/complete`; the body itself may also be absent or null. */
export const CompleteIn = Schema.Struct({
  parts: Schema.optional(Schema.NullOr(Schema.Array(CompletedPart)))
}).annotations({ identifier: "CompleteIn" })
export type CompleteIn = typeof CompleteIn.Type
