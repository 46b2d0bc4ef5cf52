/**
 * A TCP proxy that misbehaves on demand, between Hush and one of its dependencies (PostgreSQL,
 * S3, Redis, a GPU host), as a bad network would: the chaos harness (bench/chaos) puts one on
 * every link and changes its faults while the fleet runs. Toxiproxy's model, in one process:
 *
 *   - `latencyMs` ± `jitterMs`: each chunk waits that long before it is passed on (both
 *     directions; order kept).
 *   - `bytesPerSecond`: each direction of each connection is paced to that rate.
 *   - `blackHole`: connections are accepted and bytes read, but nothing is passed on either
 *     way and nothing is answered (a partition, a half-open socket). When the black hole
 *     ends, the connections that lost bytes in it are reset, as TCP gives up on them; new ones
 *     work.
 *   - `refuse`: the port stops listening (connecting fails with ECONNREFUSED); existing
 *     connections go on until reset.
 *   - `cutAfterBytes`: once a connection has passed this many bytes towards the client
 *     (counted from when the fault was set), the rest of its answer is lost and it is reset.
 *   - `cutOnMatch`: the first client chunk containing this text (e.g. `COMMIT`) is passed on,
 *     then every answer of that connection is lost and it is reset `holdMs` later: a commit
 *     sent, its answer never received.
 *   - `resetAll()`: every open connection is reset now (RST), mid-stream.
 */
import { createServer, type Server, type Socket } from "node:net"
import { connect } from "node:net"

export interface FaultSettings {
  readonly latencyMs?: number | undefined
  readonly jitterMs?: number | undefined
  readonly bytesPerSecond?: number | undefined
  readonly blackHole?: boolean | undefined
  readonly refuse?: boolean | undefined
  readonly cutAfterBytes?: number | undefined
  readonly cutOnMatch?: string | undefined
  /** How long a connection cut by `cutOnMatch` stays silent before it is reset (default 200 ms). */
  readonly holdMs?: number | undefined
}

export interface FaultProxyStats {
  readonly connections: number
  readonly open: number
  readonly bytesUp: number
  readonly bytesDown: number
  /** Connections reset by resetAll, a cut or the end of a black hole. */
  readonly resets: number
  /** Connections whose answers a cut (cutAfterBytes, cutOnMatch) lost. */
  readonly cuts: number
}

export interface FaultProxy {
  readonly host: string
  readonly port: number
  /** Replaces the current faults (an empty object heals the link). */
  readonly set: (faults: FaultSettings) => Promise<void>
  readonly heal: () => Promise<void>
  readonly faults: () => FaultSettings
  /** Resets every open connection now; how many. */
  readonly resetAll: () => number
  readonly stats: () => FaultProxyStats
  readonly close: () => Promise<void>
}

/** Queued chunks are at most this many bytes before the sending side is paused. */
const HIGH_WATER = 1024 * 1024

interface Link {
  readonly client: Socket
  upstream: Socket | undefined
  /** Lost bytes in a black hole, or was cut: reset when the fault ends. */
  damaged: boolean
  /** Answers of this connection are lost (a cut). */
  cut: boolean
  /** Bytes passed towards the client since the faults were last set. */
  downSinceSet: number
  /** The last few client bytes, so that a pattern split across chunks is found. */
  upTail: string
  closed: boolean
}

