import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["core/**/*.test.ts", "adapters/**/*.test.ts", "apps/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
