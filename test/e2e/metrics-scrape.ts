/**
 * Reading `/metrics` in the end-to-end tests: the scrape, parsed with a Prometheus text-format
 * parser. The registry is the process's (every test server in a file shares it), so a check on a
 * counter is a difference between two scrapes; gauges read at scrape are absolute.
 */
import { Option, Redacted } from "effect"
import parsePrometheus from "parse-prometheus-text-format"
import { expect } from "vitest"
import type { TestServerOptions } from "../support/server.js"

export const METRICS_TOKEN = "metrics-token-0123456789abcdef"

/** startTestServer's `observability` option that turns `/metrics` on, answering METRICS_TOKEN. */
export const metricsOn: NonNullable<TestServerOptions["observability"]> = { metricsToken: Option.some(Redacted.make(METRICS_TOKEN)) }

export type Labels = Record<string, string>
export interface Scrape {
  readonly value: (name: string, labels?: Labels) => number
  readonly histogram: (name: string, labels?: Labels) => { count: number; sum: number; buckets: Record<string, number> }
  readonly text: string
}

const matches = (have: Labels | undefined, want: Labels) => Object.entries(want).every(([k, v]) => (have ?? {})[k] === v)

/**
 * The package folds a histogram's label sets into one (prom2json's shape for an unlabelled
 * one), so histograms are read from its samples parsed untyped: `_bucket{le}`, `_sum`, `_count`.
 */
export const parse = (text: string): Scrape => {
  const typed = parsePrometheus(text)
  const untyped = parsePrometheus(text.split("\n").filter((line) => !line.startsWith("# TYPE ")).join("\n"))
  const samples = (name: string, labels: Labels) =>
    untyped.filter((f) => f.name === name).flatMap((f) => f.metrics).filter((m) => matches(m.labels, labels))
  const sum = (name: string, labels: Labels) => samples(name, labels).reduce((total, m) => total + Number(m.value), 0)
  return {
    text,
    /** The sum over the samples whose labels include `labels` (0 when none). */
    value: (name, labels = {}) => {
      const type = typed.find((f) => f.name === name)?.type
      expect(type === undefined || type === "COUNTER" || type === "GAUGE", `${name} is ${type}`).toBe(true)
      return sum(name, labels)
    },
    histogram: (name, labels = {}) => {
      expect(typed.find((f) => f.name === name)?.type ?? "HISTOGRAM").toBe("HISTOGRAM")
      const buckets: Record<string, number> = {}
      for (const m of samples(`${name}_bucket`, labels)) buckets[m.labels!.le!] = (buckets[m.labels!.le!] ?? 0) + Number(m.value)
      return { count: sum(`${name}_count`, labels), sum: sum(`${name}_sum`, labels), buckets }
    }
  }
}

/** GET `url` (a server's `/metrics`) with the token, parsed. */
export const scrape = async (url: string) => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return parse(await response.text())
}

/** `after.value − before.value` of one counter under `labels`. */
export const delta = (before: Scrape, after: Scrape, name: string, labels?: Labels) => after.value(name, labels) - before.value(name, labels)
