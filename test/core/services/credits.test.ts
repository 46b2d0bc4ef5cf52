/**
 * Credit lots: expiry and holds on expiring lots (core/services/credits.ts, the wallet),
 * end to end over the in-memory adapters (test/core/services/support.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { createDenoiseJob } from "../../../core/services/jobs.js"
import { claimNext, succeedJob } from "../../../core/services/worker.js"
import { DAY } from "../../../core/time.js"
import { riff } from "../../support/riff-probe.js"
import { credits, ledgerOf, OUTPUT, readyFile, run, signup } from "./support.js"

describe("credit lots", () => {
  it.effect("a grant expires after 365 days with an expiry ledger entry", () =>
    run(Effect.gen(function*() {
      const { live, account } = yield* signup({ creditMicros: 10_000_000 })
      expect(yield* credits(live)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, availableMicros: 10_000_000 })
      yield* TestClock.adjust(365 * DAY - 1)
      expect((yield* credits(live)).availableMicros).toBe(10_000_000)
      yield* TestClock.adjust(DAY + 1)
      expect(yield* credits(live)).toEqual({ balanceMicros: 0, reservedMicros: 0, availableMicros: 0 })
      const entries = yield* ledgerOf(account.id)
      expect(entries.map((e) => e.kind)).toEqual(["grant", "expiry"])
      expect(entries[1]).toMatchObject({ balanceDelta: -10_000_000, reservedDelta: 0, balanceAfter: 0, reservedAfter: 0 })
      // reading again writes nothing more
      yield* credits(live)
      expect(yield* ledgerOf(account.id)).toHaveLength(2)
    })))

  it.effect("credit held on a lot that expires stays held and is captured normally", () =>
    run(Effect.gen(function*() {
      const { live, account } = yield* signup({ creditMicros: 5_000 })
      const file = yield* readyFile(live, riff(12.5))
      const job = yield* createDenoiseJob(live, { file: file.id })
      yield* TestClock.adjust(366 * DAY)
      expect(yield* credits(live)).toEqual({ balanceMicros: 1300, reservedMicros: 1300, availableMicros: 0 })
      yield* claimNext("w1")
      const done = yield* succeedJob(job.id, "w1", OUTPUT)
      expect(done.chargedMicros).toBe(1300)
      expect(yield* credits(live)).toEqual({ balanceMicros: 0, reservedMicros: 0, availableMicros: 0 })
      expect((yield* ledgerOf(account.id)).map((e) => [e.kind, e.balanceDelta])).toEqual([
        ["grant", 5_000], ["hold", 0], ["expiry", -3_700], ["capture", -1300]
      ])
    })))
})
