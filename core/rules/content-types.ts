/** decisions.md, Files: `audio/*` plus these audio-in-video and container types. */
const EXTRA_ACCEPTED = new Set([
  "video/mp4", "video/quicktime", "video/webm", "video/x-matroska", "application/ogg"
])

/** The media type without parameters (`; codecs=…`), lowercased. */
export const essence = (contentType: string): string => contentType.split(";")[0]!.trim().toLowerCase()

export const isAcceptedAudioType = (contentType: string): boolean => {
  const type = essence(contentType)
  const [top, sub] = type.split("/")
  if (top === undefined || sub === undefined || sub.length === 0) return false
  return top === "audio" || EXTRA_ACCEPTED.has(type)
}
