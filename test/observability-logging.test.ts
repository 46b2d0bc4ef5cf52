/** HUSH_LOG_FORMAT=json: one JSON object a line, annotations flat, the trace and span ids of the active span. */
import { Effect, LogLevel, Option } from "effect"
import { describe, expect, it, vi } from "vitest"
import { DEFAULT_OBSERVABILITY, loggingLayer } from "../apps/runtime/observability.js"

const capture = async (format: "json" | "text", program: Effect.Effect<void>) => {
  const lines: Array<string> = []
  const spy = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => {
    lines.push(args.map(String).join(" "))
  })
  try {
    const layer = loggingLayer({ ...DEFAULT_OBSERVABILITY, logFormat: format, logLevel: Option.some(LogLevel.Debug) })
    await Effect.runPromise(program.pipe(Effect.provide(layer)))
  } finally {
    spy.mockRestore()
  }
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
})
