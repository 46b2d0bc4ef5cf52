/**
 * The decoder budget (core/rules/files.ts `declaredDurationVerdict`, adapters/ffmpeg/probe.ts,
 * docs/security.md): what a header declares decides before decoding, on real ffmpeg. A header
 * declaring more than 6 h is refused at once; a declared length buys time in proportion, so a
 * header declaring little for a long stream is cut off at its budget; and the declared length is
 * never the measured one. FLACs of silence are made by test/support/silent-flac.ts: 25 h in
 * 657 KB, in milliseconds, whose STREAMINFO may say anything.
 */
import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Option, Stream } from "effect"
import { layerFfmpegAudioProbe } from "../../../adapters/ffmpeg/probe.js"
import { DEFAULT_LIMITS, type Limits } from "../../../core/domain/limits.js"
import { AudioProbe, AudioRejected, type DeclaredDurationVerdict, type ProbeOptions } from "../../../core/ports/audio.js"
import { declaredDurationVerdict } from "../../../core/rules/files.js"
import { tone } from "../../e2e/helpers.js"
import { silentFlac } from "../../support/silent-flac.js"

const HOURS_25 = 25 * 3600

const probe = (bytes: Uint8Array, options: ProbeOptions) =>
  Effect.runPromiseExit(Effect.flatMap(AudioProbe, (audio) => audio.probe(Stream.make(bytes), options)).pipe(Effect.provide(layerFfmpegAudioProbe())))

const rejectedFor = (exit: Exit.Exit<unknown, unknown>) => {
  expect(Exit.isFailure(exit), "the probe should have refused the file").toBe(true)
  const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
  expect(error).toBeInstanceOf(AudioRejected)
  return (error as AudioRejected).reason
}

/** The service's own verdict for a live upload of `bytes`, with `limits`. */
const verdictFor = (bytes: Uint8Array, limits: Limits = DEFAULT_LIMITS) => declaredDurationVerdict({ mode: "live", sizeBytes: bytes.length }, limits)

/** Wraps a verdict to record what it was asked. */
const recorded = (verdict: DeclaredDurationVerdict) => {
  const asked: Array<number> = []
  return { asked, verdict: (seconds: number) => (asked.push(seconds), verdict(seconds)) }
}

describe("the decoder budget on real ffmpeg", () => {
  it("refuses a FLAC whose STREAMINFO declares 25 h of real silence before decoding it: too_long, not a decoder busy for minutes", async () => {
    const flac = silentFlac({ seconds: HOURS_25 })
    expect(flac.length).toBeLessThan(1024 * 1024)
    const { asked, verdict } = recorded(verdictFor(flac))
    // a time limit far above what the refusal takes: without the defence this ends in "timeout" (or ready at 90,000 s)
    const exit = await probe(flac, { timeLimitMs: 60_000, onDeclaredDuration: verdict })
    expect(asked).toEqual([HOURS_25])
    expect(rejectedFor(exit)).toBe("too_long")
  }, 90_000)

  it("cuts off a stream longer than its header declares at the budget that length buys, rejected as timeout, never ready", async () => {
    // declares 2 s, holds 6 h: 2.5–5 s of decoding on this machine, against a budget of ~0.2 s
    const lying = silentFlac({ seconds: 6 * 3600, declaredSeconds: 2 })
    const limits: Limits = { ...DEFAULT_LIMITS, validationBudget: { floorMs: 150, perAudioSecondMs: 5, perMiBMs: 40 } }
    const exit = await probe(lying, { timeLimitMs: 120_000, onDeclaredDuration: verdictFor(lying, limits) })
    expect(rejectedFor(exit)).toBe("timeout")
  }, 150_000)

  it("never takes the declared length for the measured one: a FLAC declaring 60 s that holds 2 s is ready at 2 s", async () => {
    const { asked, verdict } = recorded(verdictFor(silentFlac({ seconds: 2 })))
    const exit = await probe(silentFlac({ seconds: 2, declaredSeconds: 60 }), { onDeclaredDuration: verdict })
    expect(asked).toEqual([60])
    expect(exit).toEqual(Exit.succeed({ durationSeconds: 2 }))
  }, 30_000)

  it("a stream that declares no length (FLAC with 0 samples in STREAMINFO, WAV or MP3 from a pipe) keeps the time limit alone", async () => {
    const { asked, verdict } = recorded(() => "too_long")
    expect(await probe(silentFlac({ seconds: 3, declaredSeconds: 0 }), { onDeclaredDuration: verdict })).toEqual(Exit.succeed({ durationSeconds: 3 }))
    expect(await probe(tone(2), { onDeclaredDuration: verdict })).toEqual(Exit.succeed({ durationSeconds: 2 }))
    const mp3 = await probe(tone(2, "mp3"), { onDeclaredDuration: verdict })
    expect(Exit.isSuccess(mp3)).toBe(true)
    expect(asked).toEqual([])
  }, 30_000)
})

describe("declaredDurationVerdict", () => {
  const verdict = (declaredSeconds: number, sizeBytes: number, mode: "live" | "test" = "live") =>
    declaredDurationVerdict({ mode, sizeBytes }, DEFAULT_LIMITS)(declaredSeconds)

  it("refuses over 6 h (21,600 s); at 6 h it gives the live limit, never more", () => {
    expect(verdict(21_600.01, 1_000)).toBe("too_long")
    expect(verdict(HOURS_25, 1_000, "test")).toBe("too_long")
    expect(verdict(21_600, 1_000)).toBe(118_001) // 10 s + 5 ms a declared second + 40 ms a MiB
    expect(verdict(21_600, 5 * 1024 ** 3)).toBe(DEFAULT_LIMITS.validationTimeLimitMs.live)
    expect(verdict(3_600, 1_000, "test")).toBe(DEFAULT_LIMITS.validationTimeLimitMs.test)
  })

  it("gives time in proportion to the declared length and the upload's size, above a floor", () => {
    expect(verdict(0, 0)).toBe(10_000)
    expect(verdict(600, 0)).toBe(13_000)
    expect(verdict(600, 100 * 1024 * 1024)).toBe(17_000) // a big file's transfer
    expect(verdict(60, 1_000)).toBeLessThan(verdict(600, 1_000) as number)
  })
})
