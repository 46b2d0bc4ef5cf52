/**
 * The user commands (`hush denoise | jobs | credits | models`): argv and environment in, an
 * exit code out (apps/cli/user/args.ts lists them). Everything goes through the typed client
 * (apps/client), with its retries and Idempotency-Keys.
 */
import { FetchHttpClient } from "@effect/platform"
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import { HushApiError, makeHushClient, type HushClient } from "../../client/index.js"
import { EXIT, exitCodeOf, parseUserArgs, type UserCommand, USAGE, UsageError } from "./args.js"
import { CliOutcome, denoise } from "./denoise.js"
import type { CliIo } from "./io.js"
import { formatCredits, formatJob, formatJobPage, formatModels } from "./format.js"
import { HUSH_VERSION } from "../../../core/version.js"

const printProblem = (io: CliIo, json: boolean, error: HushApiError) => {
  io.stderr.write(`error: ${error.title}: ${error.detail}\n`)
  io.stderr.write(`  code: ${error.code}${error.requestId === undefined ? "" : `  request_id: ${error.requestId}`}\n`)
  if (json) {
    io.stdout.write(`${JSON.stringify({
      error: { status: error.status, code: error.code, title: error.title, detail: error.detail, request_id: error.requestId ?? null }
    })}\n`)
  }
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
    const hush = yield* makeHushClient({ apiKey, baseUrl, userAgent: `hush-cli/${HUSH_VERSION}` })
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
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof HushApiError) {
      printProblem(io, json, error)
      return exitCodeOf(error)
    }
    if (error instanceof CliOutcome) {
      io.stderr.write(`${error.message}\n`)
      if (json && error.json !== undefined) io.stdout.write(`${JSON.stringify(error.json)}\n`)
      return error.exitCode
    }
    if (error instanceof UsageError) {
      io.stderr.write(`error: ${error.message}\n`)
      return EXIT.usage
    }
    io.stderr.write(`error: an answer did not match the API: ${String(error)}\n`)
    return EXIT.failure
  }
  io.stderr.write(`error: ${Cause.pretty(exit.cause)}\n`)
  return EXIT.failure
}