export const startFaultProxy = async (options: {
  readonly target: { readonly host: string; readonly port: number }
  /** Where to listen (default a free port on 127.0.0.1). */
  readonly port?: number | undefined
}): Promise<FaultProxy> => {
  const host = "127.0.0.1"
  let faults: FaultSettings = {}
  const links = new Set<Link>()
  const counts = { connections: 0, bytesUp: 0, bytesDown: 0, resets: 0, cuts: 0 }

  const reset = (link: Link) => {
    if (link.closed) return
    link.closed = true
    links.delete(link)
    counts.resets++
    link.client.resetAndDestroy()
    link.upstream?.resetAndDestroy()
  }

  const end = (link: Link) => {
    if (link.closed) return
    link.closed = true
    links.delete(link)
    link.client.destroy()
    link.upstream?.destroy()
  }

  const cutLink = (link: Link) => {
    if (link.cut) return
    link.cut = true
    link.damaged = true
    counts.cuts++
    setTimeout(() => reset(link), faults.holdMs ?? 200)
  }

  /**
   * One direction of a link: chunks leave in order, each after the latency (plus jitter) and
   * the pacing of the bandwidth limit; the source pauses while too much waits.
   */
  const pipe = (link: Link, from: Socket, to: () => Socket | undefined, direction: "up" | "down") => {
    const queue: Array<{ readonly chunk: Buffer; readonly due: number }> = []
    let queued = 0
    let lastDue = 0
    let timer: NodeJS.Timeout | undefined
    const flush = () => {
      timer = undefined
      const now = Date.now()
      while (queue.length > 0 && queue[0]!.due <= now) {
        const { chunk } = queue.shift()!
        queued -= chunk.length
        deliver(chunk)
      }
      if (queued < HIGH_WATER && from.isPaused()) from.resume()
      if (queue.length > 0) timer = setTimeout(flush, queue[0]!.due - now)
    }
    const deliver = (chunk: Buffer) => {
      if (link.closed || link.cut && direction === "down") return
      const target = to()
      if (target === undefined || target.destroyed) return
      if (direction === "down") {
        const limit = faults.cutAfterBytes
        if (limit !== undefined && link.downSinceSet + chunk.length > limit) {
          const allowed = Math.max(0, limit - link.downSinceSet)
          if (allowed > 0) target.write(chunk.subarray(0, allowed))
          link.downSinceSet += allowed
          counts.bytesDown += allowed
          cutLink(link)
          return
        }
        link.downSinceSet += chunk.length
        counts.bytesDown += chunk.length
      } else {
        counts.bytesUp += chunk.length
      }
      target.write(chunk)
    }
    from.on("data", (chunk: Buffer) => {
      if (faults.blackHole === true) {
        link.damaged = true
        return
      }
      if (direction === "up" && faults.cutOnMatch !== undefined && !link.cut) {
        const text = link.upTail + chunk.toString("latin1")
        if (text.includes(faults.cutOnMatch)) cutLink(link)
        link.upTail = text.slice(-faults.cutOnMatch.length)
      }
      if (link.cut && direction === "down") return
      const now = Date.now()
      const latency = (faults.latencyMs ?? 0) + (faults.jitterMs ?? 0) * (Math.random() * 2 - 1)
      let due = Math.max(now + Math.max(0, latency), lastDue)
      const rate = faults.bytesPerSecond
      if (rate !== undefined && rate > 0) due = Math.max(due, lastDue) + (chunk.length / rate) * 1000
      lastDue = due
      if (due <= now && queue.length === 0) return deliver(chunk)
      queue.push({ chunk, due })
      queued += chunk.length
      if (queued >= HIGH_WATER) from.pause()
      if (timer === undefined) timer = setTimeout(flush, due - now)
    })
    // a FIN is passed on once what is queued has left; an error resets the other side
    from.on("end", () => {
      const finish = () => {
        if (queue.length > 0) return void setTimeout(finish, Math.max(1, queue[0]!.due - Date.now()))
        const target = to()
        if (!link.closed && target !== undefined && !target.destroyed) target.end()
      }
      finish()
    })
    from.on("error", () => {
      const target = to()
      if (target !== undefined && !target.destroyed) target.resetAndDestroy()
    })
    from.on("close", () => {
      if (timer !== undefined) clearTimeout(timer)
      const target = to()
      if (target === undefined || target.destroyed) {
        link.closed = true
        links.delete(link)
      }
    })
  }

  const onConnection = (client: Socket) => {
    counts.connections++
    client.setNoDelay(true)
    const link: Link = { client, upstream: undefined, damaged: false, cut: false, downSinceSet: 0, upTail: "", closed: false }
    links.add(link)
    const upstream = connect({ host: options.target.host, port: options.target.port })
    upstream.setNoDelay(true)
    link.upstream = upstream
    // the client's bytes wait (paused) until the upstream is connected
    client.pause()
    upstream.once("connect", () => client.resume())
    pipe(link, client, () => link.upstream, "up")
    pipe(link, upstream, () => client, "down")
  }

  let server: Server | undefined
  let port = options.port ?? 0
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(onConnection)
      s.once("error", reject)
      s.listen(port, host, () => {
        s.off("error", reject)
        port = (s.address() as { port: number }).port
        server = s
        resolve()
      })
    })
  /** Stops accepting at once; the connections already open go on (close's callback would wait for them). */
  const stopListening = () =>
    new Promise<void>((resolve) => {
      const s = server
      server = undefined
      s?.close()
      setImmediate(resolve)
    })
  await listen()

  const set = async (next: FaultSettings) => {
    const wasBlackHole = faults.blackHole === true
    faults = { ...next }
    for (const link of links) link.downSinceSet = 0
    // a black hole that ends leaves its connections broken: TCP would give up on them
    if (wasBlackHole && next.blackHole !== true) for (const link of [...links]) if (link.damaged) reset(link)
    if (next.refuse === true && server !== undefined) await stopListening()
    if (next.refuse !== true && server === undefined) await listen()
  }

  return {
    host,
    get port() {
      return port
    },
    set,
    heal: () => set({}),
    faults: () => faults,
    resetAll: () => {
      const open = [...links]
      for (const link of open) reset(link)
      return open.length
    },
    stats: () => ({ ...counts, open: links.size }),
    close: async () => {
      for (const link of [...links]) end(link)
      await stopListening()
    }
  }
}
