/** The media type `hush denoise` declares for an input, from its extension. */
const BY_EXTENSION: Record<string, string> = {
  wav: "audio/wav", wave: "audio/wav", mp3: "audio/mpeg", m4a: "audio/mp4", aac: "audio/aac", mp4: "video/mp4",
  m4v: "video/mp4", mov: "video/quicktime", flac: "audio/flac", ogg: "audio/ogg", oga: "audio/ogg", opus: "audio/ogg",
  webm: "audio/webm", weba: "audio/webm", mkv: "video/x-matroska", mka: "audio/x-matroska", aif: "audio/aiff",
  aiff: "audio/aiff", caf: "audio/x-caf", amr: "audio/amr", wma: "audio/x-ms-wma"
}

/** Unknown extensions are sent as `application/octet-stream`: the API answers 415 for them. */
export const contentTypeOf = (path: string): string => {
  const dot = path.lastIndexOf(".")
  return (dot < 0 ? undefined : BY_EXTENSION[path.slice(dot + 1).toLowerCase()]) ?? "application/octet-stream"
}
