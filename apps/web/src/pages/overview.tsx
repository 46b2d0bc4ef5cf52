/** Balance, the last 30 days of usage and the latest jobs. */
import { call } from "../api.js"
import { Link } from "../router.js"
import { Empty, Page, Show, useLoad } from "../ui.js"
import { JobsTable } from "./jobs.js"
import { CreditSummary } from "./credits.js"
import { JobsChart } from "./usage.js"

export const OverviewPage = () => {
  const [credits, reloadCredits] = useLoad(() => call((api) => api.dashboard.getDashboardCredits()), [])
  const [usage, reloadUsage] = useLoad(() => call((api) => api.dashboard.getUsage({ urlParams: { group: "day", mode: "live" } })), [])
  const [jobs, reloadJobs] = useLoad(() => call((api) => api.dashboard.listDashboardJobs({ urlParams: { limit: 5, mode: "live" } })), [])
  return (
    <Page title="Overview">
      <section aria-labelledby="balance-heading">
        <h2 id="balance-heading">Credit</h2>
        <Show loaded={credits} what="your credit" retry={reloadCredits}>{(c) => <CreditSummary credits={c} />}</Show>
      </section>
      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">Live jobs, last 30 days</h2>
        <Show loaded={usage} what="usage" retry={reloadUsage}>
          {(u) => u.totals.jobs === 0 ? <Empty>No live jobs in the last 30 days.</Empty> : (
            <>
              <JobsChart usage={u} />
              <p><Link href="/dashboard/usage">Usage details</Link></p>
            </>
          )}
        </Show>
      </section>
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Recent live jobs</h2>
        <Show loaded={jobs} what="recent jobs" retry={reloadJobs}>
          {(page) => page.data.length === 0
            ? <Empty>No live jobs yet. <Link href="/dashboard/new">Denoise a file</Link> here, or send one with a live key: see <a href="/docs">the API reference</a>.</Empty>
            : (
              <>
                <JobsTable label="Recent live jobs" jobs={page.data} />
                <p><Link href="/dashboard/jobs">All jobs</Link> · <Link href="/dashboard/new">Denoise a file</Link></p>
              </>
            )}
        </Show>
      </section>
    </Page>
  )
}
