/**
 * What the core services' tests share (test/core/services/*.test.ts): a fresh environment of the
 * in-memory adapters and a test double of the AudioProbe port per test (time is the TestClock,
 * starting at 0), sign-up, uploads played through the memory store's backdoor, ledgers, and
 * models with small limits.
 */
import { Effect, Layer, Option } from "effect"
import { MemoryBlobBackdoor, layerMemoryBlobStore } from "../../../adapters/memory/blob-store.js"
import type { Mode, Scope } from "../../../core/domain/enums.js"
import { WalletRepo } from "../../../core/ports/repositories.js"
import { createAccountWithKeys, createKey } from "../../../core/services/accounts.js"
import type { Caller } from "../../../core/domain/caller.js"
import { authenticate } from "../../../core/services/caller.js"
import { getCredits } from "../../../core/services/credits.js"
import { completeFile, createFile, validateFile } from "../../../core/services/files.js"
import { coreEnvironment } from "../../support/env.js"
import { RiffProbe } from "../../support/riff-probe.js"

type EnvOptions = Parameters<typeof coreEnvironment>[0]

const environment = (options: EnvOptions = {}) => Layer.mergeAll(coreEnvironment(options), layerMemoryBlobStore, RiffProbe)
type Env = Layer.Layer.Success<ReturnType<typeof environment>>

/** Runs a test body on a fresh environment. */
export const run = <A, E>(body: Effect.Effect<A, E, Env>, options: EnvOptions = {}) => Effect.provide(body, environment(options))

export const signup = (options: { readonly creditMicros?: number; readonly email?: string } = {}) =>
  Effect.gen(function*() {
    const created = yield* createAccountWithKeys({ email: options.email ?? "a@example.com", creditMicros: options.creditMicros })
    const live = yield* authenticate(`Bearer ${created.liveKey}`)
    const test = yield* authenticate(`Bearer ${created.testKey}`)
    return { ...created, live, test }
  })

/** A caller whose key has only `scopes`. */
export const callerWith = (accountId: string, mode: Mode, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(createKey(accountId, { mode, scopes }), ({ key }) => authenticate(`Bearer ${key}`))

/** Creates the file and plays the client's PUT. */
export const uploaded = (caller: Caller, bytes: Uint8Array, filename = "interview.wav", contentType = "audio/wav") =>
  Effect.gen(function*() {
    const created = yield* createFile(caller, { filename, sizeBytes: bytes.byteLength, contentType })
    yield* Effect.flatMap(MemoryBlobBackdoor, (door) => door.putUpload(created.upload, bytes))
    return created.file
  })

/** Upload, complete and validate. */
export const readyFile = (caller: Caller, bytes: Uint8Array, filename = "interview.wav") =>
  Effect.gen(function*() {
    const file = yield* uploaded(caller, bytes, filename)
    yield* completeFile(caller, file.id, null)
    return Option.getOrThrow(yield* validateFile(file.id))
  })

export const credits = (caller: Caller) => getCredits(caller)

export const ledgerOf = (accountId: string) =>
  Effect.map(Effect.flatMap(WalletRepo, (w) => w.ledgerPage({ accountId, limit: 1000 })), (page) => [...page].reverse())

export const ledgerForJob = (jobId: string) => Effect.flatMap(WalletRepo, (w) => w.ledgerForJob(jobId))

export const OUTPUT = { storageKey: "outputs/out.mp3", sizeBytes: 4321, bitrateKbps: 192, format: "mp3" }
