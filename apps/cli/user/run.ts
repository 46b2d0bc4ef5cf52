/**
 * The user commands (`hush denoise | jobs | credits | models`): argv and environment in, an
 * exit code out (apps/cli/user/args.ts lists them). Everything goes through the typed client
 * (apps/client), with its retries and Idempotency-Keys.
 */
import { FetchHttpClient } from "@effect/platform"
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import { makeHushClient, type HushClient } from "../../client/index.js"
import { HUSH_VERSION } from "../../../core/version.js"
import { EXIT, parseUserArgs, type UserCommand, USAGE, UsageError } from "./args.js"
import { denoise } from "./denoise.js"
import { describeFailure } from "./failure.js"
import { formatCredits, formatJob, formatJobPage, formatModels } from "./format.js"
import type { CliIo } from "./io.js"
import { CliOutcome } from "./outcome.js"

/** HUSH_TIMEOUT_MS: how long one request waits for its answer (the client's default otherwise). */
const requestTimeout = (env: NodeJS.ProcessEnv): { readonly timeoutMs?: number } => {
  const ms = Number(env.HUSH_TIMEOUT_MS)
  return Number.isFinite(ms) && ms > 0 ? { timeoutMs: ms } : {}
}

const runCommand = (command: Exclude<UserCommand, { _tag: "Help" }>, hush: HushClient, io: CliIo, onPhase: (phase: string) => void) => {
  const out = (json: boolean, value: unknown, text: string) => Effect.sync(() => io.stdout.write(`${json ? JSON.stringify(value) : text}\n`))
  switch (command._tag) {
    case "Denoise":
      return denoise(command, hush, io, onPhase)
    case "JobsList":
      return hush.jobs.listJobs({
        urlParams: {
          ...(command.limit === undefined ? {} : { limit: command.limit }),
          ...(command.cursor === undefined ? {} : { cursor: command.cursor }),
          ...(command.status === undefined ? {} : { status: command.status }),
          ...(command.model === undefined ? {} : { model: command.model })
        }
      }).pipe(Effect.flatMap((page) => out(command.json, page, formatJobPage(page))), Effect.as(EXIT.ok))
    case "JobsGet":
      return hush.jobs.getJob({ path: { job_id: command.id } }).pipe(
        Effect.flatMap((job) => out(command.json, job, formatJob(job))), Effect.as(EXIT.ok))
    case "JobsCancel":
      return hush.jobs.cancelJob({ path: { job_id: command.id } }).pipe(
        Effect.flatMap((job) => out(command.json, job, formatJob(job))), Effect.as(EXIT.ok))
    case "Credits":
      return hush.account.getCredits().pipe(Effect.flatMap((credits) => out(command.json, credits, formatCredits(credits))), Effect.as(EXIT.ok))
    case "Models":
      return hush.public.listModels().pipe(Effect.flatMap((list) => out(command.json, list, formatModels(list))), Effect.as(EXIT.ok))
  }
}

export const runUserCommand = async (argv: ReadonlyArray<string>, io: CliIo = { env: process.env, stdout: process.stdout, stderr: process.stderr }): Promise<number> => {
  if (argv[0] === "--version") {
    io.stdout.write(`hush ${HUSH_VERSION}\n`)
    return EXIT.ok
  }
  let command: UserCommand
  try {
    command = parseUserArgs(argv)
  } catch (error) {
    io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`)
    return EXIT.usage
  }
  if (command._tag === "Help") {
    io.stdout.write(`${USAGE}\n`)
    return argv.length === 0 ? EXIT.usage : EXIT.ok
  }
  const apiKey = io.env.HUSH_API_KEY?.trim() || undefined
  if (apiKey === undefined && command._tag !== "Models") {
    io.stderr.write("error: set HUSH_API_KEY to your API key (hush_live_… or hush_test_…)\n")
    return EXIT.usage
  }
  const baseUrl = io.env.HUSH_BASE_URL?.trim() || "http://localhost:8787"
  let phase = ""
  const program = Effect.gen(function*() {
    const hush = yield* makeHushClient({ apiKey, baseUrl, userAgent: `hush-cli/${HUSH_VERSION}`, ...requestTimeout(io.env) })
    return yield* runCommand(command, hush, io, (next) => {
      phase = next
    })
  }).pipe(Effect.provide(FetchHttpClient.layer))

  const fiber = Effect.runFork(program)
  const interrupt = () => {
    Effect.runFork(Fiber.interrupt(fiber))
  }
  process.once("SIGINT", interrupt)
  process.once("SIGTERM", interrupt)
  const exit = await Effect.runPromise(Fiber.await(fiber))
  process.off("SIGINT", interrupt)
  process.off("SIGTERM", interrupt)
  if (Exit.isSuccess(exit)) return exit.value
  const json = "json" in command && command.json
  if (Cause.isInterruptedOnly(exit.cause)) {
    io.stderr.write(`\ninterrupted${phase === "" ? "" : `: ${phase}`}\n`)
    return EXIT.interrupted
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && failure.value instanceof CliOutcome) {
    io.stderr.write(`${failure.value.message}\n`)
    if (json && failure.value.json !== undefined) io.stdout.write(`${JSON.stringify(failure.value.json)}\n`)
    return failure.value.exitCode
  }
  if (Option.isSome(failure) && failure.value instanceof UsageError) {
    io.stderr.write(`error: ${failure.value.message}\n`)
    return EXIT.usage
  }
  // a problem, a transport failure, an unexpected answer, or a defect: one or two lines
  const error = Option.isSome(failure) ? failure.value : Cause.squash(exit.cause)
  const reported = describeFailure(error, { baseUrl })
  io.stderr.write(`${reported.message}\n`)
  if (io.env.HUSH_DEBUG === "1") io.stderr.write(`${Cause.pretty(exit.cause)}\n`)
  if (json) io.stdout.write(`${JSON.stringify(reported.json)}\n`)
  return reported.exitCode
}
