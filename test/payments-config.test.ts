/**
 * Payments configuration: the fake provider by default, Stripe with PAYMENTS=stripe and both
 * of its secrets; and a production deployment refusing to start with the fake provider.
 */
import { ConfigProvider, Effect, Either, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../apps/runtime/config.js"
import { startProcess } from "./support/process.js"
import { freePort } from "./support/server.js"

const load = (env: Record<string, string>) =>
  Effect.runPromise(Effect.either(loadConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: "/tmp/hush-config-test", ...env }))))
  )))

describe("payments configuration", () => {
  it("the fake provider without PAYMENTS; Stripe with PAYMENTS=stripe and its two secrets (and STRIPE_API_URL)", async () => {
    expect(Either.getOrThrow(await load({})).payments).toEqual({ provider: "fake" })
    const stripe = Either.getOrThrow(await load({
      PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_y", STRIPE_API_URL: "http://127.0.0.1:12111"
    })).payments
    expect(stripe?.provider).toBe("stripe")
    if (stripe?.provider !== "stripe") return
    expect(Redacted.value(stripe.stripe.secretKey)).toBe("sk_test_x")
    expect(Redacted.value(stripe.stripe.webhookSecret)).toBe("whsec_y")
    expect(stripe.stripe.api).toEqual({ host: "127.0.0.1", port: 12111, protocol: "http" })
    expect(String(stripe.stripe.secretKey)).not.toContain("sk_test_x")
  })

  it("refuses PAYMENTS=stripe without its secrets, an unknown PAYMENTS, a bad STRIPE_API_URL", async () => {
    for (const env of [
      { PAYMENTS: "stripe" }, { PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x" }, { PAYMENTS: "paypal" },
      { PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_y", STRIPE_API_URL: "ftp://x" }
    ]) {
      expect(Either.isLeft(await load(env as Record<string, string>)), JSON.stringify(env)).toBe(true)
    }
  })

  it("HUSH_ENV=production with the fake provider is refused; with Stripe it loads", async () => {
    const refused = await load({ HUSH_ENV: "production" })
    expect(Either.isLeft(refused)).toBe(true)
    if (Either.isLeft(refused)) expect(String(refused.left)).toMatch(/PAYMENTS=stripe/)
    expect(Either.isLeft(await load({ HUSH_ENV: "production", PAYMENTS: "fake" }))).toBe(true)
    expect(Either.isRight(await load({ HUSH_ENV: "production", PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_live_x", STRIPE_WEBHOOK_SECRET: "whsec_y" }))).toBe(true)
  })

  it("npm start with HUSH_ENV=production and no PAYMENTS exits with the reason, never listening", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hush-prod-fake-"))
    const port = await freePort()
    try {
      const started = startProcess("apps/api/main.ts", { HUSH_ENV: "production", DATA_DIR: dataDir, PORT: String(port), HUSH_STORE: "memory", PAYMENTS: "" })
      const code = await Promise.race([started.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 60_000))])
      if (code === "still running") await started.stop("SIGKILL")
      expect(code, started.output()).not.toBe("still running")
      expect(code).not.toBe(0)
      expect(started.output()).toMatch(/PAYMENTS=stripe/)
      await expect(fetch(`http://127.0.0.1:${port}/v1/health`)).rejects.toThrow()
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})
