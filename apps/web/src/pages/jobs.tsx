/** Jobs: the list with filters; each row leads to the job's page (./job.tsx). */
import { useState } from "preact/hooks"
import { call } from "../api.js"
import { formatDuration } from "../format.js"
import { money } from "../money.js"
import type { DashboardJob } from "../../../../core/schema/dashboard.js"
import type { JobStatus, Mode } from "../../../../core/domain/enums.js"
import { Link } from "../router.js"
import { Empty, Field, formatDate, Page, Show, Table, useLoad } from "../ui.js"

export const jobHref = (job: Pick<DashboardJob, "id" | "mode">) => `/dashboard/jobs/${job.id}${job.mode === "live" ? "" : "?mode=test"}`

/** What the job costs, said for its state: held while it runs, charged on success, nothing otherwise. */
export const costText = (job: Pick<DashboardJob, "status" | "mode" | "cost">) => {
  if (job.mode === "test") return `${money(0)} (test mode: never charged)`
  switch (job.status) {
    case "queued":
    case "processing": return `${money(job.cost.estimated_micros)} held`
    case "succeeded": return `${money(job.cost.charged_micros ?? 0)} charged`
    default: return `${money(0)} (not charged)`
  }
}

export const StatusText = ({ job }: { readonly job: Pick<DashboardJob, "status" | "progress"> }) => (
  <span class={`status status-${job.status}`}>
    {job.status}{job.status === "processing" && ` (${Math.round(job.progress * 100)} %)`}
  </span>
)

export const JobsTable = ({ label, jobs }: { readonly label: string; readonly jobs: ReadonlyArray<DashboardJob> }) => (
  <Table label={label} head={["File", "Status", "Duration", "Cost", "Created"]} rows={jobs.map((job) => ({
    key: job.id,
    named: true,
    cells: [
      <Link href={jobHref(job)}>{job.input.filename}</Link>,
      <StatusText job={job} />,
      formatDuration(job.input.duration_seconds),
      costText(job),
      formatDate(job.created_at)
    ]
  }))} />
)

const STATUSES: ReadonlyArray<JobStatus> = ["queued", "processing", "succeeded", "failed", "canceled"]

interface Filters {
  readonly status: JobStatus | ""
  readonly model: string
  readonly mode: Mode
}

export const JobsPage = () => {
  const [form, setForm] = useState<Filters>({ status: "", model: "", mode: "live" })
  const [filters, setFilters] = useState(form)
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const cursor = cursors[cursors.length - 1]
  const [page, reload] = useLoad(() => call((api) => api.dashboard.listDashboardJobs({
    urlParams: {
      limit: 25,
      cursor,
      mode: filters.mode,
      status: filters.status === "" ? undefined : filters.status,
      model: filters.model.trim() === "" ? undefined : filters.model.trim()
    }
  })), [filters, cursor])
  return (
    <Page title="Jobs">
      <p><Link href="/dashboard/new" class="button">Denoise a file</Link></p>
      <form class="filters" onSubmit={(event) => {
        event.preventDefault()
        setFilters(form)
        setCursors([undefined])
      }}>
        <Field label="Status">
          <select name="status" value={form.status} onChange={(e) => setForm({ ...form, status: e.currentTarget.value as JobStatus | "" })}>
            <option value="">Any</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
        <Field label="Model"><input type="text" name="model" placeholder="xiph/rnnoise" value={form.model} onInput={(e) => setForm({ ...form, model: e.currentTarget.value })} /></Field>
        <Field label="Mode">
          <select name="mode" value={form.mode} onChange={(e) => setForm({ ...form, mode: e.currentTarget.value as Mode })}>
            <option value="live">Live</option><option value="test">Test</option>
          </select>
        </Field>
        <button type="submit">Filter</button>
      </form>
      <Show loaded={page} what="jobs" retry={reload}>
        {(p) => (
          <>
            {p.data.length === 0 ? <Empty>No {filters.mode} jobs match.</Empty> : (
              <JobsTable label={`${filters.mode === "live" ? "Live" : "Test"} jobs, newest first`} jobs={p.data} />
            )}
            {filters.mode === "test" && p.data.length > 0 && (
              <p class="notice">Test jobs return Hush's sample clip, not your audio, and are never charged.</p>
            )}
            <div class="row pager">
              <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>Newer jobs</button>
              <button type="button" class="secondary" disabled={p.next_cursor === null} onClick={() => p.next_cursor !== null && setCursors([...cursors, p.next_cursor])}>Older jobs</button>
            </div>
          </>
        )}
      </Show>
    </Page>
  )
}
