import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
