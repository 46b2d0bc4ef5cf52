/**
 * The customers' webhook receiver for the chaos harness: one path per endpoint
 * (`/hooks/<name>`), each request's Standard Webhooks signature checked on arrival with that
 * endpoint's secret (the timestamp must be recent, so it cannot wait for the end of a long run).
 * Answers 200 to every request, signed or not; counts what arrived.
 */
import { createServer, type Server } from "node:http"
import { Webhook } from "standardwebhooks"

export interface Receiver {
  /** The URL an endpoint named `name` is registered with. */
  readonly urlOf: (name: string) => string
  /** Sets the secret of endpoint `name` (shown once, when it is created). */
  readonly trust: (name: string, secret: string) => void
  /** Event ids that arrived with a valid signature, by endpoint name. */
  readonly verified: Map<string, Set<string>>
  /** Requests whose signature did not verify: what and why. */
  readonly bad: Array<string>
  received: number
  readonly close: () => Promise<void>
}

export const startReceiver = async (): Promise<Receiver> => {
  const secrets = new Map<string, string>()
  const verified = new Map<string, Set<string>>()
  const bad: Array<string> = []
  const state = { received: 0 }
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      state.received++
      const name = (req.url ?? "").replace(/^\/hooks\//, "")
      const body = Buffer.concat(chunks).toString("utf8")
      const secret = secrets.get(name)
      try {
        if (secret === undefined) throw new Error("no such endpoint")
        new Webhook(secret).verify(body, {
          "webhook-id": String(req.headers["webhook-id"] ?? ""),
          "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
          "webhook-signature": String(req.headers["webhook-signature"] ?? "")
        })
        const id = String(req.headers["webhook-id"])
        if (JSON.parse(body).id !== id) throw new Error("webhook-id is not the event's id")
        let seen = verified.get(name)
        if (seen === undefined) verified.set(name, seen = new Set())
        seen.add(id)
      } catch (error) {
        bad.push(`${name}: ${String(error).slice(0, 120)}`)
      }
      res.writeHead(200, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    urlOf: (name) => `http://127.0.0.1:${port}/hooks/${name}`,
    trust: (name, secret) => void secrets.set(name, secret),
    verified,
    bad,
    get received() {
      return state.received
    },
    set received(n: number) {
      state.received = n
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
