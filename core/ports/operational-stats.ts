/**
 * What an operator's metrics read from the store at scrape time: how many jobs wait or run,
 * the oldest one waiting, and the database's connections. Cheap aggregate reads only.
 */
import { Context, type Effect, type Option } from "effect"
import type { JobStatus, Mode } from "../domain/enums.js"

export interface JobCount {
  readonly state: JobStatus
  readonly model: string
  readonly mode: Mode
  readonly count: number
}

export interface QueueSnapshot {
  /** Jobs `queued` or `processing`, by state, model and mode. */
  readonly active: ReadonlyArray<JobCount>
  /** When the oldest live `queued` job was created; null when none waits. */
  readonly oldestQueuedAt: number | null
}

export interface ConnectionSnapshot {
  /** Connections to this database by their state (`active`, `idle`, `idle in transaction`…), every client. */
  readonly byState: ReadonlyArray<{ readonly state: string; readonly count: number }>
  readonly maxConnections: number
}

export class OperationalStats extends Context.Tag("hush/OperationalStats")<OperationalStats, {
  readonly queue: Effect.Effect<QueueSnapshot>
  /** None where there is no database server (memory). */
  readonly connections: Effect.Effect<Option.Option<ConnectionSnapshot>>
}>() {}
