/**
 * The repository contract: one suite that every persistence adapter (memory, Postgres, embedded Postgres)
 * must pass, written against the ports alone (core/ports/repositories.ts, transactor.ts).
 *
 * Usage: `repositoryContracts("postgres", () => layerWithAFreshSchema)`. Each test builds its own
 * layer from the factory, so every test starts from an empty store and tests never depend on
 * each other. Time is always passed explicitly (`T0` onwards); no test reads a clock. Tests that
 * race transactions against each other run on the live clock (`it.live`), so an adapter that
 * waits or backs off on a lock really does.
 *
 * Records are compared with `toEqual`, so an adapter may return plain objects or record class
 * instances, but every field must come back with its JavaScript type (numbers as numbers, not
 * strings or bigints; `null`, not `undefined`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Data, Effect, Either, Exit, Option } from "effect"
import type { Layer } from "effect"
import { AudioReportRecord } from "../../core/domain/audio-report.js"
import type { Mode } from "../../core/domain/enums.js"
import {
  HoldRecord, IdempotencyRecord, JobRecord, type LedgerEntryRecord, LotRecord
} from "../../core/domain/records.js"
import type { MintId } from "../../core/ports/ids.js"
import {
  AccountRepo, FileRepo, IdempotencyRepo, JobRepo, type JobListQuery, KeyRepo, WalletRepo, type WalletChange,
  type WalletSnapshot
} from "../../core/ports/repositories.js"
import { Transactor, transactionally } from "../../core/ports/transactor.js"
import { WebhookRepo } from "../../core/ports/webhooks.js"
import { addCredit, capture, emptyWallet, hold, release, type WalletStep } from "../../core/wallet/wallet.js"
import { makeSequentialIds } from "../support/ids.js"
import { makeEndpoint } from "./webhooks.js"
import {
  DAY, fileError, HOUR, jobError, jobOutput, makeAccount, makeFile, makeIdempotency, makeJob, makeKey,
  makeLedgerEntry, makeLot, multipart, pricing, SECOND, sha256Hex, T0, YEAR
} from "./fixtures.js"

export type Persistence =
  | AccountRepo | KeyRepo | FileRepo | JobRepo | WalletRepo | IdempotencyRepo | Transactor | WebhookRepo

class Boom extends Data.TaggedError("Boom")<{ readonly message: string }> {}

/** The value of a Some; fails the test on None. */
const expectSome = <A>(option: Option.Option<A>): A => {
  expect(Option.isSome(option), "expected Some, got None").toBe(true)
  return Option.getOrThrow(option)
}

const expectNone = <A>(option: Option.Option<A>) => {
  expect(Option.isNone(option), `expected None, got ${JSON.stringify(option)}`).toBe(true)
}

const right = <A, E>(either: Either.Either<A, E>): A =>
  Either.getOrThrowWith(either, (e) => new Error(`expected Right, got ${JSON.stringify(e)}`))

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const byId = <T extends { readonly id: string }>(xs: ReadonlyArray<T>): Array<T> =>
  [...xs].sort((a, b) => compareIds(a.id, b.id))

/** Snapshots compared without regard to the order of lots and holds (the port fixes none). */
const normalized = (w: WalletSnapshot) => ({
  accountId: w.accountId,
  lastSeq: w.lastSeq,
  balance: w.balance,
  reserved: w.reserved,
  lots: byId(w.lots),
  openHolds: byId(w.openHolds)
})

/** The port's list order: createdAt descending, then id descending. */
const newestFirst = (a: JobRecord, b: JobRecord) => b.createdAt - a.createdAt || compareIds(b.id, a.id)

const walletLock = (accountId: string) => transactionally(Effect.flatMap(WalletRepo, (w) => w.lock(accountId)))

/** lock → pure wallet step → apply, in one transaction; returns the step. */
const walletStep = <S extends WalletStep>(accountId: string, f: (wallet: WalletSnapshot) => S) =>
  transactionally(Effect.gen(function*() {
    const repo = yield* WalletRepo
    const step = f(yield* repo.lock(accountId))
    yield* repo.apply(step.change)
    return step
  }))

const credit = (accountId: string, amountMicros: number, now: number, mint: MintId, lifetimeMs = YEAR) =>
  walletStep(accountId, (w) => addCredit(w, { source: "grant", amountMicros, lifetimeMs, reason: "grant" }, now, mint))

/** Everything a wallet shows, to check that a refused change left no trace. */
const walletState = (accountId: string) =>
  Effect.gen(function*() {
    const repo = yield* WalletRepo
    return {
      snapshot: normalized(yield* walletLock(accountId)),
      lots: byId(yield* repo.listLots(accountId, 1_000)),
      ledger: yield* repo.ledgerPage({ accountId, limit: 1_000 })
    }
  })

