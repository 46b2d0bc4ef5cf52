/**
 * What `hush denoise` checks before it sends a byte (decisions.md, Command line): the input can
 * be read and is not empty, the output would not overwrite a file (without `--force`), the model
 * exists and is usable, and, for a live key, the account has at least a job's minimum charge.
 * Each refusal says what to do in one or two lines; nothing is uploaded, nothing is charged.
 */
import { closeSync, existsSync, openSync, statSync, type Stats } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { Effect, Option } from "effect"
import { HushApiError, type HushClient } from "../../client/index.js"
import { RNNOISE } from "../../../core/domain/catalog.js"
import { formatMicros } from "../../../core/money.js"
import { priceAudio } from "../../../core/rules/pricing.js"
import { outputFilename } from "../../../core/rules/storage.js"
import type { Model } from "../../../core/schema/index.js"
import { type DenoiseCommand, EXIT, UsageError } from "./args.js"
import { CliOutcome } from "./outcome.js"

/** decisions.md, Models: the default for `denoise` (the API applies it when `model` is absent). */
export const DEFAULT_DENOISE_MODEL = RNNOISE.id

const REASONS: Record<string, string> = {
  ENOENT: "no such file", EACCES: "permission denied", EPERM: "permission denied", EISDIR: "it is a directory",
  ELOOP: "too many symbolic links", ENAMETOOLONG: "the name is too long"
}

const unreadable = (input: string, error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code
  return new UsageError(`cannot read ${input}: ${(code !== undefined && REASONS[code]) || String(error)}${code === undefined ? "" : ` (${code})`}`)
}

/** The input as a file that can be read and holds something; else a UsageError (exit 2). */
export const checkInput = (input: string): { readonly path: string; readonly stat: Stats } => {
  const path = resolve(input)
  let stat: Stats
  try {
    stat = statSync(path)
  } catch (error) {
    throw unreadable(input, error)
  }
  if (!stat.isFile()) throw new UsageError(`${input} is not a file`)
  if (stat.size === 0) throw new UsageError(`${input} is empty (0 bytes): there is no audio to denoise`)
  try {
    closeSync(openSync(path, "r"))
  } catch (error) {
    throw unreadable(input, error)
  }
  return { path, stat }
}

/**
 * Where the output goes: `-o`, else the API's download name beside the input. An existing file
 * there is refused without `--force` (a second run would otherwise replace it, and pay again).
 */
export const outputTarget = (command: DenoiseCommand, inputPath: string): string => {
  const target = command.output === undefined
    ? join(dirname(inputPath), outputFilename(basename(inputPath), command.format))
    : resolve(command.output)
  if (!command.force && existsSync(target)) {
    throw new UsageError(`${target} already exists: pass --force to overwrite it, or -o to save elsewhere`)
  }
  return target
}

const refuseModel = (message: string, id: string) =>
  new CliOutcome({
    message: `error: ${message}\n  see the models with: hush models`,
    exitCode: EXIT.refused,
    json: { error: { status: 0, code: "model_not_available", title: "Model not available", detail: message, model: id, request_id: null } }
  })

/** A key with `credits:read` missing cannot see its balance: the API's own check still applies when the job is created. */
const withoutScope = (error: unknown): error is HushApiError =>
  error instanceof HushApiError && (error.code === "insufficient_scope" || error.code === "forbidden")

/** The model (`--model`, else the default) as the API lists it, usable; the credit for a live key's minimum charge. */
export const checkModelAndCredit = (command: DenoiseCommand, hush: HushClient, apiKey: string, baseUrl: string) =>
  Effect.gen(function*() {
    const id = command.model ?? DEFAULT_DENOISE_MODEL
    const models = yield* hush.public.listModels()
    const live = models.data.filter((m) => m.task === "denoise" && m.status === "live").map((m) => m.id)
    const model: Model | undefined = models.data.find((m) => m.id === id && m.task === "denoise")
    if (model === undefined) return yield* Effect.fail(refuseModel(`there is no model '${id}' here; usable: ${live.join(", ") || "none"}`, id))
    if (model.status !== "live") {
      return yield* Effect.fail(refuseModel(`model '${id}' is ${model.status} here (listed, not usable); usable: ${live.join(", ") || "none"}`, id))
    }
    // test jobs never charge (decisions.md, Money: Test mode)
    if (!apiKey.startsWith("hush_live_")) return model
    const credits = yield* hush.account.getCredits().pipe(
      Effect.map(Option.some),
      Effect.catchIf(withoutScope, () => Effect.succeed(Option.none()))
    )
    if (Option.isNone(credits)) return model
    const minimum = priceAudio({
      pricing: { unitPriceMicros: model.pricing.unit_price_micros, minUnits: model.pricing.min_units, pricingVersion: model.pricing.pricing_version }
    }, 0).costMicros
    if (credits.value.available_micros < minimum) {
      const detail = `a job on ${id} costs at least ${formatMicros(minimum)} (${model.pricing.min_units} s at ${model.pricing.display}) and ${credits.value.display} is available`
      return yield* Effect.fail(new CliOutcome({
        message: `error: not enough credit: ${detail}\n  add credit at ${baseUrl}/dashboard/credits, then run the same command again`,
        exitCode: EXIT.credit,
        json: { error: { status: 402, code: "insufficient_credit", title: "Insufficient credit", detail, request_id: null } }
      }))
    }
    return model
  })
