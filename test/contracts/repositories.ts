/**
 * The repository contract: one suite that every persistence adapter (memory, Postgres, embedded Postgres)
 * must pass, written against the ports alone (core/ports/repositories.ts, transactor.ts).
 *
 * Usage: `repositoryContracts("postgres", () => layerWithAFreshSchema)`. One file per port
 * under test/contracts/repositories/ (their shared helpers in support.ts). Each test builds its own
 * layer from the factory, so every test starts from an empty store and tests never depend on
 * each other. Time is always passed explicitly (`T0` onwards); no test reads a clock. Tests that
 * race transactions against each other run on the live clock (`it.live`), so an adapter that
 * waits or backs off on a lock really does.
 *
 * Records are compared with `toEqual`, so an adapter may return plain objects or record class
 * instances, but every field must come back with its JavaScript type (numbers as numbers, not
 * strings or bigints; `null`, not `undefined`).
 */
import { describe } from "@effect/vitest"
import type { Layer } from "effect"
import { accountRepoContract } from "./repositories/accounts.js"
import { fileRepoContract } from "./repositories/files.js"
import { idempotencyRepoContract } from "./repositories/idempotency.js"
import { jobRepoContract } from "./repositories/jobs.js"
import { keyRepoContract } from "./repositories/keys.js"
import { contractTests, type Persistence } from "./repositories/support.js"
import { transactorContract } from "./repositories/transactor.js"
import { walletRepoContract } from "./repositories/wallet.js"

export type { Persistence }

export const repositoryContracts = (
  name: string,
  makeLayer: () => Layer.Layer<Persistence, unknown, never>
) => {
  const tests = contractTests(makeLayer)
  describe(`${name} repositories`, () => {
    accountRepoContract(tests)
    keyRepoContract(tests)
    fileRepoContract(tests)
    jobRepoContract(tests)
    walletRepoContract(tests)
    idempotencyRepoContract(tests)
    transactorContract(tests)
  })
}
