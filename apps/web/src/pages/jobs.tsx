/** Jobs: the list with filters, and one job with its ledger entries and its output. */
import { useState } from "preact/hooks"
import { call } from "../api.js"
import type { DashboardJob } from "../../../../core/schema/dashboard.js"
import type { JobStatus, Mode } from "../../../../core/domain/enums.js"
import { Link, useLocation } from "../router.js"
import { Empty, Field, FormError, formatDate, Page, Show, Table, useAction, useLoad } from "../ui.js"

export const JOB_COLUMNS = ["Job", "Status", "Model", "Audio", "Cost", "Key", "Created"]

const modeQuery = (mode: Mode) => (mode === "live" ? "" : `?mode=${mode}`)

export const JobRow = ({ job }: { readonly job: DashboardJob }) => (
  <tr>
    <td><Link href={`/dashboard/jobs/${job.id}${modeQuery(job.mode)}`}><code>{job.id}</code></Link></td>
    <td><span class={`status status-${job.status}`}>{job.status}</span></td>
    <td>{job.model}</td>
    <td>{job.input.duration_seconds.toFixed(1)} s</td>
    <td>{job.cost.display}</td>
    <td>{job.key?.name || job.key?.id || "—"}</td>
    <td>{formatDate(job.created_at)}</td>
  </tr>
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
              <Table label={`${filters.mode === "live" ? "Live" : "Test"} jobs, newest first`} head={JOB_COLUMNS}>
                {p.data.map((job) => <JobRow key={job.id} job={job} />)}
              </Table>
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

export const JobPage = ({ id }: { readonly id: string }) => {
  const { query } = useLocation()
  const mode: Mode = query.get("mode") === "test" ? "test" : "live"
  const [job, reload] = useLoad(() => call((api) => api.dashboard.getDashboardJob({ path: { job_id: id }, urlParams: { mode } })), [id, mode])
  const download = useAction()
  return (
    <Page title={`Job ${id}`}>
      <p><Link href="/dashboard/jobs">All jobs</Link></p>
      <Show loaded={job} what="the job" retry={reload}>
        {(j) => (
          <>
            <dl class="details">
              <dt>Status</dt><dd><span class={`status status-${j.status}`}>{j.status}</span>{j.status === "processing" && ` (${Math.round(j.progress * 100)} %)`}</dd>
              <dt>Mode</dt><dd>{j.mode}</dd>
              <dt>Model</dt><dd>{j.model}</dd>
              <dt>Input</dt><dd><code>{j.input.file}</code>, {j.input.duration_seconds.toFixed(2)} s</dd>
              <dt>Cost</dt><dd>{j.cost.display}{j.receipt.minimum_applied && " (minimum applied)"}, {j.receipt.billable_seconds} billable seconds</dd>
              <dt>Key</dt><dd>{j.key ? `${j.key.name || j.key.id} (${j.key.mode})` : "removed"}</dd>
              <dt>Created</dt><dd>{formatDate(j.created_at)}</dd>
              <dt>Started</dt><dd>{formatDate(j.started_at)}</dd>
              <dt>Finished</dt><dd>{formatDate(j.finished_at)}</dd>
              {j.error && <><dt>Error</dt><dd>{j.error.code}: {j.error.message}</dd></>}
              {j.output && <><dt>Output</dt><dd>{j.output.format}, {j.output.bitrate_kbps} kbps, {(j.output.size_bytes / 1024).toFixed(0)} KiB, kept until {formatDate(j.output.expires_at)}</dd></>}
            </dl>
            {j.status === "succeeded" && (
              <p>
                <button type="button" disabled={download.busy} onClick={() =>
                  download.run(() => call((api) => api.dashboard.getDashboardJobOutput({ path: { job_id: j.id }, urlParams: { mode } })))
                    .then((link) => link && location.assign(link.url))}>
                  Download output
                </button>
              </p>
            )}
            <FormError error={download.error} />
            <h2>Ledger entries</h2>
            {j.ledger.length === 0 ? <Empty>No ledger entries: test jobs never hold or charge credit.</Empty> : (
              <Table label="The job's ledger entries, oldest first" head={["Date", "Kind", "Amount"]}>
                {j.ledger.map((entry) => (
                  <tr key={entry.id}><td>{formatDate(entry.created_at)}</td><td>{entry.kind}</td><td>{entry.display}</td></tr>
                ))}
              </Table>
            )}
          </>
        )}
      </Show>
    </Page>
  )
}
