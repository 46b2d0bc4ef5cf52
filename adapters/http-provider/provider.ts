/**
 * A DenoiseProvider that runs models on a remote GPU host over HTTP (protocol:
 * docs/gpu-provider-protocol.md). For each request it signs a GET of the input and opens an
 * upload of the output, submits the job (idempotency key = our job id), polls it to its end
 * (reporting progress), and on success completes the upload and checks that the output object
 * exists with a non-zero size. A job the host forgets is submitted once more; interruption (a
 * lost lease, shutdown), the deadline, or giving up on a job still running sends a cancel.
 *
 * The output URL: a signed PUT fixes the body's exact length, which nobody knows before the
 * model has run, so the host gets the one part URL of a single-part multipart upload (it
 * accepts any length up to `max_bytes`) and reports the ETag of its PUT; completing the upload
 * with that ETag makes the object.
 *
 * The report (decisions.md, Denoise options: Report): the host writes the output straight to
 * storage, so this process never sees its audio on the way. The input's levels are measured
 * while the host runs the job (a decode of the stored input, concurrent with the wait), the
 * output's after it succeeded (a decode of the stored output): two decodes the built-in runner
 * does not need, each bounded (adapters/rnnoise/measure.ts: the validated duration plus a
 * margin of audio, CPU and wall time of a minute plus 0.2 s per audio second). A measurement
 * that fails leaves the job without a report, never fails it: the host did the work.
 */
import { Clock, Duration, Effect, Either, Exit, Fiber, Layer, Option, Redacted, Ref } from "effect"
import type { AudioReportRecord } from "../../core/domain/audio-report.js"
import { OUTPUT_FORMATS, type OutputFormat } from "../../core/domain/denoise-options.js"
import { BlobStore } from "../../core/ports/blob-store.js"
import { DenoiseProvider, type DenoiseRequest, type DenoiseResult, ProviderFailure } from "../../core/ports/denoise-provider.js"
import { audioReport, type Measured } from "../rnnoise/loudness.js"
import { type MeasureFailed, measureLevels } from "../rnnoise/measure.js"
import { DECODE_MARGIN_SECONDS } from "../rnnoise/provider.js"
import { type CallSpec, type Client, DEFAULT_RETRY, makeClient, type RetryPolicy } from "./client.js"
import { decodeRemoteJob, type RemoteJob, type Submission } from "./protocol.js"

export const DEFAULT_GPU_RUNNER = "gpu"

export interface HttpProviderOptions {
  /** The runner name models refer to (ModelDefinition.runner). Default `gpu`. */
  readonly name?: string
  /** The host's base URL; the protocol's paths (`/v1/jobs`) go below it. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …`. */
  readonly token: Redacted.Redacted<string> | string
  /** Between two polls of a running job. Default 2 s. */
  readonly pollIntervalMs?: number
  /** A job not finished this long after it was submitted is canceled and failed. Default 2 h. */
  readonly deadlineMs?: number
  /** Each HTTP exchange. Default 15 s. */
  readonly requestTimeoutMs?: number
  /** Retries of each call (submit, poll). */
  readonly retry?: Partial<RetryPolicy>
  /** The signed URLs stay valid this long past the deadline. Default 15 minutes. */
  readonly urlGraceMs?: number
  /** The ffmpeg that decodes input and output for the report. Default `ffmpeg`. */
  readonly ffmpegPath?: string
}

const MiB = 1024 * 1024
/** S3's largest part; a single-part upload cannot be larger. */
const MAX_OUTPUT_BYTES = 5 * 1024 * MiB
/** 16-bit stereo PCM at 48 kHz: what a WAV (or, at worst, a FLAC) output needs. */
const LOSSLESS_STEREO_KBPS = 1536

/** Room for the MP3 at the model's bitrate: 1.5 × the constant-bitrate size plus 1 MiB. */
export const outputBound = (request: Pick<DenoiseRequest, "durationSeconds" | "bitrateKbps"> & Partial<Pick<DenoiseRequest, "format">>): number => {
  const seconds = Number.isFinite(request.durationSeconds) && request.durationSeconds > 0 ? request.durationSeconds : 0
  const cbr = seconds * encodedKbps(request.format ?? "mp3", request.bitrateKbps) * 1000 / 8
  return Math.min(MAX_OUTPUT_BYTES, Math.ceil(cbr * 1.5) + MiB)
}

