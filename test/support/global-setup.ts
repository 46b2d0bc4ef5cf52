/**
 * Vitest globalSetup: the servers the tests need, started here when the machine has none, so
 * that `npm test` runs on a machine with only Node and ffmpeg (and `redis-server`).
 *
 *   - PostgreSQL: `TEST_DATABASE_URL` when set; else the server on 127.0.0.1:5432 when one
 *     answers; else (or with `TEST_POSTGRES=embedded`) a throwaway cluster of the embedded
 *     PostgreSQL (adapters/embedded-postgres) on a free 127.0.0.1 port with a generated
 *     password, without fsync, deleted afterwards.
 *   - Redis: `TEST_REDIS_URL` when set; else 127.0.0.1:6379 when it answers; else (or with
 *     `TEST_REDIS=server`) a `redis-server` from PATH on a free port, without persistence.
 *
 * What it starts is handed to the test files as TEST_DATABASE_URL / TEST_REDIS_URL (the
 * workers inherit this process's environment) and stopped when the run ends.
 *
 * First it makes the production build (scripts/build.mjs), which the tests of real processes
 * run (test/support/process.ts), so that they test what `npm start` runs. That includes the web
 * dashboard's assets (dist/web, for the browser tests). Each part is built only when one of its
 * inputs changed since its last build (scripts/build-inputs.mjs keeps a manifest of them).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { openEmbeddedPostgres } from "../../adapters/embedded-postgres/index.js"
import { freePort, portAnswers } from "./ports.js"

const startEmbeddedPostgres = async () => {
  const dir = await mkdtemp(join(tmpdir(), "hush-test-pg-"))
  const scope = Effect.runSync(Scope.make())
  const started = performance.now()
  const info = await Effect.runPromise(Scope.extend(openEmbeddedPostgres({
    dir,
    tcp: { port: await freePort(), password: randomBytes(18).toString("base64url") },
    durable: false,
    // the suite opens many pools at once (a schema per contract test, several processes)
    settings: { max_connections: "300" }
  }), scope))
  console.log(`test setup: embedded PostgreSQL in ${dir}, ready in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return {
    url: info.url!,
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await rm(dir, { recursive: true, force: true })
    }
  }
}

const onPath = (command: string) =>
  new Promise<boolean>((resolve) => {
    const child = spawn(command, ["--version"], { stdio: "ignore" })
    child.once("error", () => resolve(false))
    child.once("exit", (code) => resolve(code === 0))
  })

const startRedis = async () => {
  const port = await freePort()
  const child: ChildProcess = spawn("redis-server", [
    "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes"
  ], { stdio: "ignore" })
  const deadline = Date.now() + 10_000
  while (!(await portAnswers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  console.log(`test setup: redis-server on 127.0.0.1:${port}`)
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
  }
}

export default async function setup() {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: fileURLToPath(new URL("../..", import.meta.url)), stdio: "inherit" })
  const stops: Array<() => Promise<void>> = []
  if (process.env.TEST_DATABASE_URL === undefined && (process.env.TEST_POSTGRES === "embedded" || !(await portAnswers(5432)))) {
    const postgres = await startEmbeddedPostgres()
    process.env.TEST_DATABASE_URL = postgres.url
    stops.push(postgres.stop)
  }
  if (process.env.TEST_REDIS_URL === undefined && (process.env.TEST_REDIS === "server" || !(await portAnswers(6379)))) {
    if (await onPath("redis-server")) {
      const redis = await startRedis()
      process.env.TEST_REDIS_URL = redis.url
      stops.push(redis.stop)
    } else {
      console.warn("test setup: nothing answers on 127.0.0.1:6379 and redis-server is not on PATH: the Redis tests will fail (install redis-server)")
    }
  }
  return async () => {
    for (const stop of stops.reverse()) await stop()
  }
}
