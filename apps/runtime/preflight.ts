import { Effect, Layer } from "effect"
import { checkFfmpegAvailable } from "../../adapters/ffmpeg/probe.js"
import { type FfmpegSandboxMode, useFfmpegSandbox } from "../../adapters/ffmpeg/sandbox.js"

/** Stops a process that needs ffmpeg with a clear install hint instead of a stack trace. */
export const requireFfmpeg = (processName: string) =>
  checkFfmpegAvailable().pipe(
    Effect.tapError((error) => Effect.sync(() => console.error(`\n${processName} cannot start: ${error.message}\n`))),
    Effect.orElse(() => Effect.sync(() => process.exit(1))),
    Effect.asVoid
  )

/**
 * The same check as a layer, so that it runs while the others build (ffmpeg takes ~0.5 s to answer
 * on a busy machine), with the choice of the ffmpeg children's sandbox (`FFMPEG_SANDBOX`, one
 * warning when `auto` finds none) beside it.
 */
export const requireFfmpegLayer = (processName: string, sandbox: FfmpegSandboxMode = "auto") =>
  Layer.effectDiscard(Effect.all([requireFfmpeg(processName), useFfmpegSandbox(sandbox)], { concurrency: 2, discard: true }))
