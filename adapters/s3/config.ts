import { Config, ConfigError, Either, Option, Redacted } from "effect"

/** Static credentials; without them the SDK's standard provider chain is used. */
export interface S3Credentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string | Redacted.Redacted<string>
  readonly sessionToken?: string | Redacted.Redacted<string> | undefined
}

export interface S3Options {
  readonly bucket: string
  /** e.g. `https://<account>.r2.cloudflarestorage.com`; absent for AWS S3 itself. */
  readonly endpoint?: string | undefined
  readonly region: string
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key`. */
  readonly forcePathStyle: boolean
  readonly credentials?: S3Credentials | undefined
  /**
   * Part size used by `write` once a body outgrows one part (default 8 MiB, at least 5 MiB).
   * `write` holds at most one part (plus one incoming chunk) in memory.
   */
  readonly writePartSizeBytes?: number | undefined
  /**
   * `move` copies an object up to this size with one CopyObject (default and most 5 GiB, S3's
   * limit), a larger one as a multipart upload of UploadPartCopy ranges of `copyPartSizeBytes`
   * (default 1 GiB, at least 5 MiB). Tests lower both to exercise the multipart copy.
   */
  readonly singleCopyMaxBytes?: number | undefined
  readonly copyPartSizeBytes?: number | undefined
}

/** S3's smallest part (every part but the last). */
export const MIN_PART_SIZE = 5 * 1024 * 1024
/** S3's largest part. */
export const MAX_PART_SIZE = 5 * 1024 * 1024 * 1024
/** S3's largest object. */
export const MAX_OBJECT_SIZE = 5 * 1024 * 1024 * 1024 * 1024
/** S3's most parts in one multipart upload. */
export const MAX_PARTS = 10_000
/** SigV4 presigned URLs live at most 7 days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600
export const DEFAULT_WRITE_PART_SIZE = 8 * 1024 * 1024
export const DEFAULT_COPY_PART_SIZE = 1024 * 1024 * 1024

const invalid = (path: string, message: string) => ConfigError.InvalidData([path], message)

const validEndpoint = (value: string): boolean => {
  try {
    const url = new URL(value)
    return (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === ""
  } catch {
    return false
  }
}

/**
 * The S3 settings from the environment:
 * `S3_BUCKET` (required), `S3_ENDPOINT` (optional), `S3_REGION` (default `us-east-1`),
 * `S3_FORCE_PATH_STYLE` (default false), and optionally `S3_ACCESS_KEY_ID` + `S3_SECRET_ACCESS_KEY`
 * (+ `S3_SESSION_TOKEN`); without them the SDK's standard credential chain applies
 * (`AWS_ACCESS_KEY_ID`…, `AWS_PROFILE`, SSO, web identity, ECS/EC2 roles).
 */
export const S3Config: Config.Config<S3Options> = Config.all({
  bucket: Config.string("S3_BUCKET"),
  endpoint: Config.option(Config.string("S3_ENDPOINT")),
  region: Config.withDefault(Config.string("S3_REGION"), "us-east-1"),
  forcePathStyle: Config.withDefault(Config.boolean("S3_FORCE_PATH_STYLE"), false),
  accessKeyId: Config.option(Config.string("S3_ACCESS_KEY_ID")),
  secretAccessKey: Config.option(Config.redacted("S3_SECRET_ACCESS_KEY")),
  sessionToken: Config.option(Config.redacted("S3_SESSION_TOKEN"))
}).pipe(
  Config.mapOrFail((raw): Either.Either<S3Options, ConfigError.ConfigError> => {
    const bucket = raw.bucket.trim()
    if (bucket.length === 0) return Either.left(invalid("S3_BUCKET", "must not be empty"))
    const endpoint = Option.getOrUndefined(Option.filter(Option.map(raw.endpoint, (e) => e.trim()), (e) => e !== ""))
    if (endpoint !== undefined && !validEndpoint(endpoint)) {
      return Either.left(invalid("S3_ENDPOINT", "must be an http(s) URL without query or fragment"))
    }
    const region = raw.region.trim()
    if (region.length === 0) return Either.left(invalid("S3_REGION", "must not be empty"))
    if (Option.isSome(raw.accessKeyId) !== Option.isSome(raw.secretAccessKey)) {
      return Either.left(
        invalid("S3_ACCESS_KEY_ID", "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together (set both or neither)")
      )
    }
    const credentials: S3Credentials | undefined = Option.isSome(raw.accessKeyId) && Option.isSome(raw.secretAccessKey)
      ? {
        accessKeyId: raw.accessKeyId.value,
        secretAccessKey: raw.secretAccessKey.value,
        sessionToken: Option.getOrUndefined(raw.sessionToken)
      }
      : undefined
    return Either.right({ bucket, endpoint, region, forcePathStyle: raw.forcePathStyle, credentials })
  })
)

/** Why the options cannot work, or undefined. */
export const optionsProblem = (options: S3Options): string | undefined => {
  if (options.bucket.length === 0) return "the bucket name is empty"
  if (options.region.length === 0) return "the region is empty"
  if (options.endpoint !== undefined && !validEndpoint(options.endpoint)) {
    return "the endpoint must be an http(s) URL without query or fragment"
  }
  const part = options.writePartSizeBytes
  if (part !== undefined && (!Number.isSafeInteger(part) || part < MIN_PART_SIZE || part > MAX_PART_SIZE)) {
    return `writePartSizeBytes must be an integer between ${MIN_PART_SIZE} and ${MAX_PART_SIZE}`
  }
  const single = options.singleCopyMaxBytes
  if (single !== undefined && (!Number.isSafeInteger(single) || single < 0 || single > MAX_PART_SIZE)) {
    return `singleCopyMaxBytes must be an integer between 0 and ${MAX_PART_SIZE}`
  }
  const copyPart = options.copyPartSizeBytes
  if (copyPart !== undefined && (!Number.isSafeInteger(copyPart) || copyPart < MIN_PART_SIZE || copyPart > MAX_PART_SIZE)) {
    return `copyPartSizeBytes must be an integer between ${MIN_PART_SIZE} and ${MAX_PART_SIZE}`
  }
  return undefined
}

export const reveal = (value: string | Redacted.Redacted<string>): string =>
  Redacted.isRedacted(value) ? Redacted.value(value) : value

export { contentDisposition, isHeaderSafe, keyProblem, MAX_KEY_BYTES } from "../../core/rules/storage.js"

/**
 * `expiresIn` (seconds) and the signing date for a presigned URL that stops working at
 * `expiresAt` (ms) at the latest, capped at 7 days. An instant already past gives a URL that
 * expired at that instant (signed a second before it), so it is refused with 403 like any
 * expired URL.
 */
export const presignWindow = (expiresAt: number, now: number): { readonly expiresIn: number; readonly signingDate: Date } => {
  // X-Amz-Date has whole seconds: the URL expires at floor(now) + expiresIn.
  const signedAt = Math.floor(now / 1000) * 1000
  const seconds = Math.floor((expiresAt - signedAt) / 1000)
  if (seconds <= 0) return { expiresIn: 1, signingDate: new Date(Math.floor(expiresAt / 1000) * 1000 - 1000) }
  return { expiresIn: Math.min(seconds, MAX_PRESIGN_SECONDS), signingDate: new Date(signedAt) }
}

/**
 * The origins the bucket's signed URLs point at (the SDK's virtual-hosted or path style), for
 * the dashboard's Content-Security-Policy: the browser sends uploads to them and plays and
 * downloads audio from them. The bucket's CORS must allow the dashboard's origin too (docs/web.md).
 */
export const signedUrlOrigins = (options: Pick<S3Options, "bucket" | "endpoint" | "region" | "forcePathStyle">): ReadonlyArray<string> => {
  const endpoint = new URL(options.endpoint ?? `https://s3.${options.region}.amazonaws.com`)
  const pathStyle = endpoint.origin
  const hostStyle = `${endpoint.protocol}//${options.bucket}.${endpoint.host}`
  return options.forcePathStyle ? [pathStyle] : [hostStyle, pathStyle]
}
