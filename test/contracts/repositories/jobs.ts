/** The repository contract, JobRepo (see test/contracts/repositories.ts). */
import { describe, expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { AudioReportRecord } from "../../../core/domain/audio-report.js"
import type { Mode } from "../../../core/domain/enums.js"
import { JobRecord } from "../../../core/domain/records.js"
import { type JobListQuery, JobRepo } from "../../../core/ports/repositories.js"
import { transactionally } from "../../../core/ports/transactor.js"
import { WebhookRepo } from "../../../core/ports/webhooks.js"
import { DAY, HOUR, jobError, jobOutput, makeJob, pricing, SECOND, T0 } from "../fixtures.js"
import { makeEndpoint } from "../webhooks.js"
import { byId, type ContractTests, expectNone, expectSome, newestFirst } from "./support.js"

export const jobRepoContract = ({ test, raceTest }: ContractTests) => {
  describe("JobRepo", () => {
    test("insert then get returns the record, nested pricing, output and error included", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const succeeded = makeJob({
        accountId: "acct_a", status: "succeeded", progress: 1, keyId: null, durationSeconds: 0.5,
        pricing: pricing({ billableSeconds: 10, minimumApplied: true, estimatedMicros: 3_000_000_000 }),
        chargedMicros: 3_000_000_000, ledgerTxnId: "txn_capture", output: jobOutput({ deletedAt: T0 + 7 * DAY }),
        attempts: 1, startedAt: T0 + 1, finishedAt: T0 + 2
      })
      const failed = makeJob({
        accountId: "acct_a", mode: "test", status: "failed", progress: 0.375, error: jobError(),
        attempts: 3, leaseOwner: "worker-7", leaseExpiresAt: T0 + 60_000, startedAt: T0 + 1, finishedAt: T0 + 3
      })
      const queued = makeJob({ accountId: "acct_a" })
      for (const j of [succeeded, failed, queued]) yield* jobs.insert(j)
      expect(expectSome(yield* jobs.get(succeeded.id))).toEqual(succeeded)
      expect(expectSome(yield* jobs.get(failed.id))).toEqual(failed)
      expect(expectSome(yield* jobs.get(queued.id))).toEqual(queued)
      expectNone(yield* jobs.get("job_unknown"))
    }))

    test("a succeeded job's report is stored with its output and read back to the decimal", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const report = new AudioReportRecord({ inputLoudnessLufs: -20.9, outputLoudnessLufs: -16, outputTruePeakDbtp: -1.3, noiseReductionDb: 49.5 })
      const running = makeJob({ accountId: "acct_a", status: "processing", attempts: 1, startedAt: T0 + 1 })
      yield* jobs.insert(running)
      expect(expectSome(yield* jobs.get(running.id)).output).toBeNull()
      const done = new JobRecord({ ...running, status: "succeeded", progress: 1, output: jobOutput({ report }), finishedAt: T0 + 2 })
      yield* jobs.update(done)
      const read = expectSome(yield* jobs.get(running.id))
      expect(read).toEqual(done)
      expect(read.output?.report).toEqual(report)
      // without one (a test job, another provider) it stays null
      const plain = makeJob({ accountId: "acct_a", status: "succeeded", progress: 1, output: jobOutput(), finishedAt: T0 + 2 })
      yield* jobs.insert(plain)
      expect(expectSome(yield* jobs.get(plain.id)).output?.report).toBeNull()
    }))

    test("update replaces the stored fields", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const j = makeJob({ accountId: "acct_a" })
      const other = makeJob({ accountId: "acct_a" })
      yield* jobs.insert(j)
      yield* jobs.insert(other)
      const processing = makeJob({
        ...j, status: "processing", attempts: 1, leaseOwner: "w1", leaseExpiresAt: T0 + 30_000, startedAt: T0 + 1,
        progress: 0.25
      })
      yield* jobs.update(processing)
      expect(expectSome(yield* jobs.get(j.id))).toEqual(processing)
      const done = makeJob({
        ...processing, status: "succeeded", progress: 1, leaseOwner: null, leaseExpiresAt: null,
        output: jobOutput(), chargedMicros: 12_400, ledgerTxnId: "txn_x", finishedAt: T0 + 9
      })
      yield* jobs.update(done)
      expect(expectSome(yield* jobs.get(j.id))).toEqual(done)
      expect(expectSome(yield* jobs.get(other.id))).toEqual(other)
    }))

    test("insertUnlessSubscribed inserts only while no enabled endpoint of the job's account and mode subscribes", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const webhooks = yield* WebhookRepo
      const done = makeJob({
        accountId: "acct_a", mode: "test", status: "succeeded", progress: 1, output: jobOutput(), chargedMicros: 0, startedAt: T0 + 1, finishedAt: T0 + 2
      })
      // endpoints that do not count: another account, the other mode, a disabled one, other events
      yield* webhooks.insertEndpoint(makeEndpoint({ accountId: "acct_b", mode: "test", events: ["job.succeeded"] }))
      yield* webhooks.insertEndpoint(makeEndpoint({ accountId: "acct_a", mode: "live", events: ["job.succeeded"] }))
      yield* webhooks.insertEndpoint(makeEndpoint({ accountId: "acct_a", mode: "test", events: ["job.succeeded"], status: "disabled", disabledAt: T0 }))
      yield* webhooks.insertEndpoint(makeEndpoint({ accountId: "acct_a", mode: "test", events: ["job.failed", "file.ready"] }))
      const subscriber = makeEndpoint({ accountId: "acct_a", mode: "test", events: ["file.ready", "job.succeeded"] })
      yield* webhooks.insertEndpoint(subscriber)
      expect(yield* jobs.insertUnlessSubscribed(done, "job.succeeded")).toBe(false)
      expectNone(yield* jobs.get(done.id))
      // the event nobody subscribes to does not hold the insert back, and every field is stored
      expect(yield* jobs.insertUnlessSubscribed(done, "job.canceled")).toBe(true)
      expect(expectSome(yield* jobs.get(done.id))).toEqual(done)
      // nor does the subscriber once it is gone
      const other = makeJob({ accountId: "acct_a", mode: "test", options: done.options })
      yield* webhooks.deleteEndpoint(subscriber.id)
      expect(yield* jobs.insertUnlessSubscribed(other, "job.succeeded")).toBe(true)
      expect(expectSome(yield* jobs.get(other.id))).toEqual(other)
    }))

    test("insertNew and insertUnlessSubscribed write nothing and answer false when a job has the id", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const first = makeJob({ accountId: "acct_a", mode: "live" })
      expect(yield* jobs.insertNew(first)).toBe(true)
      expect(expectSome(yield* jobs.get(first.id))).toEqual(first)
      // another request's job under the same id (another file, options, status): the first stays
      const second = makeJob({ ...first, fileId: "file_other", progress: 0.5 })
      expect(yield* jobs.insertNew(second)).toBe(false)
      const done = makeJob({
        ...first, status: "succeeded", progress: 1, output: jobOutput(), chargedMicros: 0, startedAt: T0 + 1, finishedAt: T0 + 2
      })
      expect(yield* jobs.insertUnlessSubscribed(done, "job.succeeded")).toBe(false)
      expect(expectSome(yield* jobs.get(first.id))).toEqual(first)
    }))

    /** 25 jobs of acct_a/live, 4 per createdAt, ids not in insertion or time order; plus noise. */
    const seedListing = Effect.gen(function*() {
      const jobs = yield* JobRepo
      const statuses = ["queued", "processing", "succeeded", "failed", "canceled"] as const
      const mine = Array.from({ length: 25 }, (_, i) =>
        makeJob({
          id: `job_${String((i * 11) % 25).padStart(3, "0")}`,
          accountId: "acct_a",
          mode: "live",
          createdAt: T0 + Math.floor(i / 4) * SECOND,
          status: statuses[i % 5],
          model: i % 2 === 0 ? "xiph/rnnoise" : "acme/clean-v2"
        }))
      const noise = [
        makeJob({ id: "job_900", accountId: "acct_b", mode: "live", createdAt: T0 + 2 * SECOND }),
        makeJob({ id: "job_901", accountId: "acct_a", mode: "test", createdAt: T0 + 2 * SECOND }),
        makeJob({ id: "job_902", accountId: "acct_a", mode: "test", createdAt: T0 + 9 * SECOND }),
        makeJob({ id: "job_903", accountId: "acct_b", mode: "live", createdAt: T0 - SECOND })
      ]
      for (let i = 0; i < 25; i++) {
        yield* jobs.insert(mine[(i * 7) % 25])
        if (i % 6 === 0 && i / 6 < noise.length) yield* jobs.insert(noise[i / 6])
      }
      return { mine, sorted: [...mine].sort(newestFirst) }
    })

    const pageThrough = (query: Omit<JobListQuery, "after" | "limit">, limit: number) =>
      Effect.gen(function*() {
        const jobs = yield* JobRepo
        const pages: Array<ReadonlyArray<JobRecord>> = []
        let after: JobListQuery["after"]
        for (let guard = 0; guard < 50; guard++) {
          const page = yield* jobs.list({ ...query, limit, after })
          pages.push(page)
          if (page.length < limit) break
          const last = page[page.length - 1]
          after = { createdAt: last.createdAt, id: last.id }
        }
        return pages
      })

    test("list is newest first (createdAt desc, then id desc) and only the account+mode's", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const { sorted } = yield* seedListing
      const all = yield* jobs.list({ accountId: "acct_a", mode: "live", limit: 100 })
      expect(all.map((j) => j.id)).toEqual(sorted.map((j) => j.id))
      expect(all).toEqual(sorted)
      expect((yield* jobs.list({ accountId: "acct_a", mode: "test", limit: 100 })).map((j) => j.id))
        .toEqual(["job_902", "job_901"])
      expect((yield* jobs.list({ accountId: "acct_b", mode: "live", limit: 100 })).map((j) => j.id))
        .toEqual(["job_900", "job_903"])
      expect(yield* jobs.list({ accountId: "acct_b", mode: "test", limit: 100 })).toEqual([])
    }))

    test("list honours limit and filters by status and model", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const { sorted } = yield* seedListing
      const ids = (xs: ReadonlyArray<JobRecord>) => xs.map((j) => j.id)
      const base = { accountId: "acct_a", mode: "live" as Mode }
      expect(ids(yield* jobs.list({ ...base, limit: 3 }))).toEqual(ids(sorted.slice(0, 3)))
      expect(ids(yield* jobs.list({ ...base, limit: 1 }))).toEqual(ids(sorted.slice(0, 1)))
      const queued = sorted.filter((j) => j.status === "queued")
      expect(queued.length).toBe(5)
      expect(ids(yield* jobs.list({ ...base, status: "queued", limit: 100 }))).toEqual(ids(queued))
      const clean = sorted.filter((j) => j.model === "acme/clean-v2")
      expect(ids(yield* jobs.list({ ...base, model: "acme/clean-v2", limit: 100 }))).toEqual(ids(clean))
      const both = sorted.filter((j) => j.model === "xiph/rnnoise" && j.status === "failed")
      expect(both.length).toBeGreaterThan(0)
      expect(ids(yield* jobs.list({ ...base, model: "xiph/rnnoise", status: "failed", limit: 100 })))
        .toEqual(ids(both))
      expect(ids(yield* jobs.list({ ...base, status: "queued", limit: 2 }))).toEqual(ids(queued.slice(0, 2)))
      expect(yield* jobs.list({ ...base, model: "nobody/none", limit: 100 })).toEqual([])
    }))

    test("list `after` returns jobs strictly older than the position, ties broken by id", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const { sorted } = yield* seedListing
      const ids = (xs: ReadonlyArray<JobRecord>) => xs.map((j) => j.id)
      const base = { accountId: "acct_a", mode: "live" as Mode, limit: 100 }
      // a position inside a group of equal createdAt
      const tiedAt = sorted.findIndex((j, i) => i > 0 && sorted[i - 1].createdAt === j.createdAt &&
        sorted[i + 1]?.createdAt === j.createdAt)
      expect(tiedAt).toBeGreaterThan(0)
      const position = sorted[tiedAt]
      expect(ids(yield* jobs.list({ ...base, after: { createdAt: position.createdAt, id: position.id } })))
        .toEqual(ids(sorted.slice(tiedAt + 1)))
      // a position that is not a stored job works the same way (`job_0125` sorts between `job_012` and `job_013`)
      expect(ids(yield* jobs.list({ ...base, after: { createdAt: position.createdAt, id: `${position.id}5` } })))
        .toEqual(ids(sorted.slice(tiedAt)))
      expect(ids(yield* jobs.list({ ...base, after: { createdAt: position.createdAt + 1, id: "job_" } })))
        .toEqual(ids(sorted.filter((j) => j.createdAt <= position.createdAt)))
      const oldest = sorted[sorted.length - 1]
      expect(yield* jobs.list({ ...base, after: { createdAt: oldest.createdAt, id: oldest.id } })).toEqual([])
    }))

    test("paging through 25 jobs in pages of 7 yields every job exactly once, in order", Effect.gen(function*() {
      const { sorted } = yield* seedListing
      const pages = yield* pageThrough({ accountId: "acct_a", mode: "live" }, 7)
      expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 4])
      const seen = pages.flat().map((j) => j.id)
      expect(new Set(seen).size).toBe(25)
      expect(seen).toEqual(sorted.map((j) => j.id))
      // with a filter too
      const clean = sorted.filter((j) => j.model === "acme/clean-v2")
      const filtered = yield* pageThrough({ accountId: "acct_a", mode: "live", model: "acme/clean-v2" }, 5)
      expect(filtered.flat().map((j) => j.id)).toEqual(clean.map((j) => j.id))
    }))

    test("countActiveForFile counts queued and processing jobs of that file", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const statuses = ["queued", "processing", "succeeded", "failed", "canceled", "queued"] as const
      for (const status of statuses) yield* jobs.insert(makeJob({ fileId: "file_x", status }))
      yield* jobs.insert(makeJob({ fileId: "file_y", status: "processing" }))
      yield* jobs.insert(makeJob({ fileId: "file_z", status: "succeeded" }))
      expect(yield* jobs.countActiveForFile("file_x")).toBe(3)
      expect(yield* jobs.countActiveForFile("file_y")).toBe(1)
      expect(yield* jobs.countActiveForFile("file_z")).toBe(0)
      expect(yield* jobs.countActiveForFile("file_none")).toBe(0)
    }))

    test("lockNextQueued gives the oldest queued job of the mode, None when there is none", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const lockNext = (mode: Mode) => transactionally(jobs.lockNextQueued(mode))
      expectNone(yield* lockNext("live"))
      const older = makeJob({ id: "job_c", mode: "live", status: "queued", createdAt: T0 + 2 * SECOND })
      const newer = makeJob({ id: "job_a", mode: "live", status: "queued", createdAt: T0 + 5 * SECOND })
      const testOne = makeJob({ id: "job_t", mode: "test", status: "queued", createdAt: T0 - 10 * SECOND })
      const running = makeJob({ id: "job_p", mode: "live", status: "processing", createdAt: T0 })
      const finished = makeJob({ id: "job_s", mode: "live", status: "succeeded", createdAt: T0 - SECOND })
      for (const j of [newer, running, testOne, finished, older]) yield* jobs.insert(j)
      expect(expectSome(yield* lockNext("live"))).toEqual(older)
      expect(expectSome(yield* lockNext("test"))).toEqual(testOne)
      yield* jobs.update(makeJob({ ...older, status: "processing", leaseOwner: "w", leaseExpiresAt: T0 + HOUR }))
      expect(expectSome(yield* lockNext("live"))).toEqual(newer)
      yield* jobs.update(makeJob({ ...newer, status: "canceled" }))
      expectNone(yield* lockNext("live"))
      yield* jobs.update(makeJob({ ...testOne, status: "processing" }))
      expectNone(yield* lockNext("test"))
    }))

    raceTest("concurrent claimers each get a different queued job", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const queued = Array.from({ length: 6 }, (_, i) =>
        makeJob({ id: `job_q${i}`, status: "queued", createdAt: T0 + i * SECOND }))
      for (const j of queued) yield* jobs.insert(j)
      const claim = (owner: string) =>
        transactionally(Effect.gen(function*() {
          const next = yield* jobs.lockNextQueued("live")
          if (Option.isNone(next)) return Option.none<string>()
          yield* Effect.yieldNow()
          yield* jobs.update(makeJob({
            ...next.value, status: "processing", attempts: next.value.attempts + 1, leaseOwner: owner,
            leaseExpiresAt: T0 + HOUR, startedAt: T0
          }))
          return Option.some(next.value.id)
        }))
      const claimed = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => claim(`worker-${i}`)),
        { concurrency: "unbounded" }
      )
      const ids = claimed.filter(Option.isSome).map((o) => o.value)
      expect([...ids].sort()).toEqual(queued.map((j) => j.id))
      for (const j of queued) {
        const stored = expectSome(yield* jobs.get(j.id))
        expect(stored.status).toBe("processing")
        expect(stored.attempts).toBe(1)
      }
      const owners = new Set((yield* Effect.forEach(queued, (j) => jobs.get(j.id))).map((o) => expectSome(o).leaseOwner))
      expect(owners.size).toBe(6)
    }))

    test("lockById gives the job, None for an unknown id", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const j = makeJob({ status: "processing", leaseOwner: "w", leaseExpiresAt: T0 + 1 })
      yield* jobs.insert(j)
      yield* jobs.insert(makeJob())
      expect(expectSome(yield* transactionally(jobs.lockById(j.id)))).toEqual(j)
      expectNone(yield* transactionally(jobs.lockById("job_unknown")))
    }))

    test("lapsedLeases gives processing jobs whose lease ended before now, at most `limit`", Effect.gen(function*() {
      const jobs = yield* JobRepo
      const now = T0 + HOUR
      const lease = (o: Parameters<typeof makeJob>[0]) => makeJob({ leaseOwner: "w", attempts: 1, ...o })
      const lapsed = [
        lease({ status: "processing", leaseExpiresAt: now - 1 }),
        lease({ status: "processing", leaseExpiresAt: T0, mode: "test", accountId: "acct_b" }),
        lease({ status: "processing", leaseExpiresAt: T0 - DAY })
      ]
      const alive = [
        lease({ status: "processing", leaseExpiresAt: now }), // ends exactly now: not before now
        lease({ status: "processing", leaseExpiresAt: now + HOUR }),
        makeJob({ status: "processing", leaseOwner: null, leaseExpiresAt: null }),
        lease({ status: "queued", leaseExpiresAt: T0 }),
        lease({ status: "succeeded", leaseExpiresAt: T0 }),
        lease({ status: "failed", leaseExpiresAt: T0 }),
        lease({ status: "canceled", leaseExpiresAt: T0 })
      ]
      for (const j of [...alive, ...lapsed]) yield* jobs.insert(j)
      const found = yield* jobs.lapsedLeases(now, 100)
      expect(byId(found)).toEqual(byId(lapsed))
      const two = yield* jobs.lapsedLeases(now, 2)
      expect(two.length).toBe(2)
      expect(new Set(two.map((j) => j.id)).size).toBe(2)
      for (const j of two) expect(lapsed.map((l) => l.id)).toContain(j.id)
      expect(yield* jobs.lapsedLeases(T0 - DAY, 100)).toEqual([])
      expect(byId(yield* jobs.lapsedLeases(now + 1, 100)).map((j) => j.id))
        .toEqual(byId([...lapsed, alive[0]]).map((j) => j.id))
    }))
  })
}
