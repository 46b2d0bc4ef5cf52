/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (headers, raw body) and
 * answers as `respond` decides: a status, or `"hang"` (no answer until `release` or close).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Real time of arrival (ms). */
  readonly at: number
}

export type Answer = number | "hang"

export const startReceiver = async (respond: (request: ReceivedWebhook, index: number) => Answer = () => 200) => {
  const received: Array<ReceivedWebhook> = []
  const hanging: Array<ServerResponse> = []
  const waiters: Array<() => void> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() }
      received.push(request)
      waiters.splice(0).forEach((wake) => wake())
      const answer = respond(request, received.length - 1)
      if (answer === "hang") hanging.push(res)
      else res.writeHead(answer, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  /** Resolves once `count` requests arrived (fails after `timeoutMs`). */
  const waitFor = async (count: number, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs
    while (received.length < count) {
      if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests, expected ${count}`)
      await new Promise<void>((resolve) => {
        waiters.push(resolve)
        setTimeout(resolve, 200)
      })
    }
    return received
  }
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    waitFor,
    /** Answers every hanging request with `status`. */
    release: (status = 200) => hanging.splice(0).forEach((res) => res.writeHead(status).end()),
    /** How many requests are still waiting for an answer. */
    hangingCount: () => hanging.length,
    close: () =>
      new Promise<void>((resolve) => {
        hanging.splice(0).forEach((res) => res.destroy())
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>
