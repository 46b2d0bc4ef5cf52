/** The LifecycleRepo contract: the sweeper's queries, written once for every adapter. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { LifecycleRepo } from "../../core/ports/lifecycle.js"
import { FileRepo, JobRepo } from "../../core/ports/repositories.js"
import { DAY, HOUR, jobOutput, makeFile, makeJob, T0 } from "./fixtures.js"

export const lifecycleContract = (
  name: string,
  makeLayer: () => Layer.Layer<LifecycleRepo | FileRepo | JobRepo, unknown, never>
) => {
  describe(`${name} LifecycleRepo`, () => {
    const run = <A, E>(body: Effect.Effect<A, E, LifecycleRepo | FileRepo | JobRepo>) => Effect.provide(body, makeLayer())

    it.effect("sweepableFiles picks each status by its own threshold, oldest first, limited", () =>
      run(Effect.gen(function*() {
        const files = yield* FileRepo
        const lapsed = makeFile({ status: "uploading", uploadExpiresAt: T0 - HOUR, createdAt: T0 - 7 * HOUR })
        const open = makeFile({ status: "uploading", uploadExpiresAt: T0 + HOUR, createdAt: T0 - 5 * HOUR })
        const oldReady = makeFile({ status: "ready", readyAt: T0 - 8 * DAY, createdAt: T0 - 9 * DAY })
        const freshReady = makeFile({ status: "ready", readyAt: T0 - DAY, createdAt: T0 - 2 * DAY })
        const oldRejected = makeFile({ status: "rejected", rejectedAt: T0 - 2 * DAY, createdAt: T0 - 3 * DAY })
        const freshRejected = makeFile({ status: "rejected", rejectedAt: T0 - HOUR, createdAt: T0 - 2 * HOUR })
        const validating = makeFile({ status: "validating", createdAt: T0 - 10 * DAY })
        for (const f of [lapsed, open, oldReady, freshReady, oldRejected, freshRejected, validating]) yield* files.insert(f)
        const repo = yield* LifecycleRepo
        const query = { uploadClosedBefore: T0, readyBefore: T0 - 7 * DAY, rejectedBefore: T0 - DAY, limit: 10 }
        const due = yield* repo.sweepableFiles(query)
        expect(due.map((f) => f.id)).toEqual([oldReady.id, oldRejected.id, lapsed.id])
        expect(due[0]).toEqual(oldReady)
        expect((yield* repo.sweepableFiles({ ...query, limit: 2 })).map((f) => f.id)).toEqual([oldReady.id, oldRejected.id])
      })))

    it.effect("validatingFiles lists files left validating, oldest completion first", () =>
      run(Effect.gen(function*() {
        const files = yield* FileRepo
        const later = makeFile({ status: "validating", completedAt: T0 - HOUR })
        const earlier = makeFile({ status: "validating", completedAt: T0 - 2 * HOUR })
        const ready = makeFile({ status: "ready", completedAt: T0 - 3 * HOUR, readyAt: T0 - 3 * HOUR })
        for (const f of [later, earlier, ready]) yield* files.insert(f)
        const repo = yield* LifecycleRepo
        expect((yield* repo.validatingFiles(10)).map((f) => f.id)).toEqual([earlier.id, later.id])
        expect((yield* repo.validatingFiles(1)).map((f) => f.id)).toEqual([earlier.id])
      })))

    it.effect("expiredOutputs lists succeeded jobs finished before the threshold whose output is not deleted", () =>
      run(Effect.gen(function*() {
        const jobs = yield* JobRepo
        const old = makeJob({ status: "succeeded", finishedAt: T0 - 8 * DAY, output: jobOutput({ deletedAt: null }) })
        const older = makeJob({ status: "succeeded", finishedAt: T0 - 9 * DAY, output: jobOutput({ deletedAt: null }) })
        const fresh = makeJob({ status: "succeeded", finishedAt: T0 - DAY, output: jobOutput({ deletedAt: null }) })
        const deleted = makeJob({ status: "succeeded", finishedAt: T0 - 9 * DAY, output: jobOutput({ deletedAt: T0 - DAY }) })
        const failed = makeJob({ status: "failed", finishedAt: T0 - 9 * DAY, output: null })
        for (const j of [old, older, fresh, deleted, failed]) yield* jobs.insert(j)
        const repo = yield* LifecycleRepo
        const due = yield* repo.expiredOutputs({ finishedBefore: T0 - 7 * DAY, limit: 10 })
        expect(due.map((j) => j.id)).toEqual([older.id, old.id])
        expect(due[1]).toEqual(old)
        expect((yield* repo.expiredOutputs({ finishedBefore: T0 - 7 * DAY, limit: 1 })).map((j) => j.id)).toEqual([older.id])
      })))
  })
}
