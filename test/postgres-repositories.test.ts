/**
 * The repository contract against a real PostgreSQL server.
 *
 * Isolation: one database per run (created here, dropped at the end) and a fresh schema per
 * test, selected with `search_path` at connection start. Each test therefore starts from an
 * empty schema and runs the migrations from nothing; no test can see another's rows, and no
 * reset between tests can be forgotten. A database per test would cost a CREATE DATABASE
 * (hundreds of ms) each; TRUNCATE between tests would not exercise the migrations per test.
 */
import { afterAll, beforeAll, describe } from "vitest"
import { repositoryContracts } from "./contracts/repositories.js"
import { createDatabase, dropDatabase, freshSchemaPersistence, postgresAvailable } from "./support/postgres.js"

const available = await postgresAvailable()

describe.runIf(available)("postgres", () => {
  let database = ""
  beforeAll(async () => {
    database = await createDatabase("hush_contract")
  })
  afterAll(async () => {
    if (database !== "") await dropDatabase(database)
  })

  repositoryContracts("postgres", () => freshSchemaPersistence(database))
})
