import { Layer } from "effect"
import { MemoryOperationalStats } from "./operational-stats.js"
import { MemoryPaymentRepositories } from "./payments.js"
import { MemoryLifecycleRepo, MemoryRepositories } from "./repositories.js"
import { layerMemoryDb, MemoryTransactor } from "./store.js"
import { MemoryUsageRepo } from "./usage.js"
import { MemoryUserRepositories } from "./users.js"
import { MemoryWebhookRepo } from "./webhooks.js"

export * from "./operational-stats.js"
export * from "./payments.js"
export * from "./repositories.js"
export * from "./store.js"
export * from "./usage.js"
export * from "./users.js"
export * from "./webhooks.js"

/** The whole persistence side in memory: repositories and transactor sharing one database. */
export const MemoryPersistence = Layer.mergeAll(
  MemoryRepositories, MemoryLifecycleRepo, MemoryUserRepositories, MemoryUsageRepo, MemoryPaymentRepositories, MemoryWebhookRepo,
  MemoryTransactor, MemoryOperationalStats
).pipe(Layer.provide(layerMemoryDb))
