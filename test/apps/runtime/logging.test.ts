/** HUSH_LOG_FORMAT=json: one JSON object a line, annotations flat, the trace and span ids of the active span. */
import { Cause, Effect, FiberId, LogLevel, Option } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { DEFAULT_OBSERVABILITY, layerLogging } from "../../../apps/runtime/observability.js"
import { LogFields, logNow } from "../../../core/observability/log-fields.js"
import { layerTracing } from "../../../apps/runtime/tracing.js"

const capture = async (format: "json" | "text", program: Effect.Effect<void>, level: LogLevel.LogLevel = LogLevel.Debug) => {
  const lines: Array<string> = []
  const layer = layerLogging({ ...DEFAULT_OBSERVABILITY, logFormat: format, logLevel: Option.some(level) }, { write: (line) => lines.push(line) })
  await Effect.runPromise(program.pipe(Effect.provide(layer)))
  return lines
}

describe("log lines", () => {
  it("json: flat fields, the level, and the trace ids inside a span; none outside", async () => {
    const lines = await capture("json", Effect.zipRight(
      Effect.logDebug("outside"),
      Effect.logInfo("request").pipe(Effect.annotateLogs({ requestId: "req_1", status: 200 }), Effect.withSpan("GET /v1/health"))
    ))
    expect(lines).toHaveLength(2)
    const [outside, inside] = lines.map((line) => JSON.parse(line))
    expect(outside.level).toBe("DEBUG")
    expect(outside.traceId).toBeUndefined()
    expect(inside).toMatchObject({ message: "request", level: "INFO", requestId: "req_1", status: 200 })
    expect(inside.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(inside.spanId).toMatch(/^[0-9a-f]{16}$/)
  })

  it("text: readable key=value, with the trace id inside a span", async () => {
    const lines = await capture("text", Effect.logInfo("request").pipe(Effect.annotateLogs({ requestId: "req_2" }), Effect.withSpan("s")))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/level=INFO .*message=request .*requestId=req_2/)
    expect(lines[0]).toMatch(/traceId=[0-9a-f]{32}/)
  })

  it("the fiber is named as Effect names it (#id), in both formats", async () => {
    for (const format of ["text", "json"] as const) {
      let expected = ""
      const lines = await capture(format, Effect.flatMap(Effect.fiberId, (id) => {
        expected = FiberId.threadName(id)
        return Effect.logInfo("who")
      }))
      expect(expected).toMatch(/^#\d+$/)
      expect(format === "json" ? JSON.parse(lines[0]!).fiberId : /fiber=(\S+)/.exec(lines[0]!)?.[1]).toBe(expected)
    }
  })

  it("logNow (the edge's request line) writes what Effect.logInfo would, and only at or above the minimum level", async () => {
    const fields = new LogFields([["status", 200], ["route", "/v1/health"]])
    const both = Effect.withFiberRuntime<void>((fiber) => {
      logNow(fiber, LogLevel.Info, ["request", fields])
      return Effect.logInfo("request", fields)
    }).pipe(Effect.annotateLogs({ requestId: "req_3" }), Effect.withLogSpan("edge"), Effect.withSpan("GET /v1/health"))
    const [direct, viaEffect] = (await capture("json", both)).map((line) => JSON.parse(line))
    expect(direct).toMatchObject({ message: "request", level: "INFO", requestId: "req_3", status: 200, route: "/v1/health" })
    expect(direct.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(direct.spans.edge).toBeGreaterThanOrEqual(0)
    const { timestamp: _at, spans: _spans, ...rest } = direct
    const { timestamp: _at2, spans: _spans2, ...restViaEffect } = viaEffect
    expect(rest).toEqual(restViaEffect)
    expect(await capture("json", both, LogLevel.Warning)).toEqual([])
  })

  it("text: a value with spaces, quotes or a newline is quoted and stays on its one line", async () => {
    const lines = await capture("text", Effect.logWarning("odd \"value\"").pipe(Effect.annotateLogs({ detail: "two\nlines", plain: "x" })))
    expect(lines).toHaveLength(1)
    expect(lines[0]).not.toContain("\n")
    expect(lines[0]).toContain('message="odd \\"value\\""')
    expect(lines[0]).toContain('detail="two\\nlines" plain=x')
  })

  it("fields carried in the message (LogFields) are the line's own fields, after the fiber's annotations", async () => {
    const fields = new LogFields([["requestId", "req_3"], ["status", 201], ["route", "/v1/jobs/:job_id"]])
    const program = Effect.logInfo("request", fields).pipe(Effect.annotateLogs({ tenant: "acme" }), Effect.withLogSpan("served"))
    const [json] = (await capture("json", program)).map((line) => JSON.parse(line))
    expect(json).toMatchObject({ message: "request", tenant: "acme", requestId: "req_3", status: 201, route: "/v1/jobs/:job_id" })
    expect(Object.keys(json.spans)).toEqual(["served"])
    const [text] = await capture("text", program)
    expect(text).toMatch(/ message=request served=\d+ms tenant=acme requestId=req_3 status=201 route=\/v1\/jobs\/:job_id$/)
    // a message of several parts keeps its other parts
    const [several] = await capture("text", Effect.logInfo("a", fields, "b"))
    expect(several).toContain('message="[\\"a\\",\\"b\\"]"')
    expect(several).toContain("requestId=req_3")
  })

  it("with tracing off, spans are no-ops and no placeholder trace id reaches a line", async () => {
    const off = layerTracing(DEFAULT_OBSERVABILITY, "1.0.0")
    const lines = await capture("json", Effect.logInfo("request").pipe(Effect.withSpan("GET /v1/health"), Effect.provide(off)))
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!).traceId).toBeUndefined()
  })

  it("a failure's cause is in its line", async () => {
    const lines = await capture("json", Effect.logError("unhandled failure", Cause.fail(new Error("disk full"))))
    expect(JSON.parse(lines[0]!).cause).toContain("disk full")
  })
})

describe("stdout", () => {
  it("lines buffered for a tick are all written, even when the process exits at once", () => {
    const script = `
      import { Effect } from "effect"
      import { layerLogging, DEFAULT_OBSERVABILITY } from ${JSON.stringify(new URL("../../../apps/runtime/observability.ts", import.meta.url).pathname)}
      await Effect.runPromise(Effect.forEach([1, 2, 3], (n) => Effect.logInfo("line " + n), { discard: true }).pipe(Effect.provide(layerLogging(DEFAULT_OBSERVABILITY))))
      process.exit(0)
    `
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" })
    expect(out.trim().split("\n").map((line) => /message="?(line \d)/.exec(line)?.[1])).toEqual(["line 1", "line 2", "line 3"])
  })

  it("a reader that goes away (EPIPE) costs the lines, not the process", async () => {
    const script = `
      import { Effect } from "effect"
      import { layerLogging, DEFAULT_OBSERVABILITY } from ${JSON.stringify(new URL("../../../apps/runtime/observability.ts", import.meta.url).pathname)}
      const line = Effect.logInfo("x".repeat(1000))
      await Effect.runPromise(Effect.forEach(Array.from({ length: 400 }), () => Effect.zipRight(line, Effect.sleep("1 millis")), { discard: true }).pipe(Effect.provide(layerLogging(DEFAULT_OBSERVABILITY))))
    `
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] })
    // read the first line, then close our end of the pipe while the child keeps logging
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()))
    child.stdout.destroy()
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
    expect(code).toBe(0)
  }, 30_000)
})
