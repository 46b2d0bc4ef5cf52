/**
 * Usage over a range of days, by day, model or key: a chart of jobs per day, a table of the
 * days that had jobs (or of each model or key) with the totals under it, and a CSV that keeps
 * every day of the range, empty ones included.
 */
import { useState } from "preact/hooks"
import { call } from "../api.js"
import { BarChart } from "../chart.js"
import { formatDuration } from "../format.js"
import type { UsageGroup, UsageResponse, UsageRow } from "../../../../core/schema/dashboard.js"
import type { Mode } from "../../../../core/domain/enums.js"
import { Empty, Field, formatDay, Page, Show, Table, useLoad } from "../ui.js"

const DAY = 86_400_000
const isoDay = (millis: number) => new Date(millis).toISOString().slice(0, 10)

const csvCell = (value: string | number | null) => {
  const text = value === null ? "" : String(value)
  // quoted when needed; a leading = + - @ is neutralised so a spreadsheet never runs it
  const safe = typeof value === "string" && /^[=+\-@]/.test(text) ? `'${text}` : text
  return /[",\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

const toCsv = (usage: UsageResponse) => {
  const head = [usage.group, "name", "jobs", "succeeded", "failed", "billable_seconds", "charged_micros", "charged"]
  const rows = usage.rows.map((r) => [r.key, r.name, r.jobs, r.succeeded, r.failed, r.billable_seconds, r.charged_micros, r.display])
  return [head, ...rows].map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n"
}

const GROUP_LABEL: Record<UsageGroup, string> = { day: "Day", model: "Model", key: "Key" }

/** One day's (or the range's) numbers in words, as the chart's readout says them. */
export const usageInWords = (row: Pick<UsageRow, "jobs" | "succeeded" | "billable_seconds" | "display">) =>
  `${row.jobs} job${row.jobs === 1 ? "" : "s"}, ${row.succeeded} succeeded, ${formatDuration(row.billable_seconds)} billed, ${row.display} charged`

/** Jobs per day as a chart: the overview's and the usage page's. */
export const JobsChart = ({ usage }: { readonly usage: UsageResponse }) => (
  <BarChart
    title={`Jobs per day, ${formatDay(usage.from)} to ${formatDay(usage.to)}`}
    yLabel="Jobs"
    bars={usage.rows.map((row) => ({ day: row.key ?? "", value: row.jobs, detail: usageInWords(row) }))}
    summary={`In total: ${usageInWords(usage.totals)}. Point at a day, or focus the chart and use the arrow keys, to read it.`}
  />
)

export const UsagePage = () => {
  const today = Date.now()
  const [form, setForm] = useState({ from: isoDay(today - 29 * DAY), to: isoDay(today), group: "day" as UsageGroup, mode: "live" as Mode })
  const [query, setQuery] = useState(form)
  const [usage, reload] = useLoad(() => call((api) => api.dashboard.getUsage({ urlParams: query })), [query])
  return (
    <Page title="Usage">
      <form class="filters" onSubmit={(event) => {
        event.preventDefault()
        setQuery(form)
      }}>
        <Field label="From"><input type="date" name="from" required value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} /></Field>
        <Field label="To"><input type="date" name="to" required value={form.to} onInput={(e) => setForm({ ...form, to: e.currentTarget.value })} /></Field>
        <Field label="Group by">
          <select name="group" value={form.group} onChange={(e) => setForm({ ...form, group: e.currentTarget.value as UsageGroup })}>
            <option value="day">Day</option><option value="model">Model</option><option value="key">Key</option>
          </select>
        </Field>
        <Field label="Mode">
          <select name="mode" value={form.mode} onChange={(e) => setForm({ ...form, mode: e.currentTarget.value as Mode })}>
            <option value="live">Live</option><option value="test">Test</option>
          </select>
        </Field>
        <button type="submit">Show</button>
      </form>
      <Show loaded={usage} what="usage" retry={reload}>
        {(u) => u.totals.jobs === 0 ? <Empty>No {u.mode} jobs from {formatDay(u.from)} to {formatDay(u.to)}.</Empty> : (
          <>
            {u.group === "day" && <JobsChart usage={u} />}
            <Table
              label={u.group === "day" ? "Usage on the days with jobs, with the totals" : `Usage by ${u.group}, with the totals`}
              head={[GROUP_LABEL[u.group], "Jobs", "Succeeded", "Failed", "Billed audio", "Charged"]}
              rows={u.rows.filter((r) => u.group !== "day" || r.jobs > 0).map((r, i) => ({
                key: `${r.key}-${i}`,
                named: true,
                cells: [
                  u.group === "day" ? formatDay(r.key ?? "") : u.group === "key" ? (r.name || r.key || "(removed key)") : r.key,
                  r.jobs, r.succeeded, r.failed, formatDuration(r.billable_seconds), r.display
                ]
              }))}
              foot={{
                key: "total",
                named: true,
                cells: ["Total", u.totals.jobs, u.totals.succeeded, u.totals.failed, formatDuration(u.totals.billable_seconds), u.totals.display]
              }}
            />
            <p>
              <a class="button secondary" download={`hush-usage-${u.mode}-${u.from}-${u.to}-by-${u.group}.csv`}
                href={`data:text/csv;charset=utf-8,${encodeURIComponent(toCsv(u))}`}>
                Download CSV{u.group === "day" ? " (every day of the range)" : ""}
              </a>
            </p>
          </>
        )}
      </Show>
    </Page>
  )
}
