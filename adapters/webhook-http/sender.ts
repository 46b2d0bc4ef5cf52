/**
 * WebhookSender over node:http(s). One POST per attempt, no keep-alive, redirects never
 * followed (a 3xx is a failed attempt). For a live endpoint (`publicOnly`) the host is resolved
 * here and the connection goes to the address that was checked (the `lookup` hook), so a DNS
 * answer that changes between the check and the connection (rebinding) cannot reach a private,
 * loopback or link-local address; an IP literal is checked as it is.
 */
import { Effect, Layer } from "effect"
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { excerpt } from "../../core/errors.js"
import { EndpointRefused, type WebhookRequest, type WebhookResponse, WebhookSender } from "../../core/ports/webhooks.js"
import { nonPublicReason } from "./addresses.js"

const bare = (hostname: string) => (hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname)

const resolveAll = (host: string) =>
  new Promise<ReadonlyArray<LookupAddress>>((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))))

/** The first address of `host` that is not public, with why; null when all are public. */
const firstNonPublic = (addresses: ReadonlyArray<string>) => {
  for (const address of addresses) {
    const reason = nonPublicReason(address)
    if (reason !== null) return { address, reason }
  }
  return null
}

/**
 * An IP literal is named as given; a name's resolved address is not told (only its kind), so
 * the refusal does not map the service's internal names to their addresses.
 */
const refusal = (host: string, found: { readonly address: string; readonly reason: string }) =>
  isIP(host) !== 0 ? `url host ${excerpt(host)} is a ${found.reason} address` : `url host '${excerpt(host)}' resolves to a ${found.reason} address`

/** Resolves and checks every address of the host; the addresses, or why they are refused. */
const vetHost = async (hostname: string): Promise<ReadonlyArray<LookupAddress>> => {
  const host = bare(hostname)
  const family = isIP(host)
  const addresses = family !== 0 ? [{ address: host, family }] : await resolveAll(host).catch(() => {
    throw new EndpointRefused({ reason: `url host '${excerpt(host)}' cannot be resolved`, nonPublic: false })
  })
  if (addresses.length === 0) throw new EndpointRefused({ reason: `url host '${excerpt(host)}' has no address`, nonPublic: false })
  const found = firstNonPublic(addresses.map((a) => a.address))
  if (found !== null) throw new EndpointRefused({ reason: refusal(host, found), nonPublic: true })
  return addresses
}

/** A `lookup` that answers only with checked public addresses. */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  vetHost(hostname).then(
    (addresses) => {
      if (options.all === true) (callback as unknown as (e: null, a: ReadonlyArray<LookupAddress>) => void)(null, addresses)
      else callback(null, addresses[0]!.address, addresses[0]!.family)
    },
    (error: unknown) => callback(error instanceof Error ? error as NodeJS.ErrnoException : new Error(String(error)), "", 0)
  )
}

/** What the deliveries log says when no HTTP answer came back. */
export const CONNECTION_FAILED = "connection failed: no HTTP answer (refused, unreachable, reset or TLS failure)"

/**
 * The deliveries log is read by whoever owns the endpoint: a connection error says only that it
 * failed, never which (refused, reset, host unreachable, a TLS alert), which would tell a port
 * scanner what listens where. The log keeps the duration, as decisions.md has it; the address
 * and port rules bound what such an endpoint may reach at all.
 */
const describe = (error: unknown): string =>
  !(error instanceof EndpointRefused)
    ? CONNECTION_FAILED
    : `refused: ${error.reason}${error.nonPublic ? ": endpoints must be publicly reachable" : ""}`

const sendOnce = (request: WebhookRequest) =>
  Effect.async<WebhookResponse>((resume) => {
    const started = performance.now()
    const elapsed = () => performance.now() - started
    let settled = false
    const settle = (response: WebhookResponse) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.succeed(response))
    }
    const url = new URL(request.url)
    // an IP literal never reaches `lookup`: checked here, before any connection starts
    const literal = bare(url.hostname)
    const literalReason = request.publicOnly && isIP(literal) !== 0 ? nonPublicReason(literal) : null
    if (literalReason !== null) {
      const refused = new EndpointRefused({ reason: refusal(literal, { address: literal, reason: literalReason }), nonPublic: true })
      resume(Effect.succeed({ statusCode: null, durationMs: elapsed(), error: describe(refused) }))
      return
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    const headers = { ...request.headers, "content-length": String(Buffer.byteLength(request.body)), "user-agent": "Hush-Webhooks/1" }
    const req = send(url, {
      method: "POST",
      headers,
      agent: false,
      ...(request.publicOnly ? { lookup: publicLookup } : {})
    }, (res: IncomingMessage) => {
      const status = res.statusCode ?? null
      // the answer's body is not needed: close at once
      res.destroy()
      const location = res.headers.location
      settle({
        statusCode: status,
        durationMs: elapsed(),
        error: status !== null && status >= 200 && status < 300
          ? null
          : status !== null && status >= 300 && status < 400
          ? `HTTP ${status}: redirects are not followed${location === undefined ? "" : ` (to ${location.slice(0, 200)})`}`
          : `HTTP ${status}`
      })
    })
    const timer = setTimeout(() => {
      settle({ statusCode: null, durationMs: elapsed(), error: `no answer within ${request.timeoutMs / 1000} s` })
      req.destroy()
    }, request.timeoutMs)
    req.on("error", (error) => settle({ statusCode: null, durationMs: elapsed(), error: describe(error) }))
    req.end(request.body)
    return Effect.sync(() => {
      clearTimeout(timer)
      req.destroy()
    })
  })

export const layerWebhookSender = (options: { readonly allowPrivate: boolean }) =>
  Layer.succeed(WebhookSender, {
    allowPrivate: options.allowPrivate,
    vet: (url, publicOnly) =>
      publicOnly
        ? Effect.tryPromise({
          try: () => vetHost(new URL(url).hostname),
          catch: (error) => (error instanceof EndpointRefused ? error : new EndpointRefused({ reason: String(error), nonPublic: false }))
        }).pipe(Effect.asVoid)
        : Effect.void,
    send: sendOnce
  })
