/**
 * A job's audio in the browser: a player, and a spectrogram computed here with Web Audio from
 * the decoded file (no server work, no library): time across, frequency up to 8 kHz, brightness
 * the level on one fixed scale for every file, so the input's noise floor and its absence in
 * the output compare at a glance. Decoded at 16 kHz mono-mixed (the speech band, and a tenth of
 * the memory of the file's own rate); files longer than MAX_DRAW_SECONDS are played, not drawn.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { formatDuration } from "./format.js"

/** Longer audio is not decoded in the page: 10 minutes at 16 kHz is 38 MB of samples per channel. */
export const MAX_DRAW_SECONDS = 600
const RATE = 16_000
const FFT_SIZE = 512
const COLUMNS = 600
const ROWS = FFT_SIZE / 2
/** The level range drawn, in dB of full scale: quieter is black, louder is bright. */
const FLOOR_DB = -110
const CEILING_DB = -20

/** In-place radix-2 FFT of `re`/`im` (length a power of two). */
const fft = (re: Float64Array, im: Float64Array) => {
  const n = re.length
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1
    for (; j & bit; bit >>= 1) j ^= bit
    j ^= bit
    if (i < j) {
      ;[re[i], re[j]] = [re[j]!, re[i]!]
      ;[im[i], im[j]] = [im[j]!, im[i]!]
    }
  }
  for (let size = 2; size <= n; size <<= 1) {
    const angle = (-2 * Math.PI) / size
    for (let start = 0; start < n; start += size) {
      for (let k = 0; k < size / 2; k++) {
        const wr = Math.cos(angle * k)
        const wi = Math.sin(angle * k)
        const a = start + k
        const b = a + size / 2
        const tr = re[b]! * wr - im[b]! * wi
        const ti = re[b]! * wi + im[b]! * wr
        re[b] = re[a]! - tr
        im[b] = im[a]! - ti
        re[a] = re[a]! + tr
        im[a] = im[a]! + ti
      }
    }
  }
}

/** Dark blue → purple → orange → pale yellow, for a level in 0…1. */
const colour = (t: number): readonly [number, number, number] => {
  const stops = [[0, 0, 8], [60, 20, 110], [190, 55, 80], [250, 150, 30], [252, 250, 190]] as const
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1)
  const i = Math.min(stops.length - 2, Math.floor(x))
  const f = x - i
  const [a, b] = [stops[i]!, stops[i + 1]!]
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f]
}

/** The mono mix of a decoded buffer. */
const monoOf = (buffer: AudioBuffer): Float32Array => {
  const mono = new Float32Array(buffer.length)
  for (let c = 0; c < buffer.numberOfChannels; c++) {
    const channel = buffer.getChannelData(c)
    for (let i = 0; i < mono.length; i++) mono[i]! += channel[i]! / buffer.numberOfChannels
  }
  return mono
}

/** Draws the spectrogram of `samples` (at RATE) into an ImageData of COLUMNS × ROWS. */
export const spectrogram = (samples: Float32Array): ImageData => {
  const image = new ImageData(COLUMNS, ROWS)
  const window = Float64Array.from({ length: FFT_SIZE }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (FFT_SIZE - 1)))
  // a full-scale sine's bin: amplitude × N/2 × the Hann window's mean (0.5)
  const scale = FFT_SIZE / 4
  const re = new Float64Array(FFT_SIZE)
  const im = new Float64Array(FFT_SIZE)
  const span = Math.max(0, samples.length - FFT_SIZE)
  for (let column = 0; column < COLUMNS; column++) {
    const start = Math.floor((span * column) / (COLUMNS - 1))
    for (let i = 0; i < FFT_SIZE; i++) {
      re[i] = (samples[start + i] ?? 0) * window[i]!
      im[i] = 0
    }
    fft(re, im)
    for (let bin = 0; bin < ROWS; bin++) {
      const magnitude = Math.hypot(re[bin]!, im[bin]!) / scale
      const db = 20 * Math.log10(magnitude + 1e-12)
      const [r, g, b] = colour((db - FLOOR_DB) / (CEILING_DB - FLOOR_DB))
      // low frequencies at the bottom
      const at = ((ROWS - 1 - bin) * COLUMNS + column) * 4
      image.data[at] = r
      image.data[at + 1] = g
      image.data[at + 2] = b
      image.data[at + 3] = 255
    }
  }
  return image
}

const decode = async (url: string): Promise<Float32Array> => {
  const response = await fetch(url)
  if (!response.ok) throw new Error(`the audio could not be fetched (${response.status})`)
  const bytes = await response.arrayBuffer()
  const context = new OfflineAudioContext(1, 1, RATE)
  return monoOf(await context.decodeAudioData(bytes))
}

type Drawing = "waiting" | "drawing" | "drawn" | "too-long" | "failed"

/**
 * One player: `title` ("Input", "Output"), the signed link (null while there is none yet, with
 * `why` saying so), and the audio's length (to skip drawing what is too long).
 */
export const AudioPreview = ({ title, url, why, seconds, note }: {
  readonly title: string
  readonly url: string | null
  readonly why: string
  readonly seconds: number
  readonly note?: string | undefined
}) => {
  const canvas = useRef<HTMLCanvasElement>(null)
  const [drawing, setDrawing] = useState<Drawing>("waiting")
  // the decoded audio's own length: a test job's output (the sample clip) is not the input's
  const [drawnSeconds, setDrawnSeconds] = useState(seconds)
  useEffect(() => {
    if (url === null) return
    if (seconds > MAX_DRAW_SECONDS) {
      setDrawing("too-long")
      return
    }
    let current = true
    setDrawing("drawing")
    decode(url).then(
      (samples) => {
        const target = canvas.current
        if (!current || target === null) return
        target.getContext("2d")?.putImageData(spectrogram(samples), 0, 0)
        setDrawnSeconds(samples.length / RATE)
        setDrawing("drawn")
      },
      () => current && setDrawing("failed")
    )
    return () => {
      current = false
    }
  }, [url, seconds])
  const label = `${title} spectrogram: time across, 0:00 to ${formatDuration(drawnSeconds)}; frequency up, 0 to 8 kHz; brighter is louder.`
  return (
    <figure class="player" data-player={title.toLowerCase()}>
      <figcaption><strong>{title}</strong>{note && <span class="muted"> {note}</span>}</figcaption>
      {url === null ? <p class="muted">{why}</p> : (
        <>
          <audio controls preload="metadata" src={url} aria-label={`${title} audio`} />
          <div class="spectrogram" data-state={drawing}>
            <div class="plot" hidden={drawing !== "drawn"}>
              <p class="freq" aria-hidden="true"><span>8 kHz</span><span>4 kHz</span><span>0</span></p>
              <canvas ref={canvas} width={COLUMNS} height={ROWS} role="img" aria-label={label} />
            </div>
            {drawing === "drawing" && <p class="loading" role="status">Drawing the spectrogram…</p>}
            {drawing === "too-long" && <p class="muted">Longer than {formatDuration(MAX_DRAW_SECONDS)}: played, not drawn, to spare your browser's memory.</p>}
            {drawing === "failed" && <p class="muted">This browser could not decode the audio to draw it; the player may still play it.</p>}
            {drawing === "drawn" && <p class="axis-note" aria-hidden="true"><span>0:00</span><span>time →</span><span>{formatDuration(drawnSeconds)}</span></p>}
          </div>
        </>
      )}
    </figure>
  )
}
