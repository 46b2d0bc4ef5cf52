import { MemoryPersistence } from "../adapters/memory/index.js"
import { accountsContracts } from "./contracts/accounts.js"
import { lifecycleContract } from "./contracts/lifecycle.js"
import { repositoryContracts } from "./contracts/repositories.js"
import { webhookContract } from "./contracts/webhooks.js"

// MemoryPersistence is a layer description: each test builds it afresh, so each gets an empty store.
repositoryContracts("memory", () => MemoryPersistence)

lifecycleContract("memory", () => MemoryPersistence)

accountsContracts("memory", () => MemoryPersistence)

webhookContract("memory", () => MemoryPersistence)
