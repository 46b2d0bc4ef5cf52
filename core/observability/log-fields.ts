/**
 * Fields of one log record carried in its message: `Effect.logInfo("request", new LogFields(…))`.
 * The process's logger (apps/runtime/log-lines.ts) writes them as the line's own fields, after
 * the fiber's annotations. A line logged on every request costs less this way than through
 * `Effect.annotateLogs`: no annotation map built and no fiber-ref copy per line (measured: the
 * request line was ~13 % of a poll's CPU).
 */
import { Cause, Clock, Context, type Fiber, FiberRef, HashSet, type Logger, LogLevel } from "effect"

export class LogFields {
  constructor(readonly entries: ReadonlyArray<readonly [string, unknown]>) {}

  /** `key=value …`, for any other logger that prints a message's parts as text. */
  toString(): string {
    return this.entries.map(([key, value]) => `${key}=${String(value)}`).join(" ")
  }

  /** The fields as one object, for a logger that writes a message's parts as JSON. */
  toJSON(): { [key: string]: unknown } {
    return Object.fromEntries(this.entries)
  }
}

/**
 * Logs `message` at `level` from `fiber` as `Effect.log…` would (the fiber's minimum level, its
 * loggers, spans and annotations, its clock's time), in the caller's step of the runtime. For
 * the request line the edge writes on every request: through `Effect.logInfo` that line cost
 * ~19 µs of a health check's ~160 (measured side by side, 2026-11-27), most of it the log
 * effect's own step and fiber-ref bookkeeping rather than the line.
 */
export const logNow = (fiber: Fiber.RuntimeFiber<unknown, unknown>, level: LogLevel.LogLevel, message: ReadonlyArray<unknown>): void => {
  if (LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), level)) return
  const loggers = fiber.getFiberRef(FiberRef.currentLoggers)
  if (HashSet.size(loggers) === 0) return
  const options: Logger.Logger.Options<unknown> = {
    fiberId: fiber.id(),
    logLevel: level,
    message,
    cause: Cause.empty,
    context: fiber.getFiberRefs(),
    spans: fiber.getFiberRef(FiberRef.currentLogSpan),
    annotations: fiber.getFiberRef(FiberRef.currentLogAnnotations),
    date: new Date(Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis())
  }
  for (const logger of loggers) logger.log(options)
}
