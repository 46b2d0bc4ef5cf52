import { layerMemoryPersistence } from "../../../adapters/memory/index.js"
import { accountsContracts } from "../../contracts/accounts.js"
import { lifecycleContract } from "../../contracts/lifecycle.js"
import { operationalStatsContract } from "../../contracts/operational-stats.js"
import { paymentsContracts } from "../../contracts/payments.js"
import { repositoryContracts } from "../../contracts/repositories.js"
import { webhookContract } from "../../contracts/webhooks.js"

// layerMemoryPersistence is a layer description: each test builds it afresh, so each gets an empty store.
repositoryContracts("memory", () => layerMemoryPersistence)

lifecycleContract("memory", () => layerMemoryPersistence)

operationalStatsContract("memory", () => layerMemoryPersistence, { hasConnections: false })

accountsContracts("memory", () => layerMemoryPersistence)

paymentsContracts("memory", () => layerMemoryPersistence)
webhookContract("memory", () => layerMemoryPersistence)
