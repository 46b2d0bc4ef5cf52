import { Context, Effect } from "effect"
import type { FileRecord, JobRecord } from "../domain/records.js"

/** The queries of the lifecycle sweeper: what has outlived its retention. */
export class LifecycleRepo extends Context.Tag("hush/LifecycleRepo")<LifecycleRepo, {
  /**
   * Files to purge: `uploading` whose window closed before `uploadClosedBefore`, `ready` since
   * before `readyBefore`, `rejected` since before `rejectedBefore`. Oldest first.
   */
  readonly sweepableFiles: (query: {
    readonly uploadClosedBefore: number
    readonly readyBefore: number
    readonly rejectedBefore: number
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<FileRecord>>
  /** Files left `validating` (e.g. by a restart), oldest completion first: their validation is resumed. */
  readonly validatingFiles: (limit: number) => Effect.Effect<ReadonlyArray<FileRecord>>
  /** Succeeded jobs finished before `finishedBefore` whose output is not yet deleted. */
  readonly expiredOutputs: (query: { readonly finishedBefore: number; readonly limit: number }) =>
    Effect.Effect<ReadonlyArray<JobRecord>>
}>() {}
