/**
 * A browser's view of the dashboard API for end-to-end tests: a cookie jar (Set-Cookie in,
 * Cookie out), the CSRF token on unsafe requests, and the dev outbox where mail lands.
 */
import { expect } from "vitest"
import { listOutbox, type OutboxMessage } from "../../adapters/mail/outbox.js"
import type { Reachable } from "../support/server.js"
import { type Reply, sleep } from "./helpers.js"
import { jsonOrUndefined } from "../support/json.js"

export interface SetCookie {
  readonly name: string
  readonly value: string
  /** Attribute names lowercased → value ("" for flags). */
  readonly attributes: ReadonlyMap<string, string>
}

export const parseSetCookie = (header: string): SetCookie => {
  const [pair, ...attributes] = header.split(";").map((part) => part.trim())
  const at = pair!.indexOf("=")
  return {
    name: pair!.slice(0, at),
    value: decodeURIComponent(pair!.slice(at + 1)),
    attributes: new Map(attributes.map((a) => {
      const i = a.indexOf("=")
      return i < 0 ? [a.toLowerCase(), ""] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)]
    }))
  }
}

export interface BrowserReply extends Reply {
  readonly setCookies: ReadonlyArray<SetCookie>
}

export class Browser {
  readonly cookies = new Map<string, string>()
  csrf: string | undefined

  constructor(readonly server: Reachable) {}

  get session(): string | undefined {
    return this.cookies.get("__Host-hush_session")
  }

  /** A request as the dashboard page would send it; `csrf: false` leaves the header out. */
  async request(
    method: string,
    path: string,
    options: { readonly body?: unknown; readonly headers?: Record<string, string>; readonly csrf?: boolean } = {}
  ): Promise<BrowserReply> {
    const headers: Record<string, string> = {}
    if (this.cookies.size > 0) headers["cookie"] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    if (options.csrf !== false && method !== "GET" && this.csrf !== undefined) headers["x-csrf-token"] = this.csrf
    let body: string | undefined
    if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers["content-type"] = "application/json"
    }
    Object.assign(headers, options.headers)
    const url = path.startsWith("http") ? path : `${this.server.baseUrl}${path}`
    const response = await fetch(url, { method, headers, body, redirect: "manual" })
    const text = await response.text()
    const json = jsonOrUndefined(text)
    const setCookies = response.headers.getSetCookie().map(parseSetCookie)
    for (const cookie of setCookies) {
      if (cookie.value === "" || cookie.attributes.get("max-age") === "0") this.cookies.delete(cookie.name)
      else this.cookies.set(cookie.name, cookie.value)
    }
    if (typeof json?.csrf_token === "string") this.csrf = json.csrf_token
    return { status: response.status, headers: response.headers, text, json, setCookies }
  }
}

export const mailTo = (server: Reachable, to: string): Promise<ReadonlyArray<OutboxMessage>> => listOutbox(server.dataDir, { to })

/** The newest message to `to` whose subject matches, waiting for it (some mail leaves off the request). */
export const waitForMail = async (server: Reachable, to: string, subject: RegExp, count = 1): Promise<OutboxMessage> => {
  const started = Date.now()
  for (;;) {
    const found = (await mailTo(server, to)).filter((m) => subject.test(m.subject))
    if (found.length >= count) return found[0]!
    if (Date.now() - started > 10_000) throw new Error(`no mail '${subject}' to ${to}`)
    await sleep(20)
  }
}

/** The token of the link to `page` in a message. */
export const tokenIn = (message: OutboxMessage, server: Reachable, page: "verify-email" | "reset-password"): string => {
  const link = message.links.find((l) => l.startsWith(`${server.baseUrl}/${page}?token=`))
  expect(link, JSON.stringify(message.links)).toBeDefined()
  return new URL(link!).searchParams.get("token")!
}

let counter = 0
export const uniqueEmail = (label = "user") => `${label}-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`

export const PASSWORD = "correct horse battery staple"

/** A new browser signed up with `email` (and its verification mail's token). */
export const signUp = async (server: Reachable, email = uniqueEmail(), password = PASSWORD) => {
  const browser = new Browser(server)
  const reply = await browser.request("POST", "/v1/auth/signup", { body: { email, password, accept_terms: true } })
  expect(reply.status, reply.text).toBe(201)
  const mail = await waitForMail(server, email, /verify/i)
  return { browser, email, password, reply, verifyToken: tokenIn(mail, server, "verify-email") }
}

/** Signed up and verified: ready for live keys. */
export const verifiedUser = async (server: Reachable, email = uniqueEmail()) => {
  const user = await signUp(server, email)
  const verified = await user.browser.request("POST", "/v1/auth/email/verify", { body: { token: user.verifyToken } })
  expect(verified.status, verified.text).toBe(200)
  return user
}
