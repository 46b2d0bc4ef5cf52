/**
 * The life of an uploaded file: `uploading` → `validating` → `ready` | `rejected`.
 * Pure functions; services persist what they return.
 */
import { Either } from "effect"
import type { Limits } from "../domain/limits.js"
import type { Mode } from "../domain/enums.js"
import type { AudioRejected, DeclaredDurationVerdict } from "../ports/audio.js"
import { FileErrorRecord, FileRecord } from "../domain/records.js"
import { excerpt, FileInUse, FileNotReady, FileTooLarge, UnsupportedMediaType, UploadExpired } from "../errors.js"
import { isAcceptedAudioType } from "./content-types.js"

export type UploadPlan =
  | { readonly _tag: "Put" }
  | { readonly _tag: "Multipart"; readonly partSize: number; readonly partCount: number }

/** PUT up to `putMaxBytes`, else multipart in parts of `multipartPartBytes`. */
export const planUpload = (sizeBytes: number, limits: Limits): UploadPlan =>
  sizeBytes <= limits.putMaxBytes
    ? { _tag: "Put" }
    : {
      _tag: "Multipart",
      partSize: limits.multipartPartBytes,
      partCount: Math.ceil(sizeBytes / limits.multipartPartBytes)
    }

export const maxFileBytes = (mode: Mode, limits: Limits): number =>
  mode === "test" ? limits.testMaxFileBytes : limits.liveMaxFileBytes

/** The checks of `POST /v1/files` on the request itself: media type, then size. */
export const checkNewFile = (
  request: { readonly contentType: string; readonly sizeBytes: number },
  mode: Mode,
  limits: Limits
): Either.Either<void, UnsupportedMediaType | FileTooLarge> => {
  if (!isAcceptedAudioType(request.contentType)) {
    return Either.left(new UnsupportedMediaType({
      detail: `content_type '${excerpt(request.contentType)}' is not an accepted audio type (audio/*, video/mp4, video/quicktime, video/webm, video/x-matroska, application/ogg)`
    }))
  }
  const max = maxFileBytes(mode, limits)
  if (request.sizeBytes > max) {
    return Either.left(new FileTooLarge({
      detail: `size_bytes ${request.sizeBytes} is over the ${mode} limit of ${max} bytes`
    }))
  }
  return Either.void
}

/**
 * `POST …/complete`: `uploading` within the window → `validating`. A file already past
 * uploading is answered as it is, so a retried complete is harmless.
 */
export const completeUpload = (file: FileRecord, now: number): Either.Either<FileRecord, UploadExpired> => {
  if (file.status !== "uploading") return Either.right(file)
  if (now >= file.uploadExpiresAt) {
    return Either.left(new UploadExpired({
      detail: `the upload window of file ${file.id} closed at ${new Date(file.uploadExpiresAt).toISOString()}; create a new file`
    }))
  }
  return Either.right(FileRecord.copy(file, { status: "validating", completedAt: now }))
}

export const markReady = (file: FileRecord, durationSeconds: number, now: number): FileRecord =>
  file.status === "validating"
    ? FileRecord.copy(file, { status: "ready", durationSeconds, readyAt: now, error: null })
    : file

/**
 * What a rejected file says publicly: one fixed message per reason. The decoder's own words
 * (ffmpeg's stderr) go to the logs only (docs/security.md).
 */
export const AUDIO_REJECTION_MESSAGES: Readonly<Record<Exclude<AudioRejected["reason"], "too_long">, string>> = {
  undecodable: "the file could not be decoded as audio in an accepted format",
  no_audio: "the file contains no audio stream",
  empty: "the file holds no audio samples",
  timeout: "decoding the file took longer than allowed"
}

export const audioRejectionMessage = (reason: AudioRejected["reason"], limits: Limits): string =>
  reason === "too_long"
    ? `the file declares more than ${limits.maxAudioSeconds} s of audio, the longest any job accepts; it was not decoded`
    : AUDIO_REJECTION_MESSAGES[reason]

/**
 * The decoder budget of one upload (docs/security.md, "Decoding untrusted files"). A header that
 * declares more audio than any job accepts is refused before a decoder spends anything on it:
 * the same bytes would end `rejected` anyway, after the whole time limit, and a `ready` verdict
 * needs the decoded duration (decisions.md). Otherwise the declared length buys time in
 * proportion, never more than the mode's limit; a header declaring too little gets the file
 * rejected when its decode overruns, never a longer budget.
 */
export const declaredDurationVerdict = (file: { readonly mode: Mode; readonly sizeBytes: number }, limits: Limits): DeclaredDurationVerdict =>
  (declaredSeconds) => {
    if (declaredSeconds > limits.maxAudioSeconds) return "too_long"
    const { floorMs, perAudioSecondMs, perMiBMs } = limits.validationBudget
    const budget = floorMs + declaredSeconds * perAudioSecondMs + (file.sizeBytes / (1024 * 1024)) * perMiBMs
    return Math.min(limits.validationTimeLimitMs[file.mode], Math.ceil(budget))
  }

export const markRejected = (file: FileRecord, message: string, now: number): FileRecord =>
  file.status === "validating"
    ? FileRecord.copy(file, {
      status: "rejected",
      rejectedAt: now,
      error: new FileErrorRecord({ code: "invalid_audio", message })
    })
    : file

/** decisions.md: uploading → end of window; ready → 7 days after ready; rejected → 24 h after. */
export const fileExpiresAt = (file: FileRecord, limits: Limits): number | null => {
  switch (file.status) {
    case "uploading":
      return file.uploadExpiresAt
    case "validating":
      return null
    case "ready":
      return file.readyAt === null ? null : file.readyAt + limits.readyRetentionMs
    case "rejected":
      return file.rejectedAt === null ? null : file.rejectedAt + limits.rejectedRetentionMs
  }
}

/** A job may only name a ready file. */
export const requireReady = (file: FileRecord): Either.Either<FileRecord, FileNotReady> => {
  if (file.status === "ready") return Either.right(file)
  const why = file.status === "rejected"
    ? "was rejected" + (file.error ? `: ${file.error.message}` : "")
    : `is still ${file.status}`
  return Either.left(new FileNotReady({ detail: `file ${file.id} ${why}` }))
}

export const checkDeletable = (file: FileRecord, activeJobs: number): Either.Either<void, FileInUse> =>
  activeJobs > 0
    ? Either.left(new FileInUse({ detail: `file ${file.id} is used by ${activeJobs} queued or processing job(s)` }))
    : Either.void
