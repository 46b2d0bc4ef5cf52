/** Usage over a range of days, by day, model or key: chart, table and CSV. */
import { useState } from "preact/hooks"
import { call } from "../api.js"
import type { UsageGroup, UsageResponse } from "../../../../core/schema/dashboard.js"
import type { Mode } from "../../../../core/domain/enums.js"
import { BarChart, Empty, Field, Page, Show, Table, useLoad } from "../ui.js"

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
        {(u) => u.totals.jobs === 0 ? <Empty>No {u.mode} jobs from {u.from} to {u.to}.</Empty> : (
          <>
            {u.group === "day" && <BarChart title={`Jobs per day, ${u.from} to ${u.to}`} bars={u.rows.map((r) => ({ label: r.key ?? "", value: r.jobs, text: `${r.jobs} jobs, ${r.display}` }))} />}
            <Table label={`Usage by ${u.group}`} head={[GROUP_LABEL[u.group], "Jobs", "Succeeded", "Failed", "Billable seconds", "Charged"]}>
              {u.rows.map((r, i) => (
                <tr key={`${r.key}-${i}`}>
                  <td>{u.group === "key" ? (r.name || r.key || "(removed key)") : r.key}</td>
                  <td>{r.jobs}</td><td>{r.succeeded}</td><td>{r.failed}</td><td>{r.billable_seconds}</td><td>{r.display}</td>
                </tr>
              ))}
              <tr class="total">
                <th scope="row">Total</th>
                <td>{u.totals.jobs}</td><td>{u.totals.succeeded}</td><td>{u.totals.failed}</td><td>{u.totals.billable_seconds}</td><td>{u.totals.display}</td>
              </tr>
            </Table>
            <p>
              <a class="button secondary" download={`hush-usage-${u.mode}-${u.from}-${u.to}-by-${u.group}.csv`}
                href={`data:text/csv;charset=utf-8,${encodeURIComponent(toCsv(u))}`}>
                Download CSV
              </a>
            </p>
          </>
        )}
      </Show>
    </Page>
  )
}
