/**
 * One job: what it was given and asked for, what it costs, its report, its state (updated by
 * itself while it runs: polled, backing off from 1 s to 10 s while nothing changes), cancel while
 * queued, the input and output side by side with their spectrograms, the download, and its
 * ledger entries.
 */
import { useEffect, useState } from "preact/hooks"
import { ApiProblem, call, describeError } from "../api.js"
import { AudioPreview } from "../audio.js"
import { formatBytes, formatDuration } from "../format.js"
import { money } from "../money.js"
import type { DashboardJobDetail } from "../../../../core/schema/dashboard.js"
import type { Mode } from "../../../../core/domain/enums.js"
import { Link, useLocation } from "../router.js"
import { Empty, Failure, FormError, formatDate, Loading, Page, Table, useAction } from "../ui.js"
import { change } from "./ledger.js"
import { costText, StatusText } from "./jobs.js"

const FINISHED = new Set(["succeeded", "failed", "canceled"])
const FIRST_POLL_MS = 1_000
const LONGEST_POLL_MS = 10_000

const FORMATS: Record<string, string> = {
  mp3: "MP3, 192 kbps", wav: "WAV, 16-bit PCM", flac: "FLAC, lossless", opus: "Opus in Ogg, 96 kbps"
}

const strengthText = (strength: number | null) => {
  if (strength === null) return "automatic: chosen for the file so clean speech is never made worse"
  if (strength >= 1) return "1: removes all the noise it can"
  if (strength <= 0) return "0: the sound is left as it is"
  const left = 20 * Math.log10(1 - strength)
  return `${strength}: leaves at most ${Math.round((1 - strength) * 100)} % of the noise (${left.toFixed(1)} dB)`
}

const decibels = (value: number, unit: string) => `${value.toFixed(1)} ${unit}`.replace("-", "−")

