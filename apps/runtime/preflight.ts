import { ConfigError, Effect, Layer } from "effect"
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
export const layerRequireFfmpeg = (processName: string, sandbox: FfmpegSandboxMode = "auto") =>
  Layer.effectDiscard(Effect.all([requireFfmpeg(processName), useFfmpegSandbox(sandbox)], { concurrency: 2, discard: true }))

/** Each problem of a configuration error, `SETTING: what is wrong` (once, when the message already names it). */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  switch (error._op) {
    case "And":
    case "Or":
      return `${describeConfigError(error.left)}; ${describeConfigError(error.right)}`
    default: {
      const named = error.path.length === 0 || error.path.some((setting) => error.message.includes(setting))
      return named ? error.message : `${error.path.join(".")}: ${error.message}`
    }
  }
}

/**
 * A bad setting stops the process with one line naming it, on stderr, and exit status 1
 * (decisions.md, Deployment settings), not with the runtime's multi-line error report.
 */
export const stopOnConfigError = (processName: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.catchIf((error): error is E & ConfigError.ConfigError => ConfigError.isConfigError(error), (error) =>
    Effect.sync(() => {
      console.error(`${processName} cannot start: ${describeConfigError(error).replace(/\s*\n\s*/g, " ")}`)
      return process.exit(1)
    })))
