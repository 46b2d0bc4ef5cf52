/** Handlers of the `dashboard` group: the session's own account, keys, credit, ledger, usage and jobs. */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { LimitsConfig } from "../../../../core/domain/limits.js"
import {
  CheckoutResponse, DashboardJobPage, KeyCreateResponse, KeyList, LedgerPage, OutputLink, UsageResponse
} from "../../../../core/schema/index.js"
import { revokeKey } from "../../../../core/services/accounts.js"
import { dashboardCredits, dashboardJob, dashboardJobs, ledgerPage, usageReport } from "../../../../core/services/dashboard-reports.js"
import { createDashboardKey, listKeys, updateAccount } from "../../../../core/services/dashboard.js"
import {
  presentAccount, presentDashboardCredits, presentDashboardJob, presentDashboardJobDetail, presentKey, presentLedgerEntry
} from "../../../../core/services/present-dashboard.js"
import { outputLinkOf } from "../../../../core/services/jobs.js"
import { startCheckout } from "../../../../core/services/payments.js"
import { CurrentSession } from "../../../../core/domain/caller.js"
import { toIso } from "../../../../core/time.js"
import { HushApi } from "../../contract/definition.js"

const markReplayed = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "idempotent-replayed", "true")))

export const DashboardHandlers = HttpApiBuilder.group(HushApi, "dashboard", (handlers) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    return handlers
      .handle("getAccount", () => Effect.map(CurrentSession, (s) => presentAccount(s.account)))
      .handle("updateAccount", ({ payload }) =>
        Effect.flatMap(CurrentSession, (s) => updateAccount(s, payload)).pipe(Effect.map(presentAccount)))
      .handle("listKeys", () =>
        Effect.flatMap(CurrentSession, (s) => listKeys(s.account.id)).pipe(Effect.map((keys) => new KeyList({ data: keys.map(presentKey) }))))
      .handle("createKey", ({ payload, headers }) =>
        Effect.gen(function*() {
          const signedIn = yield* CurrentSession
          const created = yield* createDashboardKey(signedIn, payload, headers["idempotency-key"])
          if (created._tag === "ReplayedRefusal") return yield* Effect.zipRight(markReplayed, Effect.fail(created.error))
          if (created.replayed) yield* markReplayed
          return new KeyCreateResponse({ key: presentKey(created.record), secret: created.secret, already_displayed: created.replayed })
        }))
      .handle("revokeKey", ({ path }) =>
        Effect.flatMap(CurrentSession, (s) => revokeKey(s.account.id, path.key_id)).pipe(Effect.map(presentKey)))
      .handle("getDashboardCredits", () =>
        Effect.gen(function*() {
          const signedIn = yield* CurrentSession
          const view = yield* dashboardCredits(signedIn.account)
          return presentDashboardCredits(view.credits, signedIn.account, view.lots, view.truncated)
        }))
      .handle("createCheckout", ({ payload, headers }) =>
        Effect.gen(function*() {
          const signedIn = yield* CurrentSession
          const started = yield* startCheckout(signedIn, payload.amount_micros, headers["idempotency-key"])
          if (started.replayed) yield* markReplayed
          return new CheckoutResponse({ checkout_id: started.checkout.id, url: started.checkout.url })
        }))
      .handle("getLedger", ({ urlParams }) =>
        Effect.flatMap(CurrentSession, (s) => ledgerPage(s.account.id, urlParams)).pipe(
          Effect.map((page) => new LedgerPage({ data: page.data.map(presentLedgerEntry), next_cursor: page.nextCursor }))
        ))
      .handle("getUsage", ({ urlParams }) =>
        Effect.flatMap(CurrentSession, (s) => usageReport(s.account.id, urlParams)).pipe(
          Effect.map((report) => {
            const wire = (l: typeof report.rows[number]) => ({
              key: l.key, name: l.name, jobs: l.jobs, succeeded: l.succeeded, failed: l.failed,
              billable_seconds: l.billableSeconds, charged_micros: l.chargedMicros, display: l.display
            })
            const { totals } = report
            return new UsageResponse({
              from: report.from, to: report.to, group: report.group, mode: report.mode,
              rows: report.rows.map(wire),
              totals: {
                jobs: totals.jobs, succeeded: totals.succeeded, failed: totals.failed,
                billable_seconds: totals.billableSeconds, charged_micros: totals.chargedMicros, display: totals.display
              }
            })
          })
        ))
      .handle("listDashboardJobs", ({ urlParams }) =>
        Effect.flatMap(CurrentSession, (s) => dashboardJobs(s.account.id, urlParams)).pipe(
          Effect.map((page) => new DashboardJobPage({
            data: page.data.map((job) => presentDashboardJob(job, page.keys, limits)),
            next_cursor: page.nextCursor
          }))
        ))
      .handle("getDashboardJob", ({ path, urlParams }) =>
        Effect.flatMap(CurrentSession, (s) => dashboardJob(s.account.id, path.job_id, urlParams.mode)).pipe(
          Effect.map((found) => presentDashboardJobDetail(found.job, found.keys, found.ledger, limits))
        ))
      .handle("getDashboardJobOutput", ({ path, urlParams }) =>
        Effect.flatMap(CurrentSession, (s) => outputLinkOf({ accountId: s.account.id, mode: urlParams.mode ?? "live" }, path.job_id)).pipe(
          Effect.map((link) => new OutputLink({ url: link.url, expires_at: toIso(link.expiresAt), filename: link.filename }))
        ))
  }))
