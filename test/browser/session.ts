/**
 * A signed-in browser for the browser tests: signup through the page, the address verified
 * through its e-mailed link, and the dashboard API called from inside the page (its own
 * cookie and CSRF token, as the dashboard's scripts call it).
 */
import type { BrowserContext, Page } from "playwright-core"
import { expect } from "vitest"
import { grantCredit } from "../../core/services/accounts.js"
import { PASSWORD, tokenIn, uniqueEmail, waitForMail } from "../e2e/browser.js"
import type { TestServer } from "../support/server.js"

/** The page at `path` once its heading shows and nothing is loading any more. */
export const open = async (page: Page, path: string, heading: string | RegExp) => {
  await page.goto(path)
  await page.getByRole("heading", { level: 1, name: heading }).waitFor()
  await page.getByText(/^Loading /).first().waitFor({ state: "detached" })
}

export const signUpInBrowser = async (page: Page, email: string) => {
  await open(page, "/signup", "Create your Hush account")
  await page.getByLabel("E-mail address").fill(email)
  await page.getByLabel("Password").fill(PASSWORD)
  await page.getByLabel("I accept the Hush terms of service.").check()
  await page.getByRole("button", { name: "Create account" }).click()
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
}

export interface InPageReply {
  readonly status: number
  readonly json: any
}

/** A dashboard API request from the page, with its session and CSRF token. */
export const inPage = (page: Page, method: string, path: string, body?: unknown): Promise<InPageReply> =>
  page.evaluate(async ([method, path, body]) => {
    const { csrf_token } = await (await fetch("/v1/auth/csrf")).json() as { csrf_token: string }
    const reply = await fetch(path, {
      method,
      headers: { "content-type": "application/json", "x-csrf-token": csrf_token },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await reply.text()
    return { status: reply.status, json: text === "" ? null : JSON.parse(text) }
  }, [method, path, body] as const)

export interface Customer {
  readonly page: Page
  readonly email: string
  readonly accountId: string
}

/** A new customer signed up in `context`, the address verified, with `credit` micros granted. */
export const signedUpCustomer = async (server: TestServer, context: BrowserContext, credit = 0): Promise<Customer> => {
  const page = await context.newPage()
  const email = uniqueEmail("browser")
  await signUpInBrowser(page, email)
  const token = tokenIn(await waitForMail(server, email, /verify/i), server, "verify-email")
  expect((await inPage(page, "POST", "/v1/auth/email/verify", { token })).status).toBe(200)
  const accountId = (await inPage(page, "GET", "/v1/auth/session")).json.account.id as string
  if (credit > 0) await server.run(grantCredit(accountId, credit))
  return { page, email, accountId }
}

/** A key of the customer's account (all scopes): its secret. */
export const keyOf = async (customer: Customer, mode: "live" | "test", name: string = mode) => {
  const created = await inPage(customer.page, "POST", "/v1/dashboard/keys", { mode, name })
  expect(created.status).toBe(201)
  return created.json.secret as string
}
