/**
 * The chaos harness's fault proxy (test/support/fault-proxy.ts), one fault kind at a time, over
 * an upstream that echoes or answers with a fixed number of bytes. Only lower bounds of time
 * are asserted (a loaded machine is slower, never faster).
 */
import { createServer, type Server, type Socket } from "node:net"
import { connect } from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type FaultProxy, startFaultProxy } from "./fault-proxy.js"

/** Echoes; `answer N` is answered with N bytes of `x`; the bytes it received are kept. */
const startUpstream = async () => {
  const received: Array<string> = []
  const server = createServer((socket) => {
    socket.on("data", (chunk) => {
      const text = chunk.toString()
      received.push(text)
      const match = /^answer (\d+)$/.exec(text)
      socket.write(match === null ? chunk : Buffer.alloc(Number(match[1]), "x"))
    })
    socket.on("error", () => undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, port: (server.address() as { port: number }).port, received }
}

interface Client {
  readonly socket: Socket
  /** Everything received so far. */
  readonly data: () => Buffer
  /** Resolves with how the connection ended: "reset", "closed" (FIN) or an error code. */
  readonly ended: Promise<string>
  /** Resolves once at least `n` bytes arrived (rejects if the connection ends first). */
  readonly waitFor: (n: number) => Promise<Buffer>
}

const open = (port: number) =>
  new Promise<Client>((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port })
    const chunks: Array<Buffer> = []
    const waiters: Array<() => void> = []
    let endedAs: string | undefined
    const ended = new Promise<string>((resolveEnd) => {
      socket.on("error", (error: NodeJS.ErrnoException) => {
        endedAs = error.code === "ECONNRESET" ? "reset" : error.code ?? "error"
        resolveEnd(endedAs)
        waiters.splice(0).forEach((w) => w())
      })
      socket.on("close", () => {
        endedAs ??= "closed"
        resolveEnd(endedAs)
        waiters.splice(0).forEach((w) => w())
      })
    })
    socket.on("data", (chunk) => {
      chunks.push(chunk)
      waiters.splice(0).forEach((w) => w())
    })
    const data = () => Buffer.concat(chunks)
    socket.once("connect", () =>
      resolve({
        socket,
        data,
        ended,
        waitFor: async (n) => {
          while (data().length < n) {
            if (endedAs !== undefined) throw new Error(`the connection ended (${endedAs}) after ${data().length} bytes`)
            await new Promise<void>((wake) => waiters.push(wake))
          }
          return data()
        }
      }))
    socket.once("error", reject)
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("fault proxy", () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>
  let proxy: FaultProxy
  const clients: Array<Client> = []
  const client = async () => {
    const opened = await open(proxy.port)
    clients.push(opened)
    return opened
  }

  beforeAll(async () => {
    upstream = await startUpstream()
    proxy = await startFaultProxy({ target: { host: "127.0.0.1", port: upstream.port } })
  })
  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy()
    upstream.received.splice(0)
    await proxy.heal()
  })
  afterAll(async () => {
    await proxy.close()
    await new Promise<void>((resolve) => (upstream.server as Server).close(() => resolve()))
  })

  it("passes bytes both ways untouched when healthy", async () => {
    const c = await client()
    c.socket.write("hello")
    expect((await c.waitFor(5)).toString()).toBe("hello")
    c.socket.write("answer 100000")
    expect((await c.waitFor(5 + 100_000)).length).toBe(100_005)
    expect(proxy.stats()).toMatchObject({ open: 1, bytesUp: 18 })
  })

  it("delays each direction by the latency (± jitter)", async () => {
    await proxy.set({ latencyMs: 150, jitterMs: 20 })
    const c = await client()
    const started = Date.now()
    c.socket.write("ping")
    expect((await c.waitFor(4)).toString()).toBe("ping")
    // up and down, each at least latency − jitter
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * 130)
  })

  it("paces each direction to the bandwidth limit", async () => {
    await proxy.set({ bytesPerSecond: 20_000 })
    const c = await client()
    const started = Date.now()
    c.socket.write("answer 20000")
    await c.waitFor(20_000)
    // 20,000 bytes at 20,000 bytes a second: at least a second, less the first chunk's share
    expect(Date.now() - started).toBeGreaterThanOrEqual(800)
  })

  it("resets every open connection mid-stream", async () => {
    const a = await client()
    const b = await client()
    a.socket.write("one")
    b.socket.write("two")
    await a.waitFor(3)
    await b.waitFor(3)
    expect(proxy.resetAll()).toBe(2)
    expect(await a.ended).toBe("reset")
    expect(await b.ended).toBe("reset")
    // new connections work
    const c = await client()
    c.socket.write("three")
    expect((await c.waitFor(5)).toString()).toBe("three")
  })

  it("black hole: accepts and never answers, then resets what it swallowed and works again", async () => {
    const before = await client()
    await proxy.set({ blackHole: true })
    before.socket.write("lost")
    const during = await client()
    during.socket.write("also lost")
    await sleep(300)
    expect(before.data().length).toBe(0)
    expect(during.data().length).toBe(0)
    expect(upstream.received).toEqual([])
    await proxy.heal()
    expect(await before.ended).toBe("reset")
    expect(await during.ended).toBe("reset")
    const after = await client()
    after.socket.write("found")
    expect((await after.waitFor(5)).toString()).toBe("found")
  })

  it("refuse: connecting fails with ECONNREFUSED on the same port until healed; open connections go on", async () => {
    const port = proxy.port
    const open1 = await client()
    await proxy.set({ refuse: true })
    open1.socket.write("still")
    expect((await open1.waitFor(5)).toString()).toBe("still")
    await expect(open(port)).rejects.toMatchObject({ code: "ECONNREFUSED" })
    await proxy.heal()
    expect(proxy.port).toBe(port)
    const c = await client()
    c.socket.write("back")
    expect((await c.waitFor(4)).toString()).toBe("back")
  })

  it("cuts a connection after N bytes towards the client: the rest is lost and it is reset", async () => {
    await proxy.set({ cutAfterBytes: 1_000 })
    const c = await client()
    c.socket.write("answer 5000")
    expect(await c.ended).toBe("reset")
    expect(c.data().length).toBe(1_000)
    expect(proxy.stats().cuts).toBeGreaterThanOrEqual(1)
  })

  it("cutOnMatch: the matching request reaches the upstream, its answer never comes back", async () => {
    await proxy.set({ cutOnMatch: "COMMIT", holdMs: 100 })
    const c = await client()
    c.socket.write("BEGIN")
    expect((await c.waitFor(5)).toString()).toBe("BEGIN")
    c.socket.write("COMMIT")
    expect(await c.ended).toBe("reset")
    // the upstream got the commit; the client got nothing after BEGIN's echo
    expect(upstream.received).toEqual(["BEGIN", "COMMIT"])
    expect(c.data().toString()).toBe("BEGIN")
  })

  it("finds a match split across two chunks", async () => {
    await proxy.set({ cutOnMatch: "COMMIT", holdMs: 50 })
    const c = await client()
    c.socket.write("xxCOM")
    await c.waitFor(5)
    c.socket.write("MITyy")
    expect(await c.ended).toBe("reset")
    expect(c.data().toString()).toBe("xxCOM")
  })
})
