/**
 * What `hush denoise` shows while it works, on stderr (stdout stays for the result): on a
 * terminal one line redrawn in place with a bar, at most ten times a second; elsewhere (a pipe,
 * a CI log) plain lines, one per phase and per tenth of the way.
 */
const WIDTH = 24

export interface Progress {
  /** Progress of `label` as `done` of `total` (any unit); `detail` follows the percentage. */
  readonly update: (label: string, done: number, total: number, detail?: string) => void
  /** A finished step or a message, on its own line. */
  readonly note: (text: string) => void
  /** Ends the line being redrawn, if any. */
  readonly end: () => void
}

/** A size for people: KiB below 1 MiB, else MiB, one decimal. */
export const mib = (bytes: number) =>
  bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`

export const makeProgress = (stream: NodeJS.WriteStream, options: { readonly tty?: boolean } = {}): Progress => {
  const tty = options.tty ?? stream.isTTY === true
  let drawn = false
  let lastDrawAt = 0
  let lastPlain = { label: "", tenth: -1 }
  const end = () => {
    if (drawn) stream.write("\n")
    drawn = false
  }
  return {
    update: (label, done, total, detail) => {
      const fraction = total <= 0 ? 0 : Math.min(1, Math.max(0, done / total))
      const percent = Math.floor(fraction * 100)
      const suffix = detail === undefined ? "" : `  ${detail}`
      if (tty) {
        const now = Date.now()
        if (fraction < 1 && now - lastDrawAt < 100) return
        lastDrawAt = now
        const filled = Math.round(fraction * WIDTH)
        stream.write(`\r\x1b[2K${label} [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${String(percent).padStart(3)}%${suffix}`)
        drawn = true
        return
      }
      const tenth = Math.floor(fraction * 10)
      if (label === lastPlain.label && tenth === lastPlain.tenth) return
      lastPlain = { label, tenth }
      stream.write(`${label} ${percent}%${suffix}\n`)
    },
    note: (text) => {
      end()
      lastPlain = { label: "", tenth: -1 }
      stream.write(`${text}\n`)
    },
    end
  }
}
