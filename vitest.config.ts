import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["core/**/*.test.ts", "adapters/**/*.test.ts", "apps/**/*.test.ts", "test/**/*.test.ts"],
    // PostgreSQL and Redis for the tests: the machine's, or started here (see the file)
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
