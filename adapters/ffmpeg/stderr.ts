/**
 * ffmpeg's stderr at `-loglevel level+info`, read as it comes: the length the input's header
 * declares (the "Duration:" line of the input's dump, printed before any decoding) and a bounded
 * tail of what it says at error level, as `-loglevel error` shows it.
 */

/** Every line tagged with its level (`[error] …`), so that the dump and the errors can be told apart. */
export const INFO_LOG_LEVEL = ["-loglevel", "level+info"] as const

const TAGGED = /^(\[[^\]]* @ 0x[0-9a-f]+\] )?\[(panic|fatal|error|warning|info|verbose|debug|trace)\] ?(.*)$/
const SHOWN = new Set(["panic", "fatal", "error"])
/** The input's dump: "  Duration: 25:00:00.00, start: …" or "  Duration: N/A, …". */
const DURATION = /^ {2}Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?),/
/** Past these the input's dump is over: no declared length will come. */
const DUMP_OVER = /^(Stream mapping:|Output #)/

export interface StderrReader {
  readonly push: (chunk: string) => void
  /** What it said at error level (and untagged lines: the shell's, bubblewrap's), its last `tailChars`. */
  readonly errors: () => string
}

/**
 * `onDeclared` is called at most once, with the seconds the header declares. Not for a length
 * estimated from the bitrate (a guess from the file size), nor for "N/A" (a stream). A tag's
 * lines are printed indented deeper; were one forged anyway, it could only shorten the budget
 * of the file that carries it or refuse it, never give it more than the time limit.
 */
export const readStderr = (onDeclared: (seconds: number) => void, tailChars = 8 * 1024): StderrReader => {
  let partial = ""
  let tail = ""
  let looking = true
  const line = (text: string) => {
    const tagged = TAGGED.exec(text)
    if (tagged === null || SHOWN.has(tagged[2]!)) {
      tail = (tail + (tagged === null ? text : (tagged[1] ?? "") + tagged[3]) + "\n").slice(-tailChars)
      return
    }
    if (!looking) return
    const message = tagged[3]!
    if (tagged[2] === "warning" && message.startsWith("Estimating duration from bitrate")) looking = false
    if (tagged[2] !== "info") return
    const declared = DURATION.exec(message)
    if (declared !== null) {
      looking = false
      onDeclared(Number(declared[1]) * 3600 + Number(declared[2]) * 60 + Number(declared[3]))
    } else if (DUMP_OVER.test(message)) {
      looking = false
    }
  }
  return {
    push: (chunk) => {
      const lines = (partial + chunk).split("\n")
      partial = lines.pop()!.slice(-tailChars)
      for (const text of lines) line(text)
    },
    errors: () => (partial === "" ? tail : (tail + partial).slice(-tailChars))
  }
}
