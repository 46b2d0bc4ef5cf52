/**
 * The worker side of jobs: succeed, fail and lapsed leases (core/services/worker.ts),
 * end to end over the in-memory adapters (test/core/services/support.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { createDenoiseJob, getJob } from "../../../core/services/jobs.js"
import { claimNext, failJob, heartbeat, recoverLapsedLeases, succeedJob } from "../../../core/services/worker.js"
import { SECOND } from "../../../core/time.js"
import { riff } from "../../support/riff-probe.js"
import { credits, ledgerForJob, OUTPUT, readyFile, run, signup } from "./support.js"

describe("worker", () => {
  it.effect("succeedJob captures exactly the hold, exactly once", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      yield* TestClock.adjust("1 second")
      const claimed = Option.getOrThrow(yield* claimNext("w1"))
      expect(claimed).toMatchObject({ id: job.id, status: "processing", attempts: 1, leaseOwner: "w1", startedAt: SECOND })
      expect(Option.isNone(yield* claimNext("w2"))).toBe(true)
      const hb = yield* heartbeat(job.id, "w1", 0.4)
      expect(hb.progress).toBe(0.4)
      expect((yield* Effect.flip(heartbeat(job.id, "w2", 0.5)))._tag).toBe("JobTransitionRefused")
      // another worker may not finish it, and charges nothing trying
      expect((yield* Effect.flip(succeedJob(job.id, "w2", OUTPUT)))._tag).toBe("JobTransitionRefused")
      expect(yield* ledgerForJob(job.id)).toHaveLength(1)

      yield* TestClock.adjust("1 second")
      const done = yield* succeedJob(job.id, "w1", OUTPUT)
      expect(done).toMatchObject({ status: "succeeded", progress: 1, chargedMicros: 1300, finishedAt: 2 * SECOND })
      const entries = yield* ledgerForJob(job.id)
      const captures = entries.filter((e) => e.kind === "capture")
      expect(captures).toHaveLength(1)
      expect(captures[0]).toMatchObject({ balanceDelta: -1300, reservedDelta: -1300 })
      expect(done.ledgerTxnId).toBe(captures[0]!.id)
      expect(yield* credits(live)).toEqual({ balanceMicros: 9_998_700, reservedMicros: 0, availableMicros: 9_998_700 })

      const again = yield* Effect.flip(succeedJob(job.id, "w1", OUTPUT))
      expect(again._tag).toBe("JobTransitionRefused")
      expect(yield* ledgerForJob(job.id)).toHaveLength(2)
      expect((yield* credits(live)).balanceMicros).toBe(9_998_700)
      expect((yield* Effect.flip(failJob(job.id, "w1", { code: "internal_error", detail: "late" })))._tag)
        .toBe("JobTransitionRefused")
      expect((yield* getJob(live, job.id)).status).toBe("succeeded")
    })))

  it.effect("failJob releases the hold, no charge", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      yield* claimNext("w1")
      const failed = yield* failJob(job.id, "w1", { code: "provider_error", detail: "gpu went away" })
      expect(failed).toMatchObject({ status: "failed", chargedMicros: null, error: { code: "provider_error" } })
      expect((yield* ledgerForJob(job.id)).map((e) => e.kind)).toEqual(["hold", "release"])
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
      expect((yield* Effect.flip(succeedJob(job.id, "w1", OUTPUT)))._tag).toBe("JobTransitionRefused")
      expect(yield* ledgerForJob(job.id)).toHaveLength(2)
    })))

  it.effect("recoverLapsedLeases: back to queued, then failed internal_error after 3 lapses, no charge", () =>
    run(Effect.gen(function*() {
      const { live } = yield* signup({ creditMicros: 10_000_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })

      // a heartbeat keeps the lease
      yield* claimNext("w0")
      yield* TestClock.adjust("20 seconds")
      yield* heartbeat(job.id, "w0")
      yield* TestClock.adjust("20 seconds")
      expect(yield* recoverLapsedLeases()).toBe(0)
      expect((yield* getJob(live, job.id)).status).toBe("processing")
      yield* TestClock.adjust("11 seconds")
      expect(yield* recoverLapsedLeases()).toBe(1)
      let current = yield* getJob(live, job.id)
      expect(current).toMatchObject({ status: "queued", attempts: 1, progress: 0, leaseOwner: null })

      for (const attempt of [2, 3]) {
        const claimed = Option.getOrThrow(yield* claimNext(`w${attempt}`))
        expect(claimed.attempts).toBe(attempt)
        yield* TestClock.adjust(30 * SECOND + 1)
        expect(yield* recoverLapsedLeases()).toBe(1)
        current = yield* getJob(live, job.id)
      }
      expect(current).toMatchObject({ status: "failed", chargedMicros: null, error: { code: "internal_error" } })
      expect((yield* ledgerForJob(job.id)).map((e) => e.kind)).toEqual(["hold", "release"])
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
      // the worker that lost it cannot succeed it
      expect((yield* Effect.flip(succeedJob(job.id, "w3", OUTPUT)))._tag).toBe("JobTransitionRefused")
      expect(Option.isNone(yield* claimNext("w4"))).toBe(true)
    })))
})
