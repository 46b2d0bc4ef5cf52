/**
 * The core's services over the in-memory adapters, for tests that need no infrastructure.
 * Time is Effect's TestClock when run with `it.effect`.
 */
import { Layer } from "effect"
import { layerMemoryPersistence } from "../../adapters/memory/index.js"
import { DEFAULT_MODEL_DEFINITIONS, makeCatalog, ModelCatalog, type ModelDefinition } from "../../core/domain/catalog.js"
import { AccountSettingsConfig, defaultAccountSettings } from "../../core/domain/account-settings.js"
import { DeploymentSecrets, TestSample } from "../../core/domain/deployment.js"
import { DEFAULT_LIMITS, type Limits, LimitsConfig } from "../../core/domain/limits.js"
import { SequentialIds } from "./ids.js"

export const TEST_SAMPLE = {
  mp3: { storageKey: "samples/test-mode.mp3", sizeBytes: 48_000, bitrateKbps: 192, format: "mp3" },
  wav: { storageKey: "samples/test-mode.wav", sizeBytes: 192_044, bitrateKbps: 768, format: "wav" },
  flac: { storageKey: "samples/test-mode.flac", sizeBytes: 53_000, bitrateKbps: 212, format: "flac" },
  opus: { storageKey: "samples/test-mode.opus", sizeBytes: 30_000, bitrateKbps: 96, format: "opus" }
} as const

export const coreEnvironment = (options: {
  readonly limits?: Partial<Limits>
  readonly models?: ReadonlyArray<ModelDefinition>
  readonly runners?: ReadonlyArray<string>
} = {}) =>
  Layer.mergeAll(
    layerMemoryPersistence,
    SequentialIds,
    Layer.succeed(LimitsConfig, { ...DEFAULT_LIMITS, ...options.limits }),
    Layer.succeed(ModelCatalog, makeCatalog(options.models ?? DEFAULT_MODEL_DEFINITIONS, options.runners ?? ["builtin"])),
    Layer.succeed(DeploymentSecrets, { cursorKey: new TextEncoder().encode("test cursor key") }),
    Layer.succeed(TestSample, TEST_SAMPLE),
    Layer.succeed(AccountSettingsConfig, defaultAccountSettings("http://hush.test"))
  )
