import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { LimitsConfig } from "../../../../core/domain/limits.js"
import { JobPage, OutputLink } from "../../../../core/schema/index.js"
import { CurrentCaller } from "../../../../core/domain/caller.js"
import { cancelJob, getJob, getOutputLink, listJobs } from "../../../../core/services/jobs.js"
import { submitDenoiseJob } from "../../../../core/services/worker.js"
import { presentJob } from "../../../../core/services/present.js"
import { toIso } from "../../../../core/time.js"
import { Background } from "../background.js"
import { HushApi } from "../../contract/definition.js"
import { jsonAnswer } from "../edge/json-answer.js"

export const JobsHandlers = HttpApiBuilder.group(HushApi, "jobs", (handlers) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    const background = yield* Background
    const present = (job: Parameters<typeof presentJob>[0]) => presentJob(job, limits)
    const answer = {
      created: yield* jsonAnswer(HushApi, "jobs", "createDenoiseJob"),
      page: yield* jsonAnswer(HushApi, "jobs", "listJobs"),
      job: yield* jsonAnswer(HushApi, "jobs", "getJob"),
      canceled: yield* jsonAnswer(HushApi, "jobs", "cancelJob")
    }
    return handlers
      .handle("createDenoiseJob", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          // the edge checked and recorded the key (edge/idempotency.ts); the job's id derives from it
          const idempotencyKey = (yield* HttpServerRequest.HttpServerRequest).headers["idempotency-key"]
          const { finishLater, job } = yield* submitDenoiseJob(caller, payload, idempotencyKey)
          if (finishLater) yield* background.finishTestJob(job)
          return answer.created(present(job))
        }))
      .handle("listJobs", ({ urlParams }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const page = yield* listJobs(caller, urlParams)
          return answer.page(new JobPage({ data: page.data.map(present), next_cursor: page.nextCursor }))
        }))
      .handle("getJob", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => getJob(caller, path.job_id)).pipe(Effect.map((job) => answer.job(present(job)))))
      .handle("cancelJob", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => cancelJob(caller, path.job_id)).pipe(Effect.map((job) => answer.canceled(present(job)))))
      .handle("getJobOutput", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => getOutputLink(caller, path.job_id)).pipe(
          Effect.map((link) => new OutputLink({ url: link.url, expires_at: toIso(link.expiresAt), filename: link.filename }))
        ))
  }))
