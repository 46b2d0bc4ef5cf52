/** Handlers of the `dashboardWork` group: the keyed files and jobs handlers' services, acted by the session (core/services/caller.ts, sessionActor). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { LimitsConfig } from "../../../../core/domain/limits.js"
import type { JobRecord } from "../../../../core/domain/records.js"
import { OutputLink } from "../../../../core/schema/index.js"
import { sessionActor } from "../../../../core/services/caller.js"
import { completeFile, createFile, getFile } from "../../../../core/services/files.js"
import { cancelJob, inputLinkOf } from "../../../../core/services/jobs.js"
import { presentCreateOut, presentFile } from "../../../../core/services/present.js"
import { presentDashboardJob } from "../../../../core/services/present-dashboard.js"
import { CurrentSession } from "../../../../core/domain/caller.js"
import { submitDenoiseJob } from "../../../../core/services/worker.js"
import { toIso } from "../../../../core/time.js"
import { Background } from "../background.js"
import { HushApi } from "../../contract/definition.js"

/** The signed-in account acting in live mode (a frozen one is refused, as its keys are). */
const actor = Effect.flatMap(CurrentSession, (signedIn) => sessionActor(signedIn.account))

/** No key made these jobs: the dashboard's summary shows none. */
const NO_KEYS = new Map()

export const DashboardWorkHandlers = HttpApiBuilder.group(HushApi, "dashboardWork", (handlers) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    const background = yield* Background
    const presentJob = (job: JobRecord) => presentDashboardJob(job, NO_KEYS, limits)
    return handlers
      .handle("createDashboardFile", ({ payload }) =>
        Effect.flatMap(actor, (acting) =>
          createFile(acting, { filename: payload.filename, sizeBytes: payload.size_bytes, contentType: payload.content_type })).pipe(
            Effect.map((created) => presentCreateOut(created.file, created.upload, created.expiresAt))
          ))
      .handle("getDashboardFile", ({ path }) =>
        Effect.flatMap(actor, (acting) => getFile(acting, path.file_id)).pipe(Effect.map((file) => presentFile(file, limits))))
      .handle("completeDashboardFile", ({ path, payload }) =>
        Effect.gen(function*() {
          const parts = payload.parts?.map((p) => ({ partNumber: p.part_number, etag: p.etag })) ?? null
          const file = yield* completeFile(yield* actor, path.file_id, parts)
          if (file.status === "validating") yield* background.validate(file)
          return presentFile(file, limits)
        }))
      .handle("createDashboardDenoiseJob", ({ payload }) =>
        // live mode: the worker claims the job; nothing is finished on the request's side
        Effect.flatMap(actor, (acting) => submitDenoiseJob(acting, payload)).pipe(Effect.map(({ job }) => presentJob(job))))
      .handle("cancelDashboardJob", ({ path }) =>
        Effect.flatMap(actor, (acting) => cancelJob(acting, path.job_id)).pipe(Effect.map(presentJob)))
      .handle("getDashboardJobInput", ({ path, urlParams }) =>
        Effect.flatMap(CurrentSession, (s) => inputLinkOf({ accountId: s.account.id, mode: urlParams.mode ?? "live" }, path.job_id)).pipe(
          Effect.map((link) => new OutputLink({ url: link.url, expires_at: toIso(link.expiresAt), filename: link.filename }))
        ))
  }))
