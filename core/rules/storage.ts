/** Rules every blob store shares: which object keys are acceptable, where a file's bytes live, how a download is named. */
import { DEFAULT_OUTPUT_FORMAT, OUTPUT_FORMATS, type OutputFormat } from "../domain/denoise-options.js"

/** Where uploads write: one object per file, read by nobody but `complete` (and swept). */
export const STAGING_PREFIX = "staging/"

/** The staging object of a file: its upload URLs write here, never to its input. */
export const stagingKeyOf = (fileId: string): string => `${STAGING_PREFIX}${fileId}`

/** The input object of a file: written once by `complete`, then read by validation, pricing and the worker. */
export const inputKeyOf = (fileId: string): string => `inputs/${fileId}`

/** The file a staging key belongs to, or undefined for another key. */
export const fileIdOfStagingKey = (key: string): string | undefined =>
  key.startsWith(STAGING_PREFIX) && key.length > STAGING_PREFIX.length && !key.slice(STAGING_PREFIX.length).includes("/")
    ? key.slice(STAGING_PREFIX.length)
    : undefined

export const MAX_KEY_BYTES = 1024

/**
 * Why a key is unacceptable, or undefined when it is fine. Keys are relative, `/`-separated,
 * with no empty, `.` or `..` segment (URL parsers would normalise those away and break a
 * signature), no backslash, no control character, at most 1024 bytes (S3's own limit).
 */
export const keyProblem = (key: string): string | undefined => {
  if (key.length === 0) return "the key is empty"
  if (new TextEncoder().encode(key).length > MAX_KEY_BYTES) return `the key is longer than ${MAX_KEY_BYTES} bytes`
  if (key.startsWith("/")) return "the key is absolute"
  if (key.includes("\\")) return "the key contains a backslash"
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return "the key contains a control character"
  for (const segment of key.split("/")) {
    if (segment === "") return "the key has an empty path segment"
    if (segment === "." || segment === "..") return "the key has a '.' or '..' path segment"
  }
  return undefined
}

/** The longest stem a download name keeps, in characters (code points). */
export const MAX_DOWNLOAD_STEM = 200

/**
 * The stem of a download name from a client's filename: its last path segment without the
 * extension; control characters (C0, DEL, C1), bidirectional overrides and unpaired surrogates
 * replaced, spaces collapsed, at most 200 characters; `audio` when nothing is left. Whatever the
 * client sent, the result can be signed into a URL and sent in a header (docs/security.md).
 */
export const downloadStem = (filename: string): string => {
  const wellFormed = filename.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
  // eslint-disable-next-line no-control-regex
  const visible = wellFormed.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "_")
  const base = visible.replace(/^.*[\\/]/, "")
  const dot = base.lastIndexOf(".")
  const stem = (dot > 0 ? base.slice(0, dot) : base).replace(/\s+/g, " ").trim()
  const short = Array.from(stem).slice(0, MAX_DOWNLOAD_STEM).join("").trim()
  return short === "" ? "audio" : short
}

/**
 * A job's download name: the input's name without its extension (made safe: downloadStem), then
 * `.denoised.` and the format's extension (`interview.wav` → `interview.denoised.mp3`). The CLI
 * names its output with it before it uploads, to refuse overwriting a file.
 */
export const outputFilename = (inputFilename: string, format: OutputFormat = DEFAULT_OUTPUT_FORMAT): string =>
  `${downloadStem(inputFilename)}.denoised.${OUTPUT_FORMATS[format].extension}`

const encodeRfc5987 = (value: string): string =>
  encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** `attachment; filename="ascii fallback"; filename*=UTF-8''…` (RFC 6266). */
export const contentDisposition = (filename: string): string => {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\/]/g, "_")
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc5987(filename)}`
}

/** Printable ASCII without surrounding spaces: safe to sign and to echo in a response header. */
export const isHeaderSafe = (value: string): boolean => /^[\x20-\x7e]{1,255}$/.test(value) && value === value.trim()

export type ByteRange =
  | { readonly _tag: "Full" }
  | { readonly _tag: "Partial"; readonly start: number; readonly end: number }
  | { readonly _tag: "Unsatisfiable" }

/**
 * `Range: bytes=N-M`, `bytes=N-` and `bytes=-S` against an object of `size` bytes. A missing,
 * malformed or multi-range header is ignored (the whole object is sent), as RFC 9110 allows.
 */
export const parseRange = (header: string | undefined, size: number): ByteRange => {
  if (header === undefined) return { _tag: "Full" }
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header)
  if (match === null) return { _tag: "Full" }
  const [, first, last] = match
  if (first === "" && last === "") return { _tag: "Full" }
  if (first === "") {
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return { _tag: "Unsatisfiable" }
    return { _tag: "Partial", start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === "" ? Number.MAX_SAFE_INTEGER : Number(last)
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return { _tag: "Full" }
  if (start >= size) return { _tag: "Unsatisfiable" }
  return { _tag: "Partial", start, end: Math.min(end, size - 1) }
}
