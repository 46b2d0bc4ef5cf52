/** Balance, the last 30 days of usage and the latest jobs. */
import { call } from "../api.js"
import { Link } from "../router.js"
import { BarChart, Empty, Page, Show, Table, useLoad } from "../ui.js"
import { JobRow, JOB_COLUMNS } from "./jobs.js"
import { CreditSummary } from "./credits.js"

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
              <BarChart title={`Jobs per day, ${u.from} to ${u.to}`} bars={u.rows.map((row) => ({ label: row.key ?? "", value: row.jobs, text: `${row.jobs} jobs, ${row.display}` }))} />
              <p>{u.totals.jobs} jobs, {u.totals.succeeded} succeeded, {u.totals.billable_seconds} billable seconds, {u.totals.display} charged. <Link href="/dashboard/usage">Usage details</Link></p>
            </>
          )}
        </Show>
      </section>
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Recent live jobs</h2>
        <Show loaded={jobs} what="recent jobs" retry={reloadJobs}>
          {(page) => page.data.length === 0
            ? <Empty>No live jobs yet. Create a live key and send a job with it: see <a href="/docs">the API reference</a>.</Empty>
            : (
              <>
                <Table label="Recent live jobs" head={JOB_COLUMNS}>{page.data.map((job) => <JobRow key={job.id} job={job} />)}</Table>
                <p><Link href="/dashboard/jobs">All jobs</Link></p>
              </>
            )}
        </Show>
      </section>
    </Page>
  )
}