/** The job, read again and again while it runs; `refresh` reads it at once (after a cancel). */
const useLiveJob = (id: string, mode: Mode) => {
  const [job, setJob] = useState<DashboardJobDetail | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [generation, setGeneration] = useState(0)
  useEffect(() => {
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let delay = FIRST_POLL_MS
    let seen = ""
    const poll = async () => {
      try {
        const next = await call((api) => api.dashboard.getDashboardJob({ path: { job_id: id }, urlParams: { mode } }))
        if (stopped) return
        setJob(next)
        setError(null)
        const now = `${next.status}:${next.progress}`
        // back off while nothing changes; start again from the shortest wait when it does
        delay = now === seen ? Math.min(LONGEST_POLL_MS, delay * 1.5) : FIRST_POLL_MS
        seen = now
        if (!FINISHED.has(next.status)) timer = setTimeout(poll, delay)
      } catch (failure) {
        if (stopped) return
        setError(describeError(failure))
        // an unknown job stays unknown; anything else is tried again
        if (!(failure instanceof ApiProblem && failure.status === 404)) timer = setTimeout(poll, (delay = Math.min(LONGEST_POLL_MS, delay * 2)))
      }
    }
    void poll()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [id, mode, generation])
  return { job, error, refresh: () => setGeneration((g) => g + 1) }
}

/** A signed link from the dashboard, or why there is none. */
const useLink = (load: (() => Promise<{ readonly url: string }>) | null, deps: ReadonlyArray<unknown>) => {
  const [link, setLink] = useState<{ readonly url: string | null; readonly why: string }>({ url: null, why: "Loading…" })
  useEffect(() => {
    if (load === null) return
    let current = true
    load().then((answer) => current && setLink({ url: answer.url, why: "" }), (error) => current && setLink({ url: null, why: describeError(error) }))
    return () => {
      current = false
    }
  }, deps)
  return link
}

const Details = ({ job }: { readonly job: DashboardJobDetail }) => {
  // decisions.md, Denoise options: Report (a succeeded live job's levels; null otherwise)
  const { options, receipt, report } = job
  return (
    <dl class="details">
      <dt>File</dt><dd>{job.input.filename} <span class="muted">(<code>{job.input.file}</code>)</span></dd>
      <dt>Duration</dt><dd>{formatDuration(job.input.duration_seconds)}</dd>
      <dt>Model</dt><dd>{job.model}</dd>
      <dt>Strength</dt><dd>{strengthText(options.strength)}</dd>
      <dt>Output format</dt><dd>{FORMATS[options.output.format] ?? options.output.format}</dd>
      <dt>Loudness</dt><dd>{options.output.loudness === null ? "unchanged" : `${decibels(options.output.loudness, "LUFS")} (EBU R128), true peak at most −1 dBTP`}</dd>
      <dt>Cost</dt><dd>{costText(job)}</dd>
      <dt>Receipt</dt>
      <dd>
        {receipt.billable_seconds} billable seconds at {money(receipt.unit_price_micros)} a second
        {receipt.minimum_applied && " (the model's minimum applied)"}, pricing version {receipt.pricing_version}
        {receipt.ledger_txn_id !== null && <>; ledger entry <code>{receipt.ledger_txn_id}</code></>}
      </dd>
      {report !== null && (
        <>
          <dt>Report</dt>
          <dd data-testid="report">
            Loudness {decibels(report.input_loudness_lufs, "LUFS")} in, {decibels(report.output_loudness_lufs, "LUFS")} out;
            true peak {decibels(report.output_true_peak_dbtp, "dBTP")}; noise floor lowered by {decibels(report.noise_reduction_db, "dB")}
          </dd>
        </>
      )}
      <dt>Mode</dt><dd>{job.mode}</dd>
      <dt>Key</dt><dd>{job.key ? `${job.key.name || job.key.id} (${job.key.mode})` : "none: started from the dashboard, or its key was removed"}</dd>
      <dt>Created</dt><dd>{formatDate(job.created_at)}</dd>
      <dt>Started</dt><dd>{formatDate(job.started_at)}</dd>
      <dt>Finished</dt><dd>{formatDate(job.finished_at)}</dd>
      {job.error && <><dt>Error</dt><dd>{job.error.code}: {job.error.message}</dd></>}
      {job.output && (
        <><dt>Output</dt><dd>{FORMATS[job.output.format] ?? job.output.format}, {formatBytes(job.output.size_bytes)}, kept until {formatDate(job.output.expires_at)}</dd></>
      )}
    </dl>
  )
}

const State = ({ job, onCanceled }: { readonly job: DashboardJobDetail; readonly onCanceled: () => void }) => {
  const cancel = useAction()
  return (
    <section aria-labelledby="state-heading">
      <h2 id="state-heading">Status</h2>
      <p role="status" aria-live="polite" data-testid="job-status"><StatusText job={job} /></p>
      {!FINISHED.has(job.status) && (
        <progress max={1} value={job.status === "queued" ? 0 : job.progress} aria-label="Progress of the job">{Math.round(job.progress * 100)} %</progress>
      )}
      {job.status === "queued" && (
        <p>
          <button type="button" class="danger" disabled={cancel.busy} onClick={() =>
            cancel.run(() => call((api) => api.work.cancelDashboardJob({ path: { job_id: job.id }, headers: {} }))).then((r) => r && onCanceled())}>
            Cancel job
          </button>
          <span class="muted"> Its hold is released; nothing is charged.</span>
        </p>
      )}
      <FormError error={cancel.error} />
    </section>
  )
}

const Listen = ({ job, mode }: { readonly job: DashboardJobDetail; readonly mode: Mode }) => {
  const succeeded = job.status === "succeeded"
  const input = useLink(() => call((api) => api.work.getDashboardJobInput({ path: { job_id: job.id }, urlParams: { mode } })), [job.id, mode])
  const output = useLink(
    succeeded ? () => call((api) => api.dashboard.getDashboardJobOutput({ path: { job_id: job.id }, urlParams: { mode } })) : null,
    [job.id, mode, succeeded]
  )
  const download = useAction()
  return (
    <section aria-labelledby="listen-heading">
      <h2 id="listen-heading">Listen</h2>
      <div class="players">
        <AudioPreview title="Input" url={input.url} why={input.why} seconds={job.input.duration_seconds} />
        <AudioPreview title="Output" url={output.url} seconds={job.input.duration_seconds}
          why={succeeded ? output.why : job.status === "failed" ? "No output: the job failed." : job.status === "canceled" ? "No output: the job was canceled." : "The output plays here once the job has succeeded."}
          note={job.mode === "test" ? "(the sample clip: test mode)" : undefined} />
      </div>
      {succeeded && (
        <p>
          <button type="button" disabled={download.busy} onClick={() =>
            download.run(() => call((api) => api.dashboard.getDashboardJobOutput({ path: { job_id: job.id }, urlParams: { mode } })))
              .then((link) => link && location.assign(link.url))}>
            Download output
          </button>
        </p>
      )}
      <FormError error={download.error} />
    </section>
  )
}

export const JobPage = ({ id }: { readonly id: string }) => {
  const { query } = useLocation()
  const mode: Mode = query.get("mode") === "test" ? "test" : "live"
  const { job, error, refresh } = useLiveJob(id, mode)
  return (
    <Page title={job === null ? "Job" : job.input.filename}>
      <p><Link href="/dashboard/jobs">All jobs</Link> · <Link href="/dashboard/new">Denoise another file</Link></p>
      {job === null ? (error === null ? <Loading what="the job" /> : <Failure message={error} retry={refresh} />) : (
        <>
          {job.mode === "test" && (
            <p class="notice" role="note">Test mode: the output is Hush's sample clip, not your audio, and nothing was charged.</p>
          )}
          {error !== null && <p class="notice" role="status">Could not refresh the job ({error}); trying again.</p>}
          <State job={job} onCanceled={refresh} />
          <Listen job={job} mode={mode} />
          <h2>Details</h2>
          <Details job={job} />
          <h2>Ledger entries</h2>
          {job.ledger.length === 0 ? <Empty>No ledger entries: {job.mode === "test" ? "test jobs never hold or charge credit" : "nothing was held"}.</Empty> : (
            <Table label="The job's ledger entries, oldest first" head={["Date", "Kind", "Change to balance", "Change to reserved"]}
              rows={job.ledger.map((entry) => ({
                key: entry.id,
                cells: [formatDate(entry.created_at), entry.kind, change(entry.balance_delta), change(entry.reserved_delta)]
              }))} />
          )}
        </>
      )}
    </Page>
  )
}
