import { Chunk, Effect, Layer, Stream } from "effect"
import { AudioProbe, AudioRejected } from "../../core/ports/audio.js"

/**
 * A test double of the AudioProbe port (real ffmpeg decoding is tested in test/adapters/ffmpeg/probe.test.ts).
 * It "decodes" a made-up format: bytes starting with `RIFF` last byteLength / 1000 seconds;
 * an empty upload or anything else is rejected. Like the real probe it reads the whole stream.
 */
export const RiffProbe = Layer.succeed(AudioProbe, {
  probe: (input) =>
    Effect.gen(function*() {
      const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(input))
      const all = Buffer.concat(chunks.map((c) => Buffer.from(c)))
      if (all.length === 0) return yield* new AudioRejected({ reason: "empty", message: "the upload is empty" })
      if (all.subarray(0, 4).toString("latin1") !== "RIFF") {
        return yield* new AudioRejected({ reason: "undecodable", message: "the upload is not decodable audio" })
      }
      return { durationSeconds: all.length / 1000 }
    })
})


/** A `RIFF` "audio" of `seconds` × 1000 bytes. */
export const riff = (seconds: number) => {
  const bytes = new Uint8Array(Math.round(seconds * 1000))
  bytes.set([0x52, 0x49, 0x46, 0x46])
  for (let i = 4; i < bytes.length; i++) bytes[i] = i % 251
  return bytes
}

