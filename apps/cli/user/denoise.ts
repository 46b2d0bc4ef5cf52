/**
 * `hush denoise <input>`: check before sending anything (apps/cli/user/preflight.ts), create
 * the file, upload it (resumably), complete it, wait until it is ready, create the job under an
 * Idempotency-Key derived from the file and the options (a rerun follows the same job instead
 * of paying twice), follow it, download the output.
 */
import { createWriteStream, renameSync, rmSync } from "node:fs"
import { basename } from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { createHash } from "node:crypto"
import { Duration, Effect } from "effect"
import { HushApiError, type HushClient, withIdempotencyKey } from "../../client/index.js"
import { DenoiseIn } from "../../../core/schema/job.js"
import type { File, Job } from "../../../core/schema/index.js"
import { type DenoiseCommand, EXIT, UsageError } from "./args.js"
import { formatReport, TEST_MODE_NOTE } from "./format.js"
import { contentTypeOf } from "./content-type.js"
import { CliOutcome } from "./outcome.js"
import { checkInput, checkModelAndCredit, outputTarget } from "./preflight.js"
import { makeProgress, mib } from "./progress.js"
import { readResumeState, removeResumeState, resumePath, type ResumeState, sendFile, writeResumeState } from "./upload.js"
import type { CliIo } from "./io.js"

const denoisePayload = (command: DenoiseCommand, fileId: string): DenoiseIn => {
  const output = {
    ...(command.format === undefined ? {} : { format: command.format }),
    ...(command.loudness === undefined ? {} : { loudness: command.loudness })
  }
  return {
    file: fileId,
    ...(command.model === undefined ? {} : { model: command.model }),
    ...(command.strength === undefined ? {} : { strength: command.strength }),
    ...(Object.keys(output).length === 0 ? {} : { output })
  }
}

const pollInterval = (env: NodeJS.ProcessEnv) => {
  const ms = Number(env.HUSH_POLL_INTERVAL_MS)
  return Number.isFinite(ms) && ms > 0 ? ms : 1000
}

const isNotFound = (error: unknown): error is HushApiError => error instanceof HushApiError && error.code === "not_found"

/** A part of a multipart upload expires with it; leave a margin for the upload itself. */
const stillOpen = (state: ResumeState) => Date.parse(state.upload.expires_at) - Date.now() > 10 * 60_000