/** The bitrate the output is sized for: the encoder's for lossy formats, 16-bit stereo PCM for lossless ones. */
const encodedKbps = (format: OutputFormat, mp3Kbps: number) =>
  format === "mp3" ? mp3Kbps : OUTPUT_FORMATS[format].bitrateKbps ?? LOSSLESS_STEREO_KBPS

/** At most `max` characters of one line: the host's words become a job's public error message. */
const tidy = (text: string, max = 300): string => {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return clean.length > max ? `${clean.slice(0, max)}…` : clean
}

const describeRemoteFailure = (job: RemoteJob): string => {
  const message = job.error?.message ?? ""
  const code = job.error?.code ?? ""
  const said = tidy(message !== "" ? message : code)
  return said === "" ? "the GPU provider failed the job" : `the GPU provider failed the job: ${said}`
}

const asDuration = (ms: number) => {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`
  if (ms % 60_000 === 0) return `${ms / 60_000} min`
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

const decodeJob = (json: unknown): Either.Either<RemoteJob, string> =>
  Either.mapLeft(decodeRemoteJob(json), (error) => tidy(error.message, 200))

type Polled = { readonly _tag: "Job"; readonly job: RemoteJob } | { readonly _tag: "Forgotten" }

export const makeHttpProviderService = (options: HttpProviderOptions) =>
  Effect.gen(function*() {
    const store = yield* BlobStore
    const name = options.name ?? DEFAULT_GPU_RUNNER
    const pollIntervalMs = options.pollIntervalMs ?? 2_000
    const deadlineMs = options.deadlineMs ?? 2 * 3_600_000
    const requestTimeoutMs = options.requestTimeoutMs ?? 15_000
    const urlGraceMs = options.urlGraceMs ?? 15 * 60_000
    const token = typeof options.token === "string" ? Redacted.make(options.token) : options.token
    const client: Client = makeClient({
      baseUrl: options.baseUrl,
      token,
      requestTimeoutMs,
      retry: { ...DEFAULT_RETRY, ...options.retry }
    })

    const jobPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`

    const submit = (jobId: string, submission: Submission): Effect.Effect<RemoteJob, ProviderFailure> =>
      client.call<RemoteJob>({
        what: "submit",
        method: "POST",
        path: "/v1/jobs",
        body: submission,
        idempotencyKey: jobId,
        decode: decodeJob
      }).pipe(Effect.flatMap((result) =>
        result._tag === "Ok"
          ? Effect.succeed(result.value)
          : Effect.fail(new ProviderFailure({ message: `GPU provider submit: unexpected HTTP ${result.reply.status}`, retryable: false }))
      ))

    const poll = (id: string): Effect.Effect<Polled, ProviderFailure> =>
      client.call<RemoteJob>({
        what: "poll",
        method: "GET",
        path: jobPath(id),
        accept: (status) => status === 404,
        decode: decodeJob
      }).pipe(Effect.map((result): Polled => result._tag === "Ok" ? { _tag: "Job", job: result.value } : { _tag: "Forgotten" }))

    /** Best effort, once, bounded by the request timeout: the answer does not matter. */
    const cancel = (id: string) =>
      client.tryOnce({
        what: "cancel",
        method: "POST",
        path: `${jobPath(id)}/cancel`,
        body: {},
        decode: (json) => Either.right(json)
      } satisfies CallSpec<unknown>).pipe(
        Effect.tap(Option.match({
          onNone: () => Effect.void,
          onSome: (reply) => Effect.logInfo(`GPU provider job ${id} canceled (HTTP ${reply.status})`)
        }))
      )

    /** The job's step spans (docs/operations.md, Traces): children of the job run's span. */
    const stepSpan = (step: string, request: DenoiseRequest, more: Record<string, unknown> = {}) =>
      Effect.withSpan(step, { attributes: { "hush.job_id": request.jobId, "hush.model": request.model, ...more } })

    /** Submits (`job.submit`), then polls (`job.wait`) until the host says succeeded (returned) or failed; `active` names a job to cancel. */
    const track = (request: DenoiseRequest, submission: Submission, active: Ref.Ref<Option.Option<string>>) =>
      Effect.gen(function*() {
        const submitted = yield* submit(request.jobId, submission).pipe(
          Effect.tap((job) => Effect.annotateCurrentSpan("hush.remote_job_id", job.id)),
          stepSpan("job.submit", request)
        )
        yield* Ref.set(active, Option.some(submitted.id))
        return yield* wait(request, submission, active, submitted).pipe(
          stepSpan("job.wait", request, { "hush.audio_seconds": request.durationSeconds })
        )
      })

    /** Polls the host's job until it succeeded (returned) or failed; a job the host forgot is submitted once more. */
    const wait = (request: DenoiseRequest, submission: Submission, active: Ref.Ref<Option.Option<string>>, submitted: RemoteJob) =>
      Effect.gen(function*() {
        let job = submitted
        let resubmitted = false
        let progress = 0
        let polls = 0
        for (;;) {
          if (job.status === "succeeded") {
            yield* Ref.set(active, Option.none())
            yield* Effect.annotateCurrentSpan("hush.polls", polls)
            return job
          }
          if (job.status === "failed") {
            yield* Ref.set(active, Option.none())
            return yield* Effect.fail(new ProviderFailure({ message: describeRemoteFailure(job), retryable: false }))
          }
          const reported = job.progress
          if (typeof reported === "number" && Number.isFinite(reported)) {
            const fraction = Math.min(1, Math.max(0, reported))
            if (fraction > progress) {
              progress = fraction
              yield* request.onProgress(fraction)
            }
          }
          yield* Effect.sleep(Duration.millis(pollIntervalMs))
          const polled = yield* poll(job.id)
          polls++
          if (polled._tag === "Job") {
            job = polled.job
            continue
          }
          // 404: the host lost the job (a restart, an eviction). Once, it gets it again under
          // the same idempotency key; a second loss is the host's failure.
          yield* Ref.set(active, Option.none())
          if (resubmitted) {
            return yield* Effect.fail(new ProviderFailure({ message: "the GPU provider lost the job twice", retryable: true }))
          }
          resubmitted = true
          yield* Effect.logWarning(`GPU provider forgot job ${job.id}: submitting it again`)
          job = yield* submit(request.jobId, submission)
          yield* Ref.set(active, Option.some(job.id))
        }
      })

    /** The output object after the host said succeeded: complete the upload, then it must exist, non-empty. */
    const collect = (request: DenoiseRequest, job: RemoteJob, uploadId: string) =>
      Effect.gen(function*() {
        const etag = job.output?.etag
        const ref = job.output?.ref
        const noOutput = (why: string) =>
          Effect.fail(new ProviderFailure({ message: `the GPU provider reported success but wrote no output (${why})`, retryable: false }))
        if (typeof etag === "string" && etag !== "") {
          // `ref` is the upload the host was given: another one than this call's when the host
          // answered a repeated submission (a new attempt of the job) with the job it already had.
          const upload = typeof ref === "string" && ref !== "" ? ref : uploadId
          yield* store.completeMultipart({ key: request.outputKey, uploadId: upload, parts: [{ partNumber: 1, etag }] }).pipe(
            // e.g. nothing was uploaded with that ETag; an earlier attempt may still have stored the object
            Effect.catchAll((error) => Effect.logWarning(`completing the GPU output failed: ${error.message}`))
          )
        }
        // A storage fault here is this service's failure (a defect), not the provider's.
        const stat = yield* Effect.orDie(store.stat(request.outputKey))
        if (Option.isNone(stat)) return yield* noOutput(etag ? "its upload could not be completed" : "no output ETag")
        if (stat.value.sizeBytes <= 0) {
          yield* Effect.ignore(store.delete(request.outputKey))
          return yield* noOutput("the output is empty")
        }
        return { sizeBytes: stat.value.sizeBytes }
      })

    /** The levels of a stored object (input or output), decoded no further than the validated duration allows. */
    const levelsOf = (request: DenoiseRequest, key: string, truePeak: boolean) =>
      measureLevels(store.read(key), { ffmpegPath: options.ffmpegPath, maxSeconds: request.durationSeconds + DECODE_MARGIN_SECONDS, truePeak })

    /**
     * The report from the input's levels (measured meanwhile) and the output's. The host's
     * loudness gain is not known: with a target it is taken as the programme's level change (the
     * denoiser's own is a few tenths), without one it is none (level unchanged).
     */
    const report = (request: DenoiseRequest, input: Fiber.Fiber<Measured, MeasureFailed>) =>
      Effect.gen(function*() {
        const before = yield* Fiber.join(input)
        const after = yield* levelsOf(request, request.outputKey, true)
        const gainDb = request.loudness === null || !Number.isFinite(before.integratedLufs) || !Number.isFinite(after.integratedLufs)
          ? 0
          : after.integratedLufs - before.integratedLufs
        return audioReport(before, after, gainDb)
      }).pipe(
        Effect.catchAll((failure) => Effect.as(Effect.logWarning(`the GPU job's report could not be measured: ${failure.message}`), null)),
        stepSpan("job.measure", request)
      )

    const denoise = (request: DenoiseRequest): Effect.Effect<DenoiseResult, ProviderFailure> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const urlsExpireAt = now + deadlineMs + urlGraceMs
        // Signing and opening uploads are this service's doing: their failure is a defect.
        const inputUrl = yield* Effect.orDie(store.signDownload({
          key: request.inputKey,
          filename: `${request.jobId}.input`,
          contentType: "application/octet-stream",
          expiresAt: urlsExpireAt
        }))
        const maxBytes = outputBound(request)
        const format = OUTPUT_FORMATS[request.format]
        const target = yield* Effect.orDie(store.createUpload({
          key: request.outputKey,
          contentType: format.contentType,
          sizeBytes: maxBytes,
          partSize: maxBytes,
          sizeIsMaximum: true,
          expiresAt: urlsExpireAt
        }))
        if (target._tag !== "Multipart" || target.parts.length !== 1) {
          return yield* Effect.dieMessage("the blob store did not open a single-part upload for the GPU output")
        }
        const submission: Submission = {
          model: request.model,
          input: { url: inputUrl, duration_seconds: request.durationSeconds },
          output: {
            url: target.parts[0].url,
            method: "PUT",
            headers: { "Content-Type": format.contentType },
            max_bytes: maxBytes,
            format: request.format,
            content_type: format.contentType,
            bitrate_kbps: encodedKbps(request.format, request.bitrateKbps),
            loudness_lufs: request.loudness,
            ref: target.uploadId
          },
          strength: request.strength,
          expires_at: new Date(urlsExpireAt).toISOString()
        }
        const active = yield* Ref.make(Option.none<string>())
        // measured while the host works; interrupted with this fiber when the job fails
        const inputLevels = yield* Effect.fork(levelsOf(request, request.inputKey, false))
        const finished = yield* track(request, submission, active).pipe(
          // Stopped while the host still runs it (interrupted, past the deadline, given up on): cancel.
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : Effect.flatMap(Ref.get(active), Option.match({ onNone: () => Effect.void, onSome: cancel }))
          ),
          Effect.timeoutFail({
            duration: Duration.millis(deadlineMs),
            onTimeout: () =>
              new ProviderFailure({ message: `the GPU provider did not finish the job within ${asDuration(deadlineMs)}`, retryable: true })
          }),
          // The job failed: the upload will not be completed. (Not on interruption: a new attempt
          // of the job may be answered with the host's running job, which writes to this upload.)
          Effect.tapError(() => Effect.ignore(store.abortMultipart({ key: request.outputKey, uploadId: target.uploadId })))
        )
        // the host put the output; completing its upload makes the object
        const { sizeBytes } = yield* collect(request, finished, target.uploadId).pipe(
          Effect.tap(({ sizeBytes }) => Effect.annotateCurrentSpan("hush.bytes", sizeBytes)),
          stepSpan("job.upload", request, { "hush.format": request.format })
        )
        const measured: AudioReportRecord | null = yield* report(request, inputLevels)
        return { sizeBytes, report: measured }
      }).pipe(Effect.annotateLogs({ provider: name }))

    return DenoiseProvider.of({ providers: [name], denoise })
  })

/** The GPU host as a DenoiseProvider layer over the blob store. */
export const layerHttpProvider = (options: HttpProviderOptions): Layer.Layer<DenoiseProvider, never, BlobStore> =>
  Layer.effect(DenoiseProvider, makeHttpProviderService(options))
