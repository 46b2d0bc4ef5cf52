/**
 * An HTTP proxy in front of a test server, as a CDN or a flaky network would be: the CLI and
 * the signed storage URLs (PUBLIC_BASE_URL set to it) go through it. It records every PUT to
 * `/storage/…` (the upload part, and how it ended) and can be told to hang or drop chosen PUTs,
 * to interrupt an upload where a test wants it.
 */
import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface RecordedPut {
  /** The storage path (the object's key), e.g. to tell a client's upload from a GPU host's output. */
  readonly path: string
  /** `x-hush-part-number` of a multipart part; undefined for a whole-file PUT. */
  readonly partNumber: number | undefined
  /** The status the server answered, `hung` or `dropped` when the proxy kept the answer back. */
  outcome: number | "pending" | "hung" | "dropped"
}

/** What to do with a PUT: pass it on, never answer it, or cut the connection after half its bytes. */
export type PutFault = "pass" | "hang" | "drop"

export interface StorageProxy {
  readonly url: string
  readonly puts: Array<RecordedPut>
  /** Decides each PUT's fate from its part number and how many PUTs of that part came before. */
  onPut: (put: { readonly partNumber: number | undefined; readonly attempt: number }) => PutFault
  setTarget: (url: string) => void
  close: () => Promise<void>
}

export const startStorageProxy = async (): Promise<StorageProxy> => {
  let target = ""
  const hung = new Set<ServerResponse>()
  const forward = (req: IncomingMessage, res: ServerResponse, onStatus?: (status: number) => void) => {
    const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      onStatus?.(answer.statusCode ?? 0)
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on("error", () => res.destroy())
    req.pipe(upstream)
  }
  const proxy: StorageProxy = {
    url: "",
    puts: [],
    onPut: () => "pass",
    setTarget: (url) => {
      target = url
    },
    close: () => new Promise((resolve) => {
      for (const res of hung) res.destroy()
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy")
    if (req.method !== "PUT" || !url.pathname.startsWith("/storage/")) return forward(req, res)
    const part = url.searchParams.get("x-hush-part-number")
    const partNumber = part === null ? undefined : Number(part)
    const attempt = proxy.puts.filter((p) => p.partNumber === partNumber).length
    const record: RecordedPut = { path: url.pathname, partNumber, outcome: "pending" }
    proxy.puts.push(record)
    const fault = proxy.onPut({ partNumber, attempt })
    if (fault === "hang") {
      record.outcome = "hung"
      hung.add(res)
      req.resume()
      return
    }
    if (fault === "drop") {
      const half = Number(req.headers["content-length"] ?? 0) / 2
      let seen = 0
      req.on("data", (chunk: Buffer) => {
        seen += chunk.length
        if (seen >= half && record.outcome === "pending") {
          record.outcome = "dropped"
          req.socket.destroy()
        }
      })
      return
    }
    forward(req, res, (status) => {
      record.outcome = status
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return Object.assign(proxy, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
}
