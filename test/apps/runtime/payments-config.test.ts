/**
 * Deployment settings (decisions.md): `HUSH_ENV` exactly `development` (the default) or
 * `production`, anything else stopping start-up with one line naming it; payments by the
 * fake provider by default, Stripe with PAYMENTS=stripe and both of its secrets; and a
 * production deployment refusing to start with the fake provider.
 */
import { ConfigProvider, Effect, Either, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../../apps/runtime/config.js"
import { describeConfigError } from "../../../apps/runtime/preflight.js"
import { startProcess } from "../../support/process.js"
import { freePort } from "../../support/server.js"

const load = (env: Record<string, string>) =>
  Effect.runPromise(Effect.either(loadConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: "/tmp/hush-config-test", ...env }))))
  )))

/** Why loading refused, as start-up prints it. */
const refusal = async (env: Record<string, string>) => {
  const loaded = await load(env)
  expect(Either.isLeft(loaded), JSON.stringify(env)).toBe(true)
  return Either.isLeft(loaded) ? describeConfigError(loaded.left) : ""
}

/** `npm start` with these settings: its exit code and output, once it has stopped (or "still running" after 60 s). */
const startWith = async (env: Record<string, string>) => {
  const dataDir = mkdtempSync(join(tmpdir(), "hush-settings-"))
  const port = await freePort()
  try {
    const started = startProcess("apps/api/server/main.ts", { DATA_DIR: dataDir, PORT: String(port), HUSH_STORE: "memory", PAYMENTS: "", ...env })
    const code = await Promise.race([started.exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 60_000))])
    if (code === "still running") await started.stop("SIGKILL")
    // it never served anything
    await expect(fetch(`http://127.0.0.1:${port}/v1/health`)).rejects.toThrow()
    return { code, output: started.output() }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

describe("HUSH_ENV", () => {
  it("is development when unset, else exactly development or production", async () => {
    expect(Either.getOrThrow(await load({})).env).toBe("development")
    expect(Either.getOrThrow(await load({ HUSH_ENV: "development" })).env).toBe("development")
    expect(Either.getOrThrow(await load({ HUSH_ENV: "production", PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_live_x", STRIPE_WEBHOOK_SECRET: "whsec_y" })).env)
      .toBe("production")
  })

  it("refuses any other value, naming the setting, its values and what it got: Production, prod, staging, test, empty, padded", async () => {
    for (const value of ["Production", "prod", "staging", "test", "", " production", "development\n"]) {
      const reason = await refusal({ HUSH_ENV: value })
      expect(reason).toBe(`HUSH_ENV must be development or production, exactly; it is ${JSON.stringify(value)}`)
    }
    // before and whatever the payments say: no value runs the fake provider by mistake
    expect(await refusal({ HUSH_ENV: "prod", PAYMENTS: "fake" })).toMatch(/^HUSH_ENV must be/)
  })

  it("npm start with HUSH_ENV=Production exits 1 with one line naming HUSH_ENV, never listening", async () => {
    const { code, output } = await startWith({ HUSH_ENV: "Production" })
    expect(code, output).toBe(1)
    expect(output.trim().split("\n")).toEqual(['Hush cannot start: HUSH_ENV must be development or production, exactly; it is "Production"'])
  }, 90_000)
})

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

  it("refuses PAYMENTS=stripe without its secrets, an unknown PAYMENTS, a bad STRIPE_API_URL, each naming the setting", async () => {
    for (const [env, reason] of [
      [{ PAYMENTS: "stripe" }, /^PAYMENTS=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET$/],
      [{ PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x" }, /STRIPE_WEBHOOK_SECRET/],
      [{ PAYMENTS: "paypal" }, /^PAYMENTS must be stripe or fake, exactly; it is "paypal"$/],
      [{ PAYMENTS: "Stripe" }, /^PAYMENTS must be stripe or fake, exactly; it is "Stripe"$/],
      [{ PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_y", STRIPE_API_URL: "ftp://x" }, /^STRIPE_API_URL must be/]
    ] as const) {
      expect(await refusal(env), JSON.stringify(env)).toMatch(reason)
    }
  })

  it("HUSH_ENV=production with the fake provider (by default or named) is refused; with Stripe it loads", async () => {
    expect(await refusal({ HUSH_ENV: "production" })).toMatch(/^HUSH_ENV=production needs PAYMENTS=stripe/)
    expect(await refusal({ HUSH_ENV: "production", PAYMENTS: "fake" })).toMatch(/^HUSH_ENV=production needs PAYMENTS=stripe/)
    expect(Either.isRight(await load({ HUSH_ENV: "production", PAYMENTS: "stripe", STRIPE_SECRET_KEY: "sk_live_x", STRIPE_WEBHOOK_SECRET: "whsec_y" }))).toBe(true)
  })

  it("npm start with HUSH_ENV=production and no PAYMENTS exits 1 with one line naming PAYMENTS, never listening", async () => {
    const { code, output } = await startWith({ HUSH_ENV: "production" })
    expect(code, output).toBe(1)
    expect(output.trim().split("\n")).toHaveLength(1)
    expect(output).toMatch(/^Hush cannot start: HUSH_ENV=production needs PAYMENTS=stripe/)
  }, 90_000)
})