export const repositoryContracts = (
  name: string,
  makeLayer: () => Layer.Layer<Persistence, unknown, never>
) => {
  /** A test against a fresh store. */
  const test = (title: string, body: Effect.Effect<void, unknown, Persistence>) =>
    it.effect(title, () => Effect.provide(body, makeLayer()))
  /** A test that races transactions: on the live clock, against a fresh store. */
  const raceTest = (title: string, body: Effect.Effect<void, unknown, Persistence>) =>
    it.live(title, () => Effect.provide(body, makeLayer()))

  describe(`${name} repositories`, () => {
    // ───────────────────────────────────────────────────────────── AccountRepo
    describe("AccountRepo", () => {
      test("insert then get returns the record with every field", Effect.gen(function*() {
        const accounts = yield* AccountRepo
        const a = makeAccount({
          name: "Zoë O'Brien", status: "frozen", hasPurchased: false, trainingOptIn: true,
          termsVersion: "2025-01-15", createdAt: T0 + 123
        })
        const b = makeAccount({ hasPurchased: true, trainingOptIn: false, termsVersion: "" })
        yield* accounts.insert(a)
        yield* accounts.insert(b)
        expect(expectSome(yield* accounts.get(a.id))).toEqual(a)
        expect(expectSome(yield* accounts.get(b.id))).toEqual(b)
      }))

      test("get of an unknown id is None", Effect.gen(function*() {
        const accounts = yield* AccountRepo
        yield* accounts.insert(makeAccount())
        expectNone(yield* accounts.get("acct_unknown"))
      }))

      test("update replaces the stored fields", Effect.gen(function*() {
        const accounts = yield* AccountRepo
        const a = makeAccount({ status: "active" })
        const other = makeAccount()
        yield* accounts.insert(a)
        yield* accounts.insert(other)
        const changed = makeAccount({
          ...a, status: "suspended", name: "Renamed",
          hasPurchased: !a.hasPurchased, trainingOptIn: !a.trainingOptIn, termsVersion: "2026-02-02"
        })
        yield* accounts.update(changed)
        expect(expectSome(yield* accounts.get(a.id))).toEqual(changed)
        expect(expectSome(yield* accounts.get(other.id))).toEqual(other)
      }))
    })

    // ───────────────────────────────────────────────────────────────── KeyRepo
    describe("KeyRepo", () => {
      test("insert then get returns the record with every field", Effect.gen(function*() {
        const keys = yield* KeyRepo
        const k = makeKey({
          accountId: "acct_a", mode: "test", scopes: ["jobs:read", "files:write"], name: "CI key",
          prefixDisplay: "hush_test_q2zx", lastFour: "m4k7", lastUsedAt: T0 + 5, createdAt: T0 + 1
        })
        const all = makeKey({ accountId: "acct_a" })
        const none = makeKey({ accountId: "acct_a", scopes: [] })
        yield* keys.insert(k)
        yield* keys.insert(all)
        yield* keys.insert(none)
        expect(expectSome(yield* keys.get(k.id))).toEqual(k)
        expect(expectSome(yield* keys.get(all.id))).toEqual(all)
        expect(expectSome(yield* keys.get(none.id))).toEqual(none)
        expectNone(yield* keys.get("key_unknown"))
      }))

      test("findByHash finds the key with that hash only", Effect.gen(function*() {
        const keys = yield* KeyRepo
        const a = makeKey({ accountId: "acct_a" })
        const b = makeKey({ accountId: "acct_b", mode: "test" })
        yield* keys.insert(a)
        yield* keys.insert(b)
        expect(expectSome(yield* keys.findByHash(b.hash))).toEqual(b)
        expect(expectSome(yield* keys.findByHash(a.hash))).toEqual(a)
        expectNone(yield* keys.findByHash(sha256Hex("hush_live_not-a-key")))
      }))

      test("findByHashWithAccount finds the key and its account in one call; None for the account when it is gone", Effect.gen(function*() {
        const keys = yield* KeyRepo
        const accounts = yield* AccountRepo
        const owner = makeAccount({ status: "frozen" })
        yield* accounts.insert(owner)
        const owned = makeKey({ accountId: owner.id, mode: "test" })
        const orphan = makeKey({ accountId: "acct_gone" })
        yield* keys.insert(owned)
        yield* keys.insert(orphan)
        const found = expectSome(yield* keys.findByHashWithAccount(owned.hash))
        expect(found.key).toEqual(owned)
        expect(expectSome(found.account)).toEqual(owner)
        const lonely = expectSome(yield* keys.findByHashWithAccount(orphan.hash))
        expect(lonely.key).toEqual(orphan)
        expectNone(lonely.account)
        expectNone(yield* keys.findByHashWithAccount(sha256Hex("hush_live_not-a-key")))
      }))

      test("listByAccount lists that account's keys of both modes, oldest first", Effect.gen(function*() {
        const keys = yield* KeyRepo
        const k1 = makeKey({ accountId: "acct_a", createdAt: T0 + 2 * SECOND })
        const k2 = makeKey({ accountId: "acct_a", createdAt: T0, mode: "test" })
        const k3 = makeKey({ accountId: "acct_b", createdAt: T0 + SECOND })
        const k4 = makeKey({ accountId: "acct_a", createdAt: T0 + SECOND })
        const k5 = makeKey({ accountId: "acct_a", createdAt: T0 + 3 * SECOND })
        for (const k of [k1, k5, k2, k3, k4]) yield* keys.insert(k)
        expect(yield* keys.listByAccount("acct_a")).toEqual([k2, k4, k1, k5])
        expect(yield* keys.listByAccount("acct_b")).toEqual([k3])
        expect(yield* keys.listByAccount("acct_none")).toEqual([])
      }))

      test("update revokes: revokedAt is set and the key is still found and listed", Effect.gen(function*() {
        const keys = yield* KeyRepo
        const k = makeKey({ accountId: "acct_a", createdAt: T0 })
        const other = makeKey({ accountId: "acct_a", createdAt: T0 + 1 })
        yield* keys.insert(k)
        yield* keys.insert(other)
        const used = makeKey({ ...k, lastUsedAt: T0 + HOUR })
        yield* keys.update(used)
        expect(expectSome(yield* keys.get(k.id))).toEqual(used)
        const revoked = makeKey({ ...used, revokedAt: T0 + 2 * HOUR })
        yield* keys.update(revoked)
        const stored = expectSome(yield* keys.get(k.id))
        expect(stored.revokedAt).toBe(T0 + 2 * HOUR)
        expect(stored).toEqual(revoked)
        expect(expectSome(yield* keys.findByHash(k.hash))).toEqual(revoked)
        expect(yield* keys.listByAccount("acct_a")).toEqual([revoked, other])
        expect(expectSome(yield* keys.get(other.id)).revokedAt).toBeNull()
      }))

      test("markUsed records the time of use and nothing else of the record", Effect.gen(function*() {
        const keys = yield* KeyRepo
        const k = makeKey({ accountId: "acct_a" })
        yield* keys.insert(k)
        expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key.lastUsedAt).toBeNull()
        yield* keys.markUsed(makeKey({ ...k, lastUsedAt: T0 + HOUR, name: "not this", scopes: [] }))
        expect(expectSome(yield* keys.get(k.id))).toEqual(makeKey({ ...k, lastUsedAt: T0 + HOUR }))
        expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key).toEqual(makeKey({ ...k, lastUsedAt: T0 + HOUR }))
      }))

      test("findByHashWithAccount answers a revocation, a scope change and a freeze made just before", Effect.gen(function*() {
        const keys = yield* KeyRepo
        const accounts = yield* AccountRepo
        const owner = makeAccount()
        yield* accounts.insert(owner)
        const k = makeKey({ accountId: owner.id })
        yield* keys.insert(k)
        for (let i = 0; i < 2; i++) expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key).toEqual(k)
        const narrowed = makeKey({ ...k, scopes: ["jobs:read"] })
        yield* keys.update(narrowed)
        expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key.scopes).toEqual(["jobs:read"])
        const frozen = makeAccount({ ...owner, status: "frozen" })
        yield* accounts.update(frozen)
        expect(expectSome(expectSome(yield* keys.findByHashWithAccount(k.hash)).account).status).toBe("frozen")
        yield* keys.update(makeKey({ ...narrowed, revokedAt: T0 + HOUR }))
        expect(expectSome(yield* keys.findByHashWithAccount(k.hash)).key.revokedAt).toBe(T0 + HOUR)
      }))
    })

    // ──────────────────────────────────────────────────────────────── FileRepo
    describe("FileRepo", () => {
      test("insert then get returns the record, nested error and multipart included", Effect.gen(function*() {
        const files = yield* FileRepo
        const uploading = makeFile({
          accountId: "acct_a", sizeBytes: 5_368_709_120, multipart: multipart(), filename: "Réunion – été.wav",
          contentType: "audio/wav; codecs=1", uploadExpiresAt: T0 + 6 * HOUR
        })
        const rejected = makeFile({
          accountId: "acct_a", mode: "test", status: "rejected", error: fileError(),
          completedAt: T0 + 10, rejectedAt: T0 + 20
        })
        const ready = makeFile({
          accountId: "acct_a", status: "ready", durationSeconds: 61.25, completedAt: T0 + 10, readyAt: T0 + 30,
          contentType: "video/mp4"
        })
        for (const f of [uploading, rejected, ready]) yield* files.insert(f)
        expect(expectSome(yield* files.get(uploading.id))).toEqual(uploading)
        expect(expectSome(yield* files.get(rejected.id))).toEqual(rejected)
        expect(expectSome(yield* files.get(ready.id))).toEqual(ready)
        expectNone(yield* files.get("file_unknown"))
      }))

      test("update replaces the stored fields", Effect.gen(function*() {
        const files = yield* FileRepo
        const f = makeFile({ accountId: "acct_a", multipart: multipart() })
        const other = makeFile({ accountId: "acct_a" })
        yield* files.insert(f)
        yield* files.insert(other)
        const validating = makeFile({ ...f, status: "validating", multipart: null, completedAt: T0 + HOUR })
        yield* files.update(validating)
        expect(expectSome(yield* files.get(f.id))).toEqual(validating)
        const rejected = makeFile({
          ...validating, status: "rejected", error: fileError({ message: "not audio" }), rejectedAt: T0 + 2 * HOUR
        })
        yield* files.update(rejected)
        expect(expectSome(yield* files.get(f.id))).toEqual(rejected)
        expect(expectSome(yield* files.get(other.id))).toEqual(other)
      }))

      test("delete removes that file only", Effect.gen(function*() {
        const files = yield* FileRepo
        const a = makeFile({ accountId: "acct_a" })
        const b = makeFile({ accountId: "acct_a" })
        yield* files.insert(a)
        yield* files.insert(b)
        yield* files.delete(a.id)
        expectNone(yield* files.get(a.id))
        expect(expectSome(yield* files.get(b.id))).toEqual(b)
        expect(yield* files.retainedBytes("acct_a", "live")).toBe(b.sizeBytes)
        yield* files.delete("file_unknown") // deleting what is not there is not an error
        expect(expectSome(yield* files.get(b.id))).toEqual(b)
      }))

      test("countOpenUploads counts the account+mode's uploading files whose window is open", Effect.gen(function*() {
        const files = yield* FileRepo
        const now = T0 + HOUR
        const open = [
          makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: T0 + 6 * HOUR }),
          makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: now + 1 })
        ]
        const notCounted = [
          makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: now }), // window ends now
          makeFile({ accountId: "acct_a", status: "uploading", uploadExpiresAt: T0 }),
          makeFile({ accountId: "acct_a", status: "validating", uploadExpiresAt: T0 + 6 * HOUR, completedAt: T0 }),
          makeFile({ accountId: "acct_a", status: "ready", uploadExpiresAt: T0 + 6 * HOUR }),
          makeFile({ accountId: "acct_a", mode: "test", status: "uploading", uploadExpiresAt: T0 + 6 * HOUR }),
          makeFile({ accountId: "acct_b", status: "uploading", uploadExpiresAt: T0 + 6 * HOUR })
        ]
        for (const f of [...notCounted, ...open]) yield* files.insert(f)
        expect(yield* files.countOpenUploads("acct_a", "live", now)).toBe(2)
        expect(yield* files.countOpenUploads("acct_a", "test", now)).toBe(1)
        expect(yield* files.countOpenUploads("acct_b", "live", now)).toBe(1)
        expect(yield* files.countOpenUploads("acct_a", "live", now + 1)).toBe(1)
        expect(yield* files.countOpenUploads("acct_a", "live", T0 - 1)).toBe(4)
        expect(yield* files.countOpenUploads("acct_none", "live", now)).toBe(0)
      }))

      test("retainedBytes sums declared sizes of the account+mode's files that are not rejected", Effect.gen(function*() {
        const files = yield* FileRepo
        const gib = 1_073_741_824
        for (
          const f of [
            makeFile({ accountId: "acct_a", status: "uploading", sizeBytes: 5 * gib }),
            makeFile({ accountId: "acct_a", status: "ready", sizeBytes: 3 * gib, readyAt: T0 }),
            makeFile({ accountId: "acct_a", status: "validating", sizeBytes: 1, completedAt: T0 }),
            makeFile({ accountId: "acct_a", status: "rejected", sizeBytes: 7, error: fileError(), rejectedAt: T0 }),
            makeFile({ accountId: "acct_a", mode: "test", status: "ready", sizeBytes: 11 }),
            makeFile({ accountId: "acct_b", status: "ready", sizeBytes: 13 })
          ]
        ) yield* files.insert(f)
        // above 2^32: a 32-bit column or sum would overflow, and a driver's bigint/numeric must become a number
        expect(yield* files.retainedBytes("acct_a", "live")).toBe(8 * gib + 1)
        expect(yield* files.retainedBytes("acct_a", "test")).toBe(11)
        expect(yield* files.retainedBytes("acct_b", "live")).toBe(13)
        expect(yield* files.retainedBytes("acct_none", "live")).toBe(0)
      }))

      test("validationsSince counts completes at or after `since` and gives the earliest", Effect.gen(function*() {
        const files = yield* FileRepo
        for (
          const f of [
            makeFile({ accountId: "acct_a", status: "ready", completedAt: T0, readyAt: T0 }),
            makeFile({ accountId: "acct_a", status: "ready", completedAt: T0 + HOUR, readyAt: T0 + HOUR }),
            makeFile({
              accountId: "acct_a", status: "rejected", completedAt: T0 + HOUR + 30 * 60_000, error: fileError(),
              rejectedAt: T0 + 2 * HOUR
            }),
            makeFile({ accountId: "acct_a", status: "validating", completedAt: T0 + 2 * HOUR }),
            makeFile({ accountId: "acct_a", status: "uploading", completedAt: null }),
            makeFile({ accountId: "acct_a", mode: "test", status: "validating", completedAt: T0 + HOUR + 5 }),
            makeFile({ accountId: "acct_b", status: "validating", completedAt: T0 + HOUR + 10 })
          ]
        ) yield* files.insert(f)
        expect(yield* files.validationsSince("acct_a", "live", T0 + HOUR)).toEqual({ count: 3, earliest: T0 + HOUR })
        expect(yield* files.validationsSince("acct_a", "live", T0 + HOUR + 1))
          .toEqual({ count: 2, earliest: T0 + HOUR + 30 * 60_000 })
        expect(yield* files.validationsSince("acct_a", "live", T0 - DAY)).toEqual({ count: 4, earliest: T0 })
        expect(yield* files.validationsSince("acct_a", "live", T0 + 3 * HOUR)).toEqual({ count: 0, earliest: null })
        expect(yield* files.validationsSince("acct_a", "test", T0)).toEqual({ count: 1, earliest: T0 + HOUR + 5 })
        expect(yield* files.validationsSince("acct_none", "live", T0)).toEqual({ count: 0, earliest: null })
      }))

      test("a deleted file's validation keeps counting; one never completed leaves no trace", Effect.gen(function*() {
        const files = yield* FileRepo
        const validated = makeFile({ accountId: "acct_a", status: "ready", completedAt: T0 + HOUR, readyAt: T0 + HOUR })
        const other = makeFile({ accountId: "acct_a", mode: "test", status: "rejected", completedAt: T0 + HOUR + 1, error: fileError(), rejectedAt: T0 + HOUR + 2 })
        const abandoned = makeFile({ accountId: "acct_a", status: "uploading", completedAt: null })
        for (const f of [validated, other, abandoned]) yield* files.insert(f)
        for (const f of [validated, other, abandoned]) yield* files.delete(f.id)
        for (const f of [validated, other, abandoned]) expect(yield* files.get(f.id)).toEqual(Option.none())
        expect(yield* files.validationsSince("acct_a", "live", T0)).toEqual({ count: 1, earliest: T0 + HOUR })
        expect(yield* files.validationsSince("acct_a", "test", T0)).toEqual({ count: 1, earliest: T0 + HOUR + 1 })
        expect(yield* files.validationsSince("acct_a", "live", T0 + HOUR + 1)).toEqual({ count: 0, earliest: null })
        expect(yield* files.validationsSince("acct_b", "live", T0)).toEqual({ count: 0, earliest: null })
        // a later deletion may forget completions older than the quota's window, never newer ones
        const later = makeFile({ accountId: "acct_a", status: "ready", completedAt: T0 + 3 * HOUR, readyAt: T0 + 3 * HOUR })
        yield* files.insert(later)
        yield* files.delete(later.id)
        expect(yield* files.validationsSince("acct_a", "live", T0 + 2 * HOUR)).toEqual({ count: 1, earliest: T0 + 3 * HOUR })
      }))
    })

    // ───────────────────────────────────────────────────────────────── JobRepo
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

    // ────────────────────────────────────────────────────────────── WalletRepo
    describe("WalletRepo", () => {
      test("lock of an account with no ledger gives the empty wallet", Effect.gen(function*() {
        const repo = yield* WalletRepo
        expect(normalized(yield* walletLock("acct_new"))).toEqual(normalized(emptyWallet("acct_new")))
        const w = yield* walletLock("acct_new")
        expect(w).toMatchObject({ accountId: "acct_new", lastSeq: 0, balance: 0, reserved: 0, lots: [], openHolds: [] })
        expect(yield* repo.listLots("acct_new", 10)).toEqual([])
        expect(yield* repo.ledgerPage({ accountId: "acct_new", limit: 10 })).toEqual([])
        expectNone(yield* repo.holdForJob("job_none"))
      }))

      test("apply of each wallet step, then lock, reproduces the step's snapshot", Effect.gen(function*() {
        const repo = yield* WalletRepo
        const mint = makeSequentialIds().next
        const acct = "acct_w"
        const steps: Array<WalletStep> = []
        const run = (f: (w: WalletSnapshot) => WalletStep) =>
          Effect.gen(function*() {
            const step = yield* walletStep(acct, f)
            steps.push(step)
            expect(normalized(yield* walletLock(acct))).toEqual(normalized(step.wallet))
            return step
          })
        // lot A: a grant that expires soon; lot B: a purchase above 2^32 micros
        const a = yield* run((w) =>
          addCredit(w, { source: "grant", amountMicros: 1_000, lifetimeMs: SECOND, reason: "welcome" }, T0, mint))
        const b = yield* run((w) =>
          addCredit(w, {
            source: "purchase", amountMicros: 5_000_000_000, lifetimeMs: YEAR, reason: "checkout", checkoutId: "chk_1"
          }, T0 + 10, mint))
        yield* run((w) => right(hold(w, { jobId: "job_a", amountMicros: 600 }, T0 + 20, mint)))
        yield* run((w) => right(hold(w, { jobId: "job_b", amountMicros: 200 }, T0 + 30, mint)))
        // lot A expires (200 unheld go), then job_a is charged: A keeps 200 held for job_b
        const captured = yield* run((w) => right(capture(w, "job_a", T0 + 2 * SECOND, mint)))
        const lotA = captured.wallet.lots.find((l) => l.id === a.change.lots[0].id)
        expect(lotA).toMatchObject({ expired: true, remainingMicros: 200 })
        // releasing job_b's hold on the expired lot expires those micros too
        yield* run((w) => right(release(w, "job_b", T0 + 3 * SECOND, mint, "job failed")))

        // the final state, stated independently of the pure steps
        const final = yield* walletLock(acct)
        expect(final).toMatchObject({ accountId: acct, lastSeq: 8, balance: 5_000_000_000, reserved: 0, openHolds: [] })
        expect(final.lots).toEqual([b.change.lots[0]])

        // every lot ever created, newest purchase first, remaining 0 included
        const entries = steps.flatMap((s) => s.change.entries)
        expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
        const lots = yield* repo.listLots(acct, 10)
        expect(lots.map((l) => l.id)).toEqual([b.change.lots[0].id, a.change.lots[0].id])
        expect(lots[1]).toEqual(new LotRecord({ ...a.change.lots[0], expired: true, remainingMicros: 0 }))
        expect(lots[0]).toEqual(b.change.lots[0])
        expect(yield* repo.listLots(acct, 1)).toEqual([b.change.lots[0]])

        // the ledger, newest first, paged by seq
        const ledger = yield* repo.ledgerPage({ accountId: acct, limit: 100 })
        expect(ledger).toEqual([...entries].reverse())
        expect(ledger.map((e) => e.kind)).toEqual([
          "expiry", "release", "capture", "expiry", "hold", "hold", "purchase", "grant"
        ])
        expect((yield* repo.ledgerPage({ accountId: acct, limit: 3 })).map((e) => e.seq)).toEqual([8, 7, 6])
        expect((yield* repo.ledgerPage({ accountId: acct, limit: 2, beforeSeq: 6 })).map((e) => e.seq)).toEqual([5, 4])
        expect((yield* repo.ledgerPage({ accountId: acct, limit: 10, beforeSeq: 3 })).map((e) => e.seq)).toEqual([2, 1])
        expect(yield* repo.ledgerPage({ accountId: acct, limit: 10, beforeSeq: 1 })).toEqual([])

        // per job, oldest first
        const forA = yield* repo.ledgerForJob("job_a")
        expect(forA.map((e) => e.kind)).toEqual(["hold", "capture"])
        expect(forA).toEqual(entries.filter((e) => e.jobId === "job_a"))
        const forB = yield* repo.ledgerForJob("job_b")
        expect(forB.map((e) => [e.kind, e.seq])).toEqual([["hold", 4], ["release", 7], ["expiry", 8]])
        expect(yield* repo.ledgerForJob("job_none")).toEqual([])

        // holds, resolved ones included
        const holdA = expectSome(yield* repo.holdForJob("job_a"))
        expect(holdA).toMatchObject({ jobId: "job_a", status: "captured", resolvedAt: T0 + 2 * SECOND, amountMicros: 600 })
        expect(holdA.draws).toEqual([{ lotId: a.change.lots[0].id, micros: 600 }])
        expect(expectSome(yield* repo.holdForJob("job_b")))
          .toMatchObject({ status: "released", resolvedAt: T0 + 3 * SECOND })
        expectNone(yield* repo.holdForJob("job_none"))
      }))

      test("wallets are per account", Effect.gen(function*() {
        const repo = yield* WalletRepo
        const mint = makeSequentialIds().next
        const one = yield* credit("acct_1", 1_000, T0, mint)
        const two = yield* credit("acct_2", 7_000, T0 + 1, mint)
        yield* walletStep("acct_2", (w) => right(hold(w, { jobId: "job_2", amountMicros: 500 }, T0 + 2, mint)))
        expect(normalized(yield* walletLock("acct_1"))).toEqual(normalized(one.wallet))
        const w2 = yield* walletLock("acct_2")
        expect(w2).toMatchObject({ lastSeq: 2, balance: 7_000, reserved: 500 })
        expect(w2.openHolds.map((h) => h.jobId)).toEqual(["job_2"])
        expect(yield* repo.listLots("acct_1", 10)).toEqual(one.change.lots)
        expect(yield* repo.listLots("acct_2", 10)).toEqual(two.change.lots)
        expect((yield* repo.ledgerPage({ accountId: "acct_1", limit: 10 })).map((e) => e.id))
          .toEqual(one.change.entries.map((e) => e.id))
        // each account's ledger starts at seq 1
        expect((yield* repo.ledgerPage({ accountId: "acct_2", limit: 10 })).map((e) => e.seq)).toEqual([2, 1])
      }))

      /** credit 1000; job_a and job_b hold 100 each; job_a captured. */
      const seedResolvedHold = Effect.gen(function*() {
        const mint = makeSequentialIds().next
        const acct = "acct_h"
        yield* credit(acct, 1_000, T0, mint)
        yield* walletStep(acct, (w) => right(hold(w, { jobId: "job_a", amountMicros: 100 }, T0 + 1, mint)))
        const afterB = yield* walletStep(acct, (w) => right(hold(w, { jobId: "job_b", amountMicros: 100 }, T0 + 2, mint)))
        yield* walletStep(acct, (w) => right(capture(w, "job_a", T0 + 3, mint)))
        const captured = expectSome(yield* Effect.flatMap(WalletRepo, (r) => r.holdForJob("job_a")))
        expect(captured.status).toBe("captured")
        return { acct, mint, captured, stale: afterB.wallet }
      })

      test("a resolved hold cannot be resolved again: the change is refused and nothing changes", Effect.gen(function*() {
        const repo = yield* WalletRepo
        const { acct, captured } = yield* seedResolvedHold
        const before = yield* walletState(acct)
        expect(before.snapshot).toMatchObject({ lastSeq: 4, balance: 900, reserved: 100 })
        const released = new HoldRecord({ ...captured, status: "released", resolvedAt: T0 + 10 })

        // the hold alone
        const alone = yield* Effect.exit(repo.apply({ lots: [], holds: [released], entries: [] }))
        expect(Exit.isFailure(alone)).toBe(true)
        expect(yield* walletState(acct)).toEqual(before)
        expect(expectSome(yield* repo.holdForJob("job_a"))).toEqual(captured)

        // with a lot change and an entry that are themselves in order: none of it lands
        const lot = before.lots[0]
        const change: WalletChange = {
          lots: [new LotRecord({ ...lot, remainingMicros: lot.remainingMicros + 100 })],
          holds: [released],
          entries: [makeLedgerEntry({
            accountId: acct, seq: 5, kind: "release", reason: "again", balanceDelta: 0, reservedDelta: -100,
            balanceAfter: 900, reservedAfter: 0, jobId: "job_a", createdAt: T0 + 10
          })]
        }
        const mixed = yield* Effect.exit(transactionally(repo.apply(change)))
        expect(Exit.isFailure(mixed)).toBe(true)
        expect(yield* walletState(acct)).toEqual(before)
        expect(expectSome(yield* repo.holdForJob("job_a"))).toEqual(captured)
        expect(yield* repo.ledgerForJob("job_a")).toHaveLength(2)
      }))

      test("a release computed from a stale snapshot is refused after the capture", Effect.gen(function*() {
        const repo = yield* WalletRepo
        const { acct, mint, stale, captured } = yield* seedResolvedHold
        const before = yield* walletState(acct)
        const late = right(release(stale, "job_a", T0 + 10, mint, "lost race"))
        const exit = yield* Effect.exit(transactionally(repo.apply(late.change)))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* walletState(acct)).toEqual(before)
        expect(expectSome(yield* repo.holdForJob("job_a"))).toEqual(captured)
      }))

      test("ledger entries out of sequence are refused and nothing changes", Effect.gen(function*() {
        const repo = yield* WalletRepo
        const acct = "acct_s"
        const entry = (seq: number, balanceAfter: number) =>
          makeLedgerEntry({ accountId: acct, seq, balanceDelta: 1_000, balanceAfter, reservedAfter: 0 })
        const lot = () => makeLot({ accountId: acct, amountMicros: 1_000, remainingMicros: 1_000 })
        const refused = (change: WalletChange) =>
          Effect.gen(function*() {
            const before = yield* walletState(acct)
            const exit = yield* Effect.exit(transactionally(repo.apply(change)))
            expect(Exit.isFailure(exit)).toBe(true)
            expect(yield* walletState(acct)).toEqual(before)
          })
        // a first entry must be seq 1
        yield* refused({ lots: [lot()], holds: [], entries: [entry(2, 1_000)] })
        yield* refused({ lots: [lot()], holds: [], entries: [entry(0, 1_000)] })
        const first = lot()
        yield* transactionally(repo.apply({ lots: [first], holds: [], entries: [entry(1, 1_000)] }))
        expect(yield* walletLock(acct)).toMatchObject({ lastSeq: 1, balance: 1_000, reserved: 0 })
        // a repeat, a gap, and a second entry out of order within one change
        yield* refused({ lots: [lot()], holds: [], entries: [entry(1, 2_000)] })
        yield* refused({ lots: [lot()], holds: [], entries: [entry(3, 2_000)] })
        yield* refused({ lots: [lot()], holds: [], entries: [entry(2, 2_000), entry(4, 3_000)] })
        yield* refused({ lots: [lot()], holds: [], entries: [entry(3, 3_000), entry(2, 2_000)] })
        // in order, two at once, is fine
        yield* transactionally(repo.apply({ lots: [lot()], holds: [], entries: [entry(2, 2_000), entry(3, 3_000)] }))
        expect(yield* walletLock(acct)).toMatchObject({ lastSeq: 3, balance: 3_000 })
        expect(yield* repo.listLots(acct, 10)).toHaveLength(2)
      }))
    })

    // ───────────────────────────────────────────────────────── IdempotencyRepo
    describe("IdempotencyRepo", () => {
      const response = {
        status: 201,
        body: JSON.stringify({ id: "job_1", object: "job", note: "ünïcödé" }),
        headers: { "content-type": "application/json", location: "/v1/jobs/job_1" }
      }

      test("begin starts once; a second begin sees the running record", Effect.gen(function*() {
        const idem = yield* IdempotencyRepo
        const first = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
        expect(yield* idem.begin(first)).toEqual({ _tag: "Started" })
        const again = yield* idem.begin(makeIdempotency({
          accountId: "acct_a", mode: "live", key: "k1", fingerprint: "other-body", path: "/v1/files",
          createdAt: T0 + HOUR, expiresAt: T0 + HOUR + DAY
        }))
        expect(again._tag).toBe("Existing")
        if (again._tag === "Existing") expect(again.record).toEqual(first)
      }))

      test("keys are scoped to account and mode", Effect.gen(function*() {
        const idem = yield* IdempotencyRepo
        const base = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
        expect((yield* idem.begin(base))._tag).toBe("Started")
        const otherMode = makeIdempotency({ ...base, mode: "test", fingerprint: "t" })
        const otherAccount = makeIdempotency({ ...base, accountId: "acct_b", fingerprint: "b" })
        const otherKey = makeIdempotency({ ...base, key: "k2", fingerprint: "k" })
        expect((yield* idem.begin(otherMode))._tag).toBe("Started")
        expect((yield* idem.begin(otherAccount))._tag).toBe("Started")
        expect((yield* idem.begin(otherKey))._tag).toBe("Started")
        // each scope keeps its own record
        for (const r of [base, otherMode, otherAccount, otherKey]) {
          const seen = yield* idem.begin(makeIdempotency({ ...r, fingerprint: "probe", createdAt: T0 + 1 }))
          expect(seen).toEqual({ _tag: "Existing", record: r })
        }
      }))

      test("finish stores the response; begin then replays it", Effect.gen(function*() {
        const idem = yield* IdempotencyRepo
        const first = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
        const sibling = makeIdempotency({ accountId: "acct_a", mode: "test", key: "k1" })
        yield* idem.begin(first)
        yield* idem.begin(sibling)
        yield* idem.finish("acct_a", "live", "k1", response)
        const seen = yield* idem.begin(makeIdempotency({ ...first, fingerprint: "probe", createdAt: T0 + 1 }))
        expect(seen).toEqual({
          _tag: "Existing",
          record: new IdempotencyRecord({
            ...first, state: "done", responseStatus: 201, responseBody: response.body, responseHeaders: response.headers
          })
        })
        // the same key in the other mode is untouched
        expect(yield* idem.begin(makeIdempotency({ ...sibling, fingerprint: "probe", createdAt: T0 + 1 })))
          .toEqual({ _tag: "Existing", record: sibling })
      }))

      test("abandon forgets the running record so the next begin starts afresh", Effect.gen(function*() {
        const idem = yield* IdempotencyRepo
        const first = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k1" })
        const sibling = makeIdempotency({ accountId: "acct_a", mode: "live", key: "k2" })
        yield* idem.begin(first)
        yield* idem.begin(sibling)
        yield* idem.abandon("acct_a", "live", "k1")
        const retry = makeIdempotency({ ...first, fingerprint: "retry", createdAt: T0 + 5 })
        expect(yield* idem.begin(retry)).toEqual({ _tag: "Started" })
        expect(yield* idem.begin(makeIdempotency({ ...first, fingerprint: "probe", createdAt: T0 + 6 })))
          .toEqual({ _tag: "Existing", record: retry })
        expect(yield* idem.begin(makeIdempotency({ ...sibling, fingerprint: "probe", createdAt: T0 + 6 })))
          .toEqual({ _tag: "Existing", record: sibling })
      }))

      test("an expired record no longer counts: begin starts again", Effect.gen(function*() {
        const idem = yield* IdempotencyRepo
        const first = makeIdempotency({ accountId: "acct_a", key: "k1", createdAt: T0, expiresAt: T0 + DAY })
        yield* idem.begin(first)
        yield* idem.finish("acct_a", "live", "k1", response)
        // one millisecond before expiry it still replays
        const early = yield* idem.begin(makeIdempotency({ ...first, fingerprint: "x", createdAt: T0 + DAY - 1 }))
        expect(early._tag).toBe("Existing")
        // at expiry it starts afresh, and the new record is the one kept
        const fresh = makeIdempotency({ ...first, fingerprint: "new", createdAt: T0 + DAY, expiresAt: T0 + 2 * DAY })
        expect(yield* idem.begin(fresh)).toEqual({ _tag: "Started" })
        expect(yield* idem.begin(makeIdempotency({ ...first, fingerprint: "y", createdAt: T0 + DAY + 1 })))
          .toEqual({ _tag: "Existing", record: fresh })
      }))

      test("purgeExpired deletes records expired at `now`, in batches, and no others", Effect.gen(function*() {
        const idem = yield* IdempotencyRepo
        for (const key of ["old1", "old2", "old3"]) yield* idem.begin(makeIdempotency({ accountId: "acct_a", key, createdAt: T0, expiresAt: T0 + DAY }))
        const kept = makeIdempotency({ accountId: "acct_a", key: "young", createdAt: T0 + HOUR, expiresAt: T0 + HOUR + DAY })
        yield* idem.begin(kept)
        expect(yield* idem.purgeExpired(T0 + DAY - 1, 10)).toBe(0)
        expect(yield* idem.purgeExpired(T0 + DAY, 2)).toBe(2)
        expect(yield* idem.purgeExpired(T0 + DAY, 2)).toBe(1)
        expect(yield* idem.purgeExpired(T0 + DAY, 2)).toBe(0)
        for (const key of ["old1", "old2", "old3"]) expectNone(yield* idem.get("acct_a", "live", key))
        expect(expectSome(yield* idem.get("acct_a", "live", "young"))).toEqual(kept)
      }))

      raceTest("concurrent begins of one key: exactly one starts", Effect.gen(function*() {
        const idem = yield* IdempotencyRepo
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) =>
            idem.begin(makeIdempotency({ accountId: "acct_a", key: "race", fingerprint: `f${i}` }))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r._tag === "Started")).toHaveLength(1)
        const winner = results.findIndex((r) => r._tag === "Started")
        for (const r of results) {
          if (r._tag === "Existing") expect(r.record.fingerprint).toBe(`f${winner}`)
        }
      }))
    })

    // ────────────────────────────────────────────────────────────── Transactor
    describe("Transactor", () => {
      const writeEverything = (mint: MintId) =>
        Effect.gen(function*() {
          yield* Effect.flatMap(AccountRepo, (r) => r.insert(makeAccount({ id: "acct_t" })))
          yield* Effect.flatMap(KeyRepo, (r) => r.insert(makeKey({ id: "key_t", accountId: "acct_t" })))
          yield* Effect.flatMap(FileRepo, (r) => r.insert(makeFile({ id: "file_t", accountId: "acct_t" })))
          yield* Effect.flatMap(JobRepo, (r) => r.insert(makeJob({ id: "job_t", accountId: "acct_t" })))
          yield* credit("acct_t", 5_000, T0, mint)
          yield* walletStep("acct_t", (w) => right(hold(w, { jobId: "job_t", amountMicros: 1_000 }, T0 + 1, mint)))
          yield* Effect.flatMap(IdempotencyRepo, (r) => r.begin(makeIdempotency({ accountId: "acct_t", key: "k" })))
        })

      const nothingWritten = Effect.gen(function*() {
        expectNone(yield* Effect.flatMap(AccountRepo, (r) => r.get("acct_t")))
        expectNone(yield* Effect.flatMap(KeyRepo, (r) => r.get("key_t")))
        expectNone(yield* Effect.flatMap(FileRepo, (r) => r.get("file_t")))
        expectNone(yield* Effect.flatMap(JobRepo, (r) => r.get("job_t")))
        expect(normalized(yield* walletLock("acct_t"))).toEqual(normalized(emptyWallet("acct_t")))
        expect(yield* Effect.flatMap(WalletRepo, (r) => r.listLots("acct_t", 10))).toEqual([])
        expectNone(yield* Effect.flatMap(WalletRepo, (r) => r.holdForJob("job_t")))
        expect((yield* Effect.flatMap(IdempotencyRepo, (r) => r.begin(makeIdempotency({ accountId: "acct_t", key: "k" }))))
          ._tag).toBe("Started")
      })

      test("a transaction that succeeds keeps all of its writes", Effect.gen(function*() {
        const tx = yield* Transactor
        yield* tx.withTransaction(writeEverything(makeSequentialIds().next))
        expect(expectSome(yield* Effect.flatMap(AccountRepo, (r) => r.get("acct_t"))).id).toBe("acct_t")
        expect(expectSome(yield* Effect.flatMap(JobRepo, (r) => r.get("job_t"))).id).toBe("job_t")
        expect(yield* walletLock("acct_t")).toMatchObject({ lastSeq: 2, balance: 5_000, reserved: 1_000 })
      }))

      test("a transaction that writes then fails leaves nothing", Effect.gen(function*() {
        const tx = yield* Transactor
        const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          yield* writeEverything(makeSequentialIds().next)
          // its own writes are visible inside it
          expect(expectSome(yield* Effect.flatMap(AccountRepo, (r) => r.get("acct_t"))).id).toBe("acct_t")
          return yield* new Boom({ message: "after the writes" })
        })))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          expect(Option.getOrThrow(Cause.failureOption(exit.cause))).toEqual(new Boom({ message: "after the writes" }))
        }
        yield* nothingWritten
      }))

      test("a transaction that dies leaves nothing", Effect.gen(function*() {
        const tx = yield* Transactor
        const exit = yield* Effect.exit(tx.withTransaction(
          Effect.zipRight(writeEverything(makeSequentialIds().next), Effect.dieMessage("defect after the writes"))
        ))
        expect(Exit.isFailure(exit)).toBe(true)
        yield* nothingWritten
      }))

      test("a failed transaction also undoes its updates and deletes", Effect.gen(function*() {
        const tx = yield* Transactor
        const accounts = yield* AccountRepo
        const files = yield* FileRepo
        const account = makeAccount({ status: "active" })
        const file = makeFile({ accountId: account.id })
        yield* accounts.insert(account)
        yield* files.insert(file)
        const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          yield* accounts.update(makeAccount({ ...account, status: "frozen" }))
          yield* files.delete(file.id)
          expectNone(yield* files.get(file.id))
          return yield* new Boom({ message: "undo" })
        })))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(expectSome(yield* accounts.get(account.id))).toEqual(account)
        expect(expectSome(yield* files.get(file.id))).toEqual(file)
      }))

      test("a nested withTransaction joins the outer one", Effect.gen(function*() {
        const tx = yield* Transactor
        const accounts = yield* AccountRepo
        const a = makeAccount()
        const b = makeAccount()
        // the inner one completes, then the outer fails: the inner's writes go too
        const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          yield* tx.withTransaction(accounts.insert(a))
          expect(expectSome(yield* accounts.get(a.id))).toEqual(a)
          return yield* new Boom({ message: "outer fails" })
        })))
        expect(Exit.isFailure(exit)).toBe(true)
        expectNone(yield* accounts.get(a.id))
        // nested wallet work on the same account in one transaction commits together
        const mint = makeSequentialIds().next
        yield* tx.withTransaction(Effect.gen(function*() {
          yield* accounts.insert(b)
          yield* tx.withTransaction(credit(b.id, 2_000, T0, mint))
          yield* walletStep(b.id, (w) => right(hold(w, { jobId: "job_n", amountMicros: 500 }, T0 + 1, mint)))
        }))
        expect(expectSome(yield* accounts.get(b.id))).toEqual(b)
        expect(yield* walletLock(b.id)).toMatchObject({ lastSeq: 2, balance: 2_000, reserved: 500 })
      }))

      /** One transaction: lock the wallet, check `available`, hold, apply. */
      const tryHold = (accountId: string, jobId: string, cost: number, mint: MintId) =>
        transactionally(Effect.gen(function*() {
          const repo = yield* WalletRepo
          const wallet = yield* repo.lock(accountId)
          yield* Effect.yieldNow() // give a competing transaction every chance to interleave
          const step = hold(wallet, { jobId, amountMicros: cost }, T0 + 1, mint)
          if (Either.isLeft(step)) return yield* step.left
          yield* Effect.yieldNow()
          yield* repo.apply(step.right.change)
          return step.right.hold
        })).pipe(Effect.either)

      raceTest("two concurrent holds against credit for one job: exactly one succeeds", Effect.gen(function*() {
        const mint = makeSequentialIds().next
        yield* credit("acct_r", 1_500, T0, mint)
        const results = yield* Effect.all(
          [tryHold("acct_r", "job_1", 1_000, mint), tryHold("acct_r", "job_2", 1_000, mint)],
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight)).toHaveLength(1)
        const lost = results.filter(Either.isLeft)
        expect(lost).toHaveLength(1)
        expect(lost[0].left._tag).toBe("InsufficientCredit")
        expect(yield* walletLock("acct_r")).toMatchObject({ lastSeq: 2, balance: 1_500, reserved: 1_000 })
      }))

      raceTest("20 concurrent holds against credit for 5: exactly 5 hold", Effect.gen(function*() {
        const repo = yield* WalletRepo
        const mint = makeSequentialIds().next
        const cost = 1_230
        yield* credit("acct_r", 5 * cost + cost - 1, T0, mint)
        const jobIds = Array.from({ length: 20 }, (_, i) => `job_r${String(i).padStart(2, "0")}`)
        const results = yield* Effect.all(jobIds.map((id) => tryHold("acct_r", id, cost, mint)), {
          concurrency: "unbounded"
        })
        const won = results.filter(Either.isRight).map((r) => r.right)
        expect(won).toHaveLength(5)
        for (const r of results) if (Either.isLeft(r)) expect(r.left._tag).toBe("InsufficientCredit")
        const wallet = yield* walletLock("acct_r")
        expect(wallet).toMatchObject({ lastSeq: 6, balance: 6 * cost - 1, reserved: 5 * cost })
        expect(byId(wallet.openHolds)).toEqual(byId(won))
        const ledger = yield* repo.ledgerPage({ accountId: "acct_r", limit: 100 })
        expect(ledger.map((e) => e.seq)).toEqual([6, 5, 4, 3, 2, 1])
        expect(ledger.filter((e: LedgerEntryRecord) => e.kind === "hold").map((e) => e.reservedAfter).sort((x, y) => x - y))
          .toEqual([1, 2, 3, 4, 5].map((n) => n * cost))
        const winners = new Set(won.map((h) => h.jobId))
        for (const id of jobIds) {
          const h = yield* repo.holdForJob(id)
          expect(Option.isSome(h)).toBe(winners.has(id))
        }
      }))
    })
  })
}
