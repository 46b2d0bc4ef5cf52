/**
 * The process's log lines, made by hand: one logfmt or JSON line per record, with the active
 * span's trace ids, written to stdout a tick's lines at a time.
 *
 * Why not Effect's `Logger.defaultLogger` and `console.log`: every request writes a line, and
 * that path cost ~90 µs a line (console.log alone ~17 µs, a synchronous write per line to a
 * file), more than the rest of a health request (docs/operations.md, "Metrics, tracing and
 * logging cost").
 */
import { Cause, Context, FiberId, FiberRef, FiberRefs, HashMap, List, Logger, Option, Tracer } from "effect"
import { writeSync } from "node:fs"
import { LogFields } from "../../core/observability/log-fields.js"
import { isRecorded } from "../../core/observability/spans.js"

/** Where finished lines go. */
export interface LineSink {
  readonly write: (line: string) => void
}

/**
 * stdout, buffered for one turn of the event loop: a burst of requests costs one write, not one
 * each. Whatever is buffered is written synchronously when the process exits, so a line logged
 * just before `process.exit` is not lost.
 */
export const stdoutSink = (): LineSink => {
  let pending: Array<string> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const text = pending.join("\n") + "\n"
    pending = []
    process.stdout.write(text)
  }
  // like console.log: a reader that went away (EPIPE) costs the lines, never the process
  process.stdout.on("error", () => {})
  process.once("exit", () => {
    try {
      if (pending.length > 0) writeSync(1, pending.join("\n") + "\n")
    } catch {
      // stdout closed: nothing to write to
    }
    pending = []
  })
  return {
    write: (line) => {
      pending.push(line)
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    }
  }
}

interface LogRecord {
  readonly timestamp: string
  readonly level: string
  readonly fiber: string
  readonly message: unknown
  readonly cause: string | undefined
  readonly spans: ReadonlyArray<readonly [string, number]>
  readonly fields: ReadonlyArray<readonly [string, unknown]>
}

/** The active span's ids (none when tracing is off: its spans are no-ops). */
const traceFields = (refs: FiberRefs.FiberRefs): ReadonlyArray<readonly [string, string]> => {
  const span = Context.getOption(FiberRefs.getOrDefault(refs, FiberRef.currentContext), Tracer.ParentSpan)
  return Option.isSome(span) && isRecorded(span.value) ? [["traceId", span.value.traceId], ["spanId", span.value.spanId]] : []
}

/** `#12`, as `FiberId.threadName` writes it, without the HashSet it builds for a single fiber's id (every line has one). */
const threadNameOf = (fiberId: FiberId.FiberId): string =>
  fiberId._tag === "Runtime" ? `#${fiberId.id}` : FiberId.threadName(fiberId)

const recordOf = (options: Logger.Logger.Options<unknown>): LogRecord => {
  const now = options.date.getTime()
  const spans: Array<readonly [string, number]> = []
  for (let list = options.spans; List.isCons(list); list = list.tail) spans.push([list.head.label, now - list.head.startTime])
  // forEach, not toEntries: no iterator objects for what is usually an empty map
  const fields: Array<readonly [string, unknown]> = []
  HashMap.forEach(options.annotations, (value, key) => fields.push([key, value]))
  const parts = Array.isArray(options.message) ? options.message : [options.message]
  const text: Array<unknown> = []
  for (const part of parts) {
    if (part instanceof LogFields) fields.push(...part.entries)
    else text.push(part)
  }
  fields.push(...traceFields(options.context))
  return {
    timestamp: options.date.toISOString(),
    level: options.logLevel.label,
    fiber: threadNameOf(options.fiberId),
    message: text.length === 1 ? text[0] : text,
    cause: Cause.isEmpty(options.cause) ? undefined : Cause.pretty(options.cause, { renderErrorCause: true }),
    spans,
    fields
  }
}

const textOf = (value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** A logfmt value: bare when it can be, else quoted with JSON's escapes (so a value never breaks the line). */
const logfmtValue = (value: unknown) => {
  const text = textOf(value)
  return /^[^\s"=\\]+$/.test(text) ? text : JSON.stringify(text)
}

/** `timestamp=… level=INFO fiber=#12 message=request requestId=req_… traceId=…` (Effect's logfmt, by hand). */
export const logfmtLine = (options: Logger.Logger.Options<unknown>): string => {
  const r = recordOf(options)
  let line = `timestamp=${r.timestamp} level=${r.level} fiber=${r.fiber} message=${logfmtValue(r.message)}`
  if (r.cause !== undefined) line += ` cause=${logfmtValue(r.cause)}`
  for (const [label, ms] of r.spans) line += ` ${logfmtValue(label)}=${ms}ms`
  for (const [key, value] of r.fields) line += ` ${logfmtValue(key)}=${logfmtValue(value)}`
  return line
}

/** `{"timestamp":…,"level":"INFO","message":"request","requestId":…}`: flat, as log shippers expect. */
export const jsonLine = (options: Logger.Logger.Options<unknown>): string => {
  const r = recordOf(options)
  const object: { [key: string]: unknown } = { timestamp: r.timestamp, level: r.level, fiberId: r.fiber, message: r.message }
  if (r.cause !== undefined) object["cause"] = r.cause
  if (r.spans.length > 0) object["spans"] = Object.fromEntries(r.spans)
  for (const [key, value] of r.fields) object[key] = value
  try {
    return JSON.stringify(object)
  } catch {
    return JSON.stringify({ ...object, message: textOf(r.message), unserializable: true })
  }
}

/** A logger writing one line per record to `sink`. */
export const lineLogger = (format: "json" | "text", sink: LineSink): Logger.Logger<unknown, void> => {
  const line = format === "json" ? jsonLine : logfmtLine
  return Logger.make((options) => sink.write(line(options)))
}
