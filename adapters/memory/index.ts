import { Layer } from "effect"
import { layerMemoryOperationalStats } from "./operational-stats.js"
import { layerMemoryPaymentRepositories } from "./payments.js"
import { layerMemoryLifecycleRepo, layerMemoryRepositories } from "./repositories.js"
import { layerMemoryDb, layerMemoryTransactor } from "./store.js"
import { layerMemoryUsageRepo } from "./usage.js"
import { layerMemoryUserRepositories } from "./users.js"
import { layerMemoryWebhookRepo } from "./webhooks.js"

export * from "./operational-stats.js"
export * from "./payments.js"
export * from "./repositories.js"
export * from "./store.js"
export * from "./usage.js"
export * from "./users.js"
export * from "./webhooks.js"

/** The whole persistence side in memory: repositories and transactor sharing one database. */
export const layerMemoryPersistence = Layer.mergeAll(
  layerMemoryRepositories, layerMemoryLifecycleRepo, layerMemoryUserRepositories, layerMemoryUsageRepo, layerMemoryPaymentRepositories, layerMemoryWebhookRepo,
  layerMemoryTransactor, layerMemoryOperationalStats
).pipe(Layer.provide(layerMemoryDb))
