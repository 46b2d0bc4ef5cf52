import { Schema } from "effect"
import { FileStatus, Mode } from "../domain/enums.js"
import { constant, field, Text, Timestamp } from "./common.js"

export const FileError = Schema.Struct({
  code: field(Schema.String, "Why the file was rejected: `invalid_audio` when the upload could not be decoded as audio."),
  message: field(Schema.String, "A readable explanation of the rejection.")
}).annotations({ identifier: "FileError", description: "Why a file was rejected." })
export type FileError = typeof FileError.Type

export const fileIdDescription = "The file's id (`file_…`), as `POST /v1/files` answered it."

export class File extends Schema.Class<File>("File")({
  id: field(Schema.String, "The file's id (`file_…`)."),
  object: constant("file"),
  filename: field(Schema.String, "The name given at creation; a job's output is named after it (`interview.wav` → `interview.denoised.mp3`)."),
  content_type: field(Schema.String, "The media type given at creation, e.g. `audio/wav`."),
  size_bytes: field(Schema.Int, "The size declared at creation, in bytes; the upload must have exactly this size."),
  status: field(
    FileStatus,
    "`uploading` (waiting for the bytes and the complete call), `validating` (being decoded), `ready` (usable by jobs) or `rejected` (see `error`)."
  ),
  duration_seconds: field(Schema.NullOr(Schema.Number), "The decoded audio's length in seconds; null until the file is ready."),
  error: field(Schema.NullOr(FileError), "Set when the file is rejected; null otherwise."),
  mode: field(Mode, "`live` or `test`: the mode of the key that created it. Only keys of that mode see the file."),
  created_at: field(Timestamp, "When the file was created (ISO 8601, UTC)."),
  ready_at: field(Schema.NullOr(Timestamp), "When validation succeeded; null until then."),
  expires_at: field(
    Schema.NullOr(Timestamp),
    "When the file goes: while `uploading`, the end of its 6-hour upload window; once `ready`, 7 days after `ready_at` (the input is deleted); once `rejected`, 24 hours later."
  )
}, { description: "An uploaded audio file: the input of denoise jobs." }) {}

/**
 * Body of `POST /v1/files`. Whether `content_type` is an accepted audio type is not checked
 * here: that is `415 unsupported_media_type`, not `invalid_request`; likewise a size over
 * the limits is `413 file_too_large`.
 */
export const CreateIn = Schema.Struct({
  filename: field(Text.pipe(Schema.minLength(1), Schema.maxLength(1024)), "The file's name, 1 to 1,024 characters; the output is named after it."),
  size_bytes: field(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
    "The exact size of the bytes you will upload. At most 5 GiB (5,368,709,120) with a live key, 25 MiB (26,214,400) with a test key. Up to 100 MiB gets one PUT, larger a multipart upload."
  ),
  content_type: field(
    Text.pipe(Schema.minLength(1), Schema.maxLength(255)),
    "The file's media type: any `audio/*` type, or `video/mp4`, `video/quicktime`, `video/webm`, `video/x-matroska`, `application/ogg`. Others are refused (415)."
  )
}).annotations({ identifier: "CreateIn", description: "A file to create: its name, size and type." })
export type CreateIn = typeof CreateIn.Type

const uploadExpiry = field(Timestamp, "The end of the upload window (6 hours after creation): complete the file before then.")

export const PutUpload = Schema.Struct({
  method: field(Schema.Literal("PUT"), "Send the whole file in one `PUT` request to `url`."),
  url: field(Schema.String, "The signed upload URL. It accepts the file's bytes only while the file is `uploading`."),
  headers: field(
    Schema.Record({ key: Schema.String, value: Schema.String }),
    "Headers to send with the PUT, exactly as given: they are part of the signature (the content type and length)."
  ),
  expires_at: uploadExpiry
}).annotations({ identifier: "PutUpload", description: "A single-request upload (files up to 100 MiB)." })
export type PutUpload = typeof PutUpload.Type

export const UploadPart = Schema.Struct({
  part_number: field(Schema.Int, "The part's number, from 1."),
  url: field(Schema.String, "The signed URL to `PUT` this part's bytes to; keep the `ETag` it answers for the complete call.")
}).annotations({ identifier: "UploadPart", description: "One part of a multipart upload." })
export type UploadPart = typeof UploadPart.Type

export const MultipartUpload = Schema.Struct({
  method: field(Schema.Literal("multipart"), "Send the file in parts, one `PUT` per part URL."),
  part_size: field(Schema.Int, "The size of every part but the last, in bytes (64 MiB: 67,108,864)."),
  parts: field(Schema.Array(UploadPart), "One URL per part, in order: ⌈size_bytes ÷ part_size⌉ of them."),
  expires_at: uploadExpiry
}).annotations({ identifier: "MultipartUpload", description: "An upload in 64 MiB parts (files over 100 MiB)." })
export type MultipartUpload = typeof MultipartUpload.Type

export const Upload = Schema.Union(PutUpload, MultipartUpload)
export type Upload = typeof Upload.Type

export class CreateOut extends Schema.Class<CreateOut>("CreateOut")({
  id: field(Schema.String, "The new file's id (`file_…`)."),
  status: field(FileStatus, "`uploading`: the file waits for its bytes."),
  upload: field(Schema.NullOr(Upload), "Where and how to send the bytes: a single PUT (`method: PUT`) or parts (`method: multipart`).")
}, { description: "A created file and its upload target." }) {}

export const CompletedPart = Schema.Struct({
  part_number: field(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), "The part's number, from 1, as in `upload.parts`."),
  etag: field(Text, "The `ETag` header the part's PUT answered.")
}).annotations({ identifier: "CompletedPart", description: "A part that was uploaded." })
export type CompletedPart = typeof CompletedPart.Type

/** Body of `POST /v1/files/{file_id}/complete`; the body itself may also be absent or null. */
export const CompleteIn = Schema.Struct({
  parts: Schema.optional(Schema.NullOr(Schema.Array(CompletedPart))).annotations({
    description: "For a multipart upload: every part with its ETag. Omit it (or send no body) for a PUT upload."
  })
}).annotations({ identifier: "CompleteIn", description: "What was uploaded: nothing to say for a PUT upload, the parts for a multipart one." })
export type CompleteIn = typeof CompleteIn.Type
