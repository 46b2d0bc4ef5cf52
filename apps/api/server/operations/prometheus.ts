/**
 * Effect's metric registry in the Prometheus text exposition format (version 0.0.4): one
 * `# HELP`/`# TYPE` per name, then a sample per label set; histograms as cumulative
 * `_bucket{le}`, `_sum` and `_count`.
 */
import { type MetricPair, MetricState } from "effect"

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")
const escapeHelp = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const number = (value: number | bigint) =>
  typeof value === "bigint" ? value.toString() : Number.isNaN(value) ? "NaN" : value === Infinity ? "+Inf" : value === -Infinity ? "-Inf" : String(value)

const labelText = (labels: ReadonlyArray<readonly [string, string]>) =>
  labels.length === 0 ? "" : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`

interface Family {
  readonly type: "counter" | "gauge" | "histogram" | "summary" | "untyped"
  readonly help: string
  readonly lines: Array<string>
}

export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: string) => {
    let found = families.get(name)
    if (found === undefined) {
      found = { type, help, lines: [] }
      families.set(name, found)
    }
    return found
  }
  for (const { metricKey, metricState } of pairs) {
    const name = metricKey.name
    const help = metricKey.description._tag === "Some" ? metricKey.description.value : name
    const labels = metricKey.tags.map((tag) => [tag.key, tag.value] as const).sort(([a], [b]) => a.localeCompare(b))
    if (MetricState.isCounterState(metricState)) {
      family(name, "counter", help).lines.push(`${name}${labelText(labels)} ${number(metricState.count)}`)
    } else if (MetricState.isGaugeState(metricState)) {
      family(name, "gauge", help).lines.push(`${name}${labelText(labels)} ${number(metricState.value)}`)
    } else if (MetricState.isHistogramState(metricState)) {
      const lines = family(name, "histogram", help).lines
      let sawInfinity = false
      for (const [boundary, cumulated] of metricState.buckets) {
        if (boundary === Infinity) sawInfinity = true
        lines.push(`${name}_bucket${labelText([...labels, ["le", number(boundary)]])} ${cumulated}`)
      }
      if (!sawInfinity) lines.push(`${name}_bucket${labelText([...labels, ["le", "+Inf"]])} ${metricState.count}`)
      lines.push(`${name}_sum${labelText(labels)} ${number(metricState.sum)}`)
      lines.push(`${name}_count${labelText(labels)} ${metricState.count}`)
    } else if (MetricState.isFrequencyState(metricState)) {
      const lines = family(name, "counter", help).lines
      for (const [word, occurrences] of metricState.occurrences) {
        lines.push(`${name}${labelText([...labels, ["value", word]])} ${occurrences}`)
      }
    } else if (MetricState.isSummaryState(metricState)) {
      const lines = family(name, "summary", help).lines
      for (const [quantile, value] of metricState.quantiles) {
        if (value._tag === "Some") lines.push(`${name}${labelText([...labels, ["quantile", String(quantile)]])} ${number(value.value)}`)
      }
      lines.push(`${name}_sum${labelText(labels)} ${number(metricState.sum)}`)
      lines.push(`${name}_count${labelText(labels)} ${metricState.count}`)
    }
  }
  const out: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const { type, help, lines } = families.get(name)!
    out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`, ...lines)
  }
  return out.join("\n") + "\n"
}