export const denoise = (command: DenoiseCommand, hush: HushClient, io: CliIo, onPhase: (phase: string) => void) =>
  Effect.gen(function*() {
    // 0. before any request: the input, the output, then the model and the credit
    const { path: input, stat } = yield* Effect.try({
      try: () => checkInput(command.input),
      catch: (error) => (error instanceof UsageError ? error : new UsageError(String(error)))
    })
    const target = command.wait
      ? yield* Effect.try({ try: () => outputTarget(command, input), catch: (error) => (error instanceof UsageError ? error : new UsageError(String(error))) })
      : undefined
    const apiKey = io.env.HUSH_API_KEY!.trim()
    const baseUrl = io.env.HUSH_BASE_URL?.trim() || "http://localhost:8787"
    yield* checkModelAndCredit(command, hush, apiKey, baseUrl)
    const progress = makeProgress(io.stderr)
    const statePath = resumePath(io.env, { path: input, size: stat.size, mtimeMs: stat.mtimeMs, baseUrl, apiKey })
    const interval = pollInterval(io.env)

    // 1. the file: the one an earlier run left, while it is still usable, else a new one
    let state = readResumeState(statePath)
    let file: { readonly id: string; readonly status: File["status"] } | undefined
    if (state !== undefined) {
      const known = yield* hush.files.getFile({ path: { file_id: state.fileId } }).pipe(
        Effect.catchIf(isNotFound, () => Effect.succeed(undefined))
      )
      if (known === undefined || known.status === "rejected" || (known.status === "uploading" && !stillOpen(state))) {
        removeResumeState(statePath)
        state = undefined
      } else {
        file = known
        const done = Object.keys(state.parts).length
        if (known.status === "uploading") {
          progress.note(state.upload.method === "multipart"
            ? `Resuming the upload of ${known.id}: ${done} of ${state.upload.parts.length} parts already sent`
            : `Resuming ${known.id}: sending the file again`)
        } else progress.note(`Resuming ${known.id}: already uploaded`)
      }
    }
    if (state === undefined) {
      const created = yield* hush.files.createFile({
        payload: { filename: basename(input), size_bytes: stat.size, content_type: contentTypeOf(input) }
      })
      if (created.upload === null) return yield* Effect.fail(new CliOutcome({ message: "error: the API gave no upload target", exitCode: EXIT.failure }))
      state = { version: 1, fileId: created.id, upload: created.upload, parts: {} }
      writeResumeState(statePath, state)
      file = { id: created.id, status: created.status }
    }
    const fileId = state.fileId

    // 2. the bytes, then complete
    if (file!.status === "uploading") {
      onPhase(`upload of ${fileId} stopped; run the same command again to resume it`)
      const parts = yield* sendFile(state, {
        path: input,
        size: stat.size,
        statePath,
        concurrency: Math.max(1, Number(io.env.HUSH_UPLOAD_CONCURRENCY) || 4),
        onProgress: (sent) => progress.update("Uploading ", sent, stat.size, `${mib(sent)} of ${mib(stat.size)}`)
      })
      progress.update("Uploading ", stat.size, stat.size, `${mib(stat.size)} of ${mib(stat.size)}`)
      progress.end()
      yield* hush.files.completeFile({ path: { file_id: fileId }, ...(parts.length === 0 ? {} : { payload: { parts } }) })
    }

    // 3. validation
    onPhase(`${fileId} is uploaded; run the same command again to continue`)
    let ready = yield* hush.files.getFile({ path: { file_id: fileId } })
    if (ready.status === "validating") progress.note(`Validating ${fileId}…`)
    while (ready.status === "validating" || ready.status === "uploading") {
      yield* Effect.sleep(Duration.millis(interval))
      ready = yield* hush.files.getFile({ path: { file_id: fileId } })
    }
    if (ready.status === "rejected") {
      removeResumeState(statePath)
      return yield* Effect.fail(new CliOutcome({
        message: `error: the file was rejected: ${ready.error?.code ?? "invalid_audio"}: ${ready.error?.message ?? "the audio could not be decoded"}`,
        exitCode: EXIT.refused,
        json: { error: { code: ready.error?.code ?? "invalid_audio", title: "File rejected", detail: ready.error?.message ?? null }, file: ready }
      }))
    }
    progress.note(`Uploaded ${fileId} (${ready.duration_seconds?.toFixed(1) ?? "?"} s of audio)`)

    // 4. the job, under a key this input and these options always give
    const payload = denoisePayload(command, fileId)
    const idempotencyKey = `hush-cli-${fileId}-${createHash("sha256").update(JSON.stringify(payload)).digest("hex").slice(0, 16)}`
    let job: Job = yield* hush.jobs.createDenoiseJob({ payload }).pipe(withIdempotencyKey(idempotencyKey))
    if (!command.wait) {
      removeResumeState(statePath)
      io.stdout.write(`${command.json ? JSON.stringify({ file: ready, job }) : job.id}\n`)
      progress.note(`Job ${job.id} is ${job.status}: follow it with hush jobs get ${job.id}`)
      if (job.mode === "test") progress.note(TEST_MODE_NOTE)
      return EXIT.ok
    }

    // 5. follow it
    onPhase(`job ${job.id} keeps running; see it with hush jobs get ${job.id}`)
    progress.note(`Job ${job.id} (${job.model}, ${job.mode === "test" ? "test mode: nothing is charged" : `${job.cost.display} estimated`})`)
    while (job.status === "queued" || job.status === "processing") {
      progress.update("Denoising ", job.progress, 1, job.status)
      yield* Effect.sleep(Duration.millis(interval))
      job = yield* hush.jobs.getJob({ path: { job_id: job.id } })
    }
    if (job.status !== "succeeded") {
      progress.end()
      removeResumeState(statePath)
      return yield* Effect.fail(new CliOutcome({
        message: job.status === "failed"
          ? `error: job ${job.id} failed: ${job.error?.code ?? "error"}: ${job.error?.message ?? ""} (nothing was charged)`
          : `error: job ${job.id} was canceled (nothing was charged)`,
        exitCode: job.status === "failed" ? EXIT.jobFailed : EXIT.jobCanceled,
        json: { file: ready, job }
      }))
    }
    progress.update("Denoising ", 1, 1, "succeeded")
    progress.end()

    // 6. the output, to the name checked before the upload (the API's download name, or -o)
    const link = yield* hush.jobs.getJobOutput({ path: { job_id: job.id } })
    onPhase(`download stopped; job ${job.id} succeeded: run the same command again to download it`)
    const size = yield* download(link.url, target!, (received, total) =>
      progress.update("Downloading", received, total, `${mib(received)} of ${mib(total)}`))
    progress.end()
    removeResumeState(statePath)
    if (job.mode === "test") {
      progress.note(`Saved ${target}`)
      progress.note(TEST_MODE_NOTE)
    } else progress.note(`Saved ${target} (${job.receipt.billable_seconds} s billed, ${job.cost.display})`)
    const levels = formatReport(job)
    if (levels !== undefined) progress.note(`Levels: ${levels}`)
    io.stdout.write(`${command.json ? JSON.stringify({ file: ready, job, output: { path: target, size_bytes: size } }) : target}\n`)
    return EXIT.ok
  })

/** Streams a signed download to `${target}.part`, then renames it: a half file never has the final name. */
const download = (url: string, target: string, onProgress: (received: number, total: number) => void) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { signal })
      if (!response.ok || response.body === null) {
        throw new HushApiError({
          status: response.status, code: `download_${response.status}`, title: "Download failed",
          detail: (await response.text()).slice(0, 300), requestId: undefined, retryAfterSeconds: undefined, field: undefined
        })
      }
      const total = Number(response.headers.get("content-length") ?? 0)
      let received = 0
      const temp = `${target}.part`
      const body = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>)
      body.on("data", (chunk: Buffer) => {
        received += chunk.length
        onProgress(received, total || received)
      })
      try {
        await pipeline(body, createWriteStream(temp))
      } catch (error) {
        rmSync(temp, { force: true })
        throw error
      }
      renameSync(temp, target)
      return received
    },
    catch: (error) => error instanceof HushApiError
      ? error
      : new HushApiError({
        status: 0, code: "network_error", title: "Download interrupted", detail: String(error),
        requestId: undefined, retryAfterSeconds: undefined, field: undefined
      })
  })
