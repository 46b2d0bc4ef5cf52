import { Layer } from "effect"
import { MemoryLifecycleRepo, MemoryRepositories } from "./repositories.js"
import { MemoryDbLive, MemoryTransactor } from "./store.js"

export * from "./repositories.js"
export * from "./store.js"

/** The whole persistence side in memory: repositories and transactor sharing one database. */
export const MemoryPersistence = Layer.mergeAll(MemoryRepositories, MemoryLifecycleRepo, MemoryTransactor).pipe(
  Layer.provide(MemoryDbLive)
)
