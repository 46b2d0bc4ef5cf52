import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["core/**/*.test.ts", "adapters/**/*.test.ts", "apps/**/*.test.ts", "test/**/*.test.ts"],
    // PostgreSQL and Redis for the tests: the machine's, or started here (see the file)
    globalSetup: ["test/support/global-setup.ts"],
    // Two test files at a time even on 2 cores (vitest's default there is one): most files wait
    // on child processes, sockets and browsers, so the whole suite takes 13 minutes instead of 30
    // (measured 2026-11-28 on this 2-core machine; docs/performance.md)
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
