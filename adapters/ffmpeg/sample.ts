import { fileURLToPath } from "node:url"

/** The MP3 that test mode returns as its output (made by scripts/make-sample-mp3.sh). */
export const TEST_MODE_SAMPLE_PATH: string = fileURLToPath(new URL("../../assets/test-mode-sample.mp3", import.meta.url))

/** The same sample in another output format (made by scripts/make-sample-formats.sh). */
export const testModeSamplePath = (extension: string): string =>
  fileURLToPath(new URL(`../../assets/test-mode-sample.${extension}`, import.meta.url))

export const TEST_MODE_SAMPLE_CONTENT_TYPE = "audio/mpeg"

/**
 * Decoded length: 96,000 samples at 48 kHz (counted with ffmpeg, gapless via the LAME header).
 * ffprobe's container estimate says 2.04 s (it counts the encoder delay and padding); decoded
 * from a pipe (as AudioProbe does) it measures 2.017 s, since the end padding is only trimmed
 * when the input is seekable.
 */
export const TEST_MODE_SAMPLE_DURATION_SECONDS = 2.0

export const TEST_MODE_SAMPLE_BITRATE_KBPS = 192

export const TEST_MODE_SAMPLE_SAMPLE_RATE_HZ = 48_000

export const TEST_MODE_SAMPLE_SIZE_BYTES = 49_536
