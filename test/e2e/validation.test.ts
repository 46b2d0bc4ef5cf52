/**
 * Validation capacity and what a rejection says, over real HTTP (issues 9 and 29, docs/security.md):
 *  - the decoders are shared fairly: a tenant whose decodes are slow (held until the test lets
 *    them go, or real decodes cut off at their budget) delays another tenant's validation by one
 *    decode at most;
 *  - a header declaring over 6 h is rejected before any decoding; test-mode files get a shorter
 *    time limit than live ones;
 *  - a rejected file shows a fixed message for its reason, never ffmpeg's own words.
 */
import { Deferred, Effect, Layer, LogLevel, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { AudioProbe } from "../../core/ports/audio.js"
import { DEFAULT_LIMITS } from "../../core/domain/limits.js"
import { AUDIO_REJECTION_MESSAGES, audioRejectionMessage } from "../../core/rules/files.js"
import { silentFlac } from "../support/silent-flac.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { getFile, junk, pollUntil, tone, uploadFile, waitForFile } from "./helpers.js"

const servers: Array<TestServer> = []
afterAll(() => Promise.all(servers.map((server) => server.close())))

describe("validation capacity is shared fairly between accounts", () => {
  it("a slow tenant holding both decoders delays another tenant by one decode, not by its whole backlog", async () => {
    // The real probe, each decode held at its start until the test releases it. Tenant A uploads
    // 1-second tones, tenant B a 2-second one: the bytes tell whose decode started.
    const started: Array<{ readonly tenant: "A" | "B"; readonly release: Deferred.Deferred<void> }> = []
    const aBytes = tone(1)
    const bBytes = tone(2)
    const held = Layer.effect(AudioProbe, Effect.map(AudioProbe, (real) => ({
      probe: (input: Parameters<AudioProbe["Type"]["probe"]>[0], options?: Parameters<AudioProbe["Type"]["probe"]>[1]) =>
        Effect.gen(function*() {
          const bytes = Buffer.concat([...(yield* Stream.runCollect(input))])
          const release = yield* Deferred.make<void>()
          started.push({ tenant: bytes.length === bBytes.length ? "B" : "A", release })
          yield* Deferred.await(release)
          return yield* real.probe(Stream.make(new Uint8Array(bytes)), options)
        })
    })))
    const server = await startTestServer({ override: held })
    servers.push(server)
    const a = await server.createAccount()
    const b = await server.createAccount()
    const whenStarted = (count: number) =>
      pollUntil(async () => ({ status: started.length, headers: new Headers(), text: "", json: undefined }), (r) => r.status >= count, 10_000)

    const aFiles: Array<string> = []
    for (let i = 0; i < 4; i++) aFiles.push(await uploadFile(server, a.testKey, aBytes))
    await whenStarted(2) // A holds both decoders; two more of A's wait
    const bFile = await uploadFile(server, b.testKey, bBytes)
    expect(started.map((s) => s.tenant)).toEqual(["A", "A"])

    // one of A's decodes ends: the free decoder goes to B, ahead of A's backlog
    await server.run(Deferred.succeed(started[0]!.release, undefined))
    await whenStarted(3)
    expect(started.map((s) => s.tenant)).toEqual(["A", "A", "B"])

    // the rest run as decoders free up
    for (let done = 1; done < 5; done++) {
      await whenStarted(done + 1)
      await server.run(Deferred.succeed(started[done]!.release, undefined))
    }
    expect(started.map((s) => s.tenant)).toEqual(["A", "A", "B", "A", "A"])
    for (const id of aFiles) expect((await waitForFile(server, a.testKey, id)).json.status).toBe("ready")
    expect((await waitForFile(server, b.testKey, bFile)).json).toMatchObject({ status: "ready", duration_seconds: 2 })
  }, 60_000)
})

describe("the decoder budget: what a flood of slow files costs another account", () => {
  it("one account floods with files that decode for 25 h while declaring 2 s: each is cut off at its budget, and the other account's file goes ahead of the backlog", async () => {
    // Real ffmpeg decodes. The probe is only watched: which account's decode starts, in order.
    const started: Array<"A" | "B"> = []
    const slow = silentFlac({ seconds: 25 * 3600, declaredSeconds: 2 })
    const quick = tone(1)
    const watched = Layer.effect(AudioProbe, Effect.map(AudioProbe, (real) => ({
      probe: (input: Parameters<AudioProbe["Type"]["probe"]>[0], options?: Parameters<AudioProbe["Type"]["probe"]>[1]) =>
        Effect.gen(function*() {
          const bytes = Buffer.concat([...(yield* Stream.runCollect(input))])
          started.push(bytes.length === quick.length ? "B" : "A")
          return yield* real.probe(Stream.make(new Uint8Array(bytes)), options)
        })
    })))
    // 2 s declared buy 4 s (instead of the 20 s every test file may take): each slow file holds a decoder that long
    const budget = { ...DEFAULT_LIMITS.validationBudget, floorMs: 4_000 }
    const server = await startTestServer({ override: watched, limits: { validationBudget: budget }, logLevel: LogLevel.None })
    servers.push(server)
    const a = await server.createAccount()
    const b = await server.createAccount()
    const flood = await Promise.all(Array.from({ length: 6 }, () => uploadFile(server, a.testKey, slow, { filename: "long.flac", content_type: "audio/flac" })))
    const bFile = await uploadFile(server, b.testKey, quick)
    const startedBeforeB = started.length
    expect(startedBeforeB).toBeLessThanOrEqual(4) // A still had a backlog when B arrived

    // B's decode is the next to start once B waits: ahead of every one of A's files still waiting
    const bReady = await waitForFile(server, b.testKey, bFile)
    expect(bReady.json).toMatchObject({ status: "ready", duration_seconds: 1 })
    expect(started.indexOf("B")).toBeGreaterThanOrEqual(0)
    expect(started.indexOf("B")).toBeLessThanOrEqual(startedBeforeB)
    const aStillWaiting = (await Promise.all(flood.map((id) => getFile(server, a.testKey, id)))).filter((r) => r.json.status === "validating")
    expect(aStillWaiting.length).toBeGreaterThan(0)

    // each of A's files ends rejected at its budget, none left validating
    for (const id of flood) {
      const done = await pollUntil(() => getFile(server, a.testKey, id), (r) => r.json.status !== "validating", 60_000)
      expect(done.json).toMatchObject({ status: "rejected", error: { code: "invalid_audio", message: AUDIO_REJECTION_MESSAGES.timeout } })
    }
    expect(started.filter((t) => t === "A")).toHaveLength(6)
  }, 90_000)

  it("a FLAC whose header declares 25 h (17 MB for ffmpeg's encoder, 657 KB here) is rejected at once, in both modes, without a decode", async () => {
    const server = await startTestServer({ logLevel: LogLevel.None })
    servers.push(server)
    const account = await server.createAccount()
    const flac = silentFlac({ seconds: 25 * 3600 })
    for (const key of [account.testKey, account.liveKey]) {
      const file = await waitForFile(server, key, await uploadFile(server, key, flac, { filename: "day.flac", content_type: "audio/flac" }))
      expect(file.json).toMatchObject({ status: "rejected", duration_seconds: null })
      expect(file.json.error).toEqual({ code: "invalid_audio", message: audioRejectionMessage("too_long", DEFAULT_LIMITS) })
      expect(file.json.error.message).toContain("21600 s")
    }
  }, 90_000)
})

describe("validation time limits and messages", () => {
  it("a test-mode file gets the shorter time limit; the same bytes in live mode validate", async () => {
    const server = await startTestServer({
      limits: { validationTimeLimitMs: { live: 120_000, test: 1 } },
      logLevel: LogLevel.None
    })
    servers.push(server)
    const account = await server.createAccount()
    const testFile = await waitForFile(server, account.testKey, await uploadFile(server, account.testKey, tone(3)))
    expect(testFile.json.status).toBe("rejected")
    expect(testFile.json.error).toEqual({ code: "invalid_audio", message: AUDIO_REJECTION_MESSAGES.timeout })
    const liveFile = await waitForFile(server, account.liveKey, await uploadFile(server, account.liveKey, tone(3)))
    expect(liveFile.json).toMatchObject({ status: "ready", duration_seconds: 3 })
  }, 60_000)

  it("a rejected file shows its reason's fixed message, never ffmpeg's words", async () => {
    const server = await startTestServer({ logLevel: LogLevel.None })
    servers.push(server)
    const account = await server.createAccount()
    const rejected = await waitForFile(server, account.testKey, await uploadFile(server, account.testKey, junk(4_096)))
    expect(rejected.json.status).toBe("rejected")
    expect(rejected.json.error).toEqual({ code: "invalid_audio", message: AUDIO_REJECTION_MESSAGES.undecodable })
    expect(rejected.text).not.toMatch(/Invalid data|ffmpeg|pipe:/)
  }, 60_000)
})
