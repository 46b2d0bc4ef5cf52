/**
 * Placeholder worker process over the in-memory adapters: it shows the composition, not a
 * deployment (its queue is empty and private to it). The real composition, with Postgres,
 * object storage and configuration, replaces the persistence and storage layers below.
 *
 *   npx tsx apps/worker/main.ts
 */
import { hostname } from "node:os"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { MemoryBlobStore } from "../../adapters/memory/blob-store.js"
import { MemoryPersistence } from "../../adapters/memory/index.js"
import { RnnoiseProvider } from "../../adapters/rnnoise/provider.js"
import { RandomIds } from "../../adapters/webcrypto/ids.js"
import { DEFAULT_MODEL_DEFINITIONS, makeCatalog, ModelCatalog } from "../../core/domain/catalog.js"
import { DEFAULT_LIMITS, LimitsConfig } from "../../core/domain/limits.js"
import { runWorker } from "./loop.js"

const WorkerLive = Layer.mergeAll(
  MemoryPersistence,
  RandomIds,
  Layer.succeed(LimitsConfig, DEFAULT_LIMITS),
  Layer.succeed(ModelCatalog, makeCatalog(DEFAULT_MODEL_DEFINITIONS, ["builtin"])),
  RnnoiseProvider.pipe(Layer.provide(MemoryBlobStore))
)

const owner = `worker-${hostname()}-${process.pid}`

// runMain interrupts the loop on SIGINT/SIGTERM: see loop.ts for what happens to a running job.
NodeRuntime.runMain(runWorker({ owner }).pipe(Effect.provide(WorkerLive)))
