/**
 * The user commands' argv, parsed with node:util's parseArgs (strict: an unknown option is a
 * usage error), and the exit code of each outcome.
 */
import { parseArgs } from "node:util"

export const OUTPUT_FORMATS = ["mp3", "wav", "flac", "opus"] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]
export const JOB_STATUSES = ["queued", "processing", "succeeded", "failed", "canceled"] as const

/**
 * What the process exits with (docs/cli.md, the exit codes): scripts branch on these, so each
 * number keeps its meaning.
 */
export const EXIT = {
  ok: 0,
  /** Anything unexpected: an answer that does not match the API, a local I/O fault. */
  failure: 1,
  /** Bad arguments, no API key, an input that is missing, empty or unreadable, an output that exists (without --force). */
  usage: 2,
  /** The key is missing, unknown, revoked, lacks a scope, or the account is suspended or frozen. */
  auth: 3,
  /** Not enough available credit for the job. */
  credit: 4,
  /** The input or an option was refused: media type, size, length, undecodable audio, model, a field. */
  refused: 5,
  /** No such file or job, or it is in the wrong state (not cancelable, no output yet, output expired). */
  state: 6,
  /** The job ran and failed (nothing charged). */
  jobFailed: 7,
  /** The job was canceled. */
  jobCanceled: 8,
  /** The service was busy or unreachable after every retry (rate limit, quota, 5xx, network): run it again later. */
  unavailable: 9,
  /** Interrupted (Ctrl-C): the upload resumes where it stopped on the next run, a started job keeps running. */
  interrupted: 130
} as const

const BY_CODE: Record<string, number> = {
  unauthorized: EXIT.auth, forbidden: EXIT.auth, insufficient_scope: EXIT.auth, account_suspended: EXIT.auth, account_frozen: EXIT.auth,
  insufficient_credit: EXIT.credit,
  invalid_request: EXIT.refused, unsupported_media_type: EXIT.refused, file_too_large: EXIT.refused, request_too_large: EXIT.refused,
  invalid_audio: EXIT.refused, audio_too_long: EXIT.refused, model_not_available: EXIT.refused,
  not_found: EXIT.state, method_not_allowed: EXIT.state, file_not_ready: EXIT.state, file_in_use: EXIT.state, upload_expired: EXIT.state,
  job_not_cancelable: EXIT.state, job_not_succeeded: EXIT.state, output_expired: EXIT.state, idempotency_key_reused: EXIT.state,
  rate_limited: EXIT.unavailable, quota_exceeded: EXIT.unavailable, service_unavailable: EXIT.unavailable, network_error: EXIT.unavailable, timeout: EXIT.unavailable,
  internal_error: EXIT.unavailable, provider_error: EXIT.unavailable
}

/** The exit code of a problem the API answered (by its `code`, else its status class). */
export const exitCodeOf = (problem: { readonly code: string; readonly status: number }): number =>
  BY_CODE[problem.code] ?? (problem.status >= 500 ? EXIT.unavailable : problem.status >= 400 ? EXIT.refused : EXIT.failure)

export const USAGE = `usage: hush <command> [options]

  hush denoise <input> [-o out] [--force] [--model M] [--strength S] [--format F] [--loudness L] [--no-wait] [--json]
      upload <input>, denoise it and download the result (resumes an interrupted upload);
      the output (default <input>.denoised.<format>, beside it) is not overwritten without --force
  hush jobs list [--status S] [--model M] [--limit N] [--cursor C] [--json]
  hush jobs get <job_id> [--json]
  hush jobs cancel <job_id> [--json]
  hush credits [--json]
  hush models [--json]
  hush admin …            operator commands on the server's own store (hush admin --help)

environment: HUSH_API_KEY (required except for models), HUSH_BASE_URL (default http://localhost:8787),
  HUSH_CACHE_DIR (resume files; default ~/.cache/hush), HUSH_UPLOAD_CONCURRENCY (parts at once; default 4),
  HUSH_TIMEOUT_MS (how long a request waits for its answer; default 30000)
exit codes: 0 ok, 1 unexpected failure, 2 usage, 3 key or account refused, 4 insufficient credit,
  5 input or option refused, 6 not found or wrong state, 7 job failed, 8 job canceled,
  9 service busy or unreachable (retry later), 130 interrupted`

export class UsageError extends Error {}

export interface DenoiseCommand {
  readonly _tag: "Denoise"
  readonly input: string
  readonly output: string | undefined
  /** Overwrite the output when it exists. */
  readonly force: boolean
  readonly model: string | undefined
  readonly strength: number | undefined
  readonly format: OutputFormat | undefined
  readonly loudness: number | undefined
  readonly wait: boolean
  readonly json: boolean
}

export type UserCommand =
  | DenoiseCommand
  | {
    readonly _tag: "JobsList"
    readonly status: (typeof JOB_STATUSES)[number] | undefined
    readonly model: string | undefined
    readonly limit: number | undefined
    readonly cursor: string | undefined
    readonly json: boolean
  }
  | { readonly _tag: "JobsGet" | "JobsCancel"; readonly id: string; readonly json: boolean }
  | { readonly _tag: "Credits" | "Models"; readonly json: boolean }
  | { readonly _tag: "Help" }

const number = (name: string, value: string | undefined, min: number, max: number): number | undefined => {
  if (value === undefined) return undefined
  const parsed = Number(value)
  if (value.trim() === "" || !Number.isFinite(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`--${name} must be a number from ${min} to ${max}, not '${value}'`)
  }
  return parsed
}

/**
 * `--loudness -16` as `--loudness=-16`: parseArgs takes a value starting with a dash for an
 * option of its own and refuses it, yet every loudness target is negative.
 */
const joinNegativeValues = (args: ReadonlyArray<string>, options: Record<string, { type: "string" | "boolean" }>) =>
  args.flatMap((arg, at) => {
    const previous = at > 0 ? args[at - 1]! : ""
    const next = args[at + 1]
    if (/^-\d/.test(arg) && options[previous.replace(/^--/, "")]?.type === "string" && previous.startsWith("--")) return []
    if (arg.startsWith("--") && options[arg.slice(2)]?.type === "string" && next !== undefined && /^-\d/.test(next)) return [`${arg}=${next}`]
    return [arg]
  })

const parse = <const O extends Record<string, { type: "string" | "boolean"; short?: string }>>(args: ReadonlyArray<string>, options: O) => {
  try {
    return parseArgs({ args: joinNegativeValues(args, options), options: { ...options, json: { type: "boolean" } }, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
}

const onePositional = (positionals: ReadonlyArray<string>, what: string): string => {
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? `${what} is required` : `unexpected argument '${positionals[1]}'`)
  return positionals[0]!
}

const noPositionals = (positionals: ReadonlyArray<string>) => {
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`)
}

export const parseUserArgs = (argv: ReadonlyArray<string>): UserCommand => {
  const [command, ...rest] = argv
  if (command === undefined || command === "help" || command === "--help" || command === "-h") return { _tag: "Help" }
  if (command === "denoise") {
    const { values, positionals } = parse(rest, {
      output: { type: "string", short: "o" },
      force: { type: "boolean" },
      model: { type: "string" },
      strength: { type: "string" },
      format: { type: "string" },
      loudness: { type: "string" },
      "no-wait": { type: "boolean" }
    })
    const format = values.format
    if (format !== undefined && !(OUTPUT_FORMATS as ReadonlyArray<string>).includes(format)) {
      throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(", ")}, not '${format}'`)
    }
    return {
      _tag: "Denoise",
      input: onePositional(positionals, "the input file"),
      output: values.output,
      force: values.force === true,
      model: values.model,
      strength: number("strength", values.strength, 0, 1),
      format: format as OutputFormat | undefined,
      loudness: number("loudness", values.loudness, -31, -9),
      wait: values["no-wait"] !== true,
      json: values.json === true
    }
  }
  if (command === "jobs") {
    const [verb, ...more] = rest
    if (verb === "list") {
      const { values, positionals } = parse(more, {
        status: { type: "string" }, model: { type: "string" }, limit: { type: "string" }, cursor: { type: "string" }
      })
      noPositionals(positionals)
      const status = values.status
      if (status !== undefined && !(JOB_STATUSES as ReadonlyArray<string>).includes(status)) {
        throw new UsageError(`--status must be one of ${JOB_STATUSES.join(", ")}, not '${status}'`)
      }
      const limit = number("limit", values.limit, 1, 100)
      if (limit !== undefined && !Number.isInteger(limit)) throw new UsageError("--limit must be a whole number from 1 to 100")
      return {
        _tag: "JobsList", status: status as (typeof JOB_STATUSES)[number] | undefined, model: values.model, limit,
        cursor: values.cursor, json: values.json === true
      }
    }
    if (verb === "get" || verb === "cancel") {
      const { values, positionals } = parse(more, {})
      return { _tag: verb === "get" ? "JobsGet" : "JobsCancel", id: onePositional(positionals, "the job id"), json: values.json === true }
    }
    throw new UsageError(`unknown command 'jobs ${verb ?? ""}': use jobs list, jobs get <id> or jobs cancel <id>`)
  }
  if (command === "credits" || command === "models") {
    const { values, positionals } = parse(rest, {})
    noPositionals(positionals)
    return { _tag: command === "credits" ? "Credits" : "Models", json: values.json === true }
  }
  throw new UsageError(`unknown command '${command}'`)
}
