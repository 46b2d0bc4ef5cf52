/**
 * Which IP addresses a live webhook may reach: public unicast only. Refused: private (RFC 1918,
 * unique local fc00::/7, CGNAT 100.64/10), loopback, link-local (169.254/16 — cloud metadata
 * services live there — and fe80::/10), unspecified, multicast, broadcast and reserved ranges,
 * and IPv6 forms that embed one of those IPv4 addresses (mapped, NAT64, 6to4).
 */
import { BlockList, isIP } from "node:net"
import { ipv6Bytes } from "../../core/rules/ip-address.js"

const blocked = new BlockList()
const v4: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "private (carrier-grade NAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved (documentation)"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved (benchmarking)"],
  ["198.51.100.0", 24, "reserved (documentation)"],
  ["203.0.113.0", 24, "reserved (documentation)"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"]
]
const v6: ReadonlyArray<readonly [string, number, string]> = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["fc00::", 7, "private (unique local)"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private (site-local)"],
  ["ff00::", 8, "multicast"],
  ["2001:db8::", 32, "reserved (documentation)"],
  ["100::", 64, "reserved (discard)"]
]
for (const [net, prefix] of v4) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of v6) blocked.addSubnet(net, prefix, "ipv6")

const kindOf = (address: string, family: "ipv4" | "ipv6") => {
  for (const [net, prefix, kind] of family === "ipv4" ? v4 : v6) {
    const one = new BlockList()
    one.addSubnet(net, prefix, family)
    if (one.check(address, family)) return kind
  }
  return "non-public"
}

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16). */
const embeddedIpv4 = (address: string): string | null => {
  const b = ipv6Bytes(address)
  if (b === null) return null
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0)
  const v4At = (i: number) => `${b[i]}.${b[i + 1]}.${b[i + 2]}.${b[i + 3]}`
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4At(12)
  if (zeros(0, 12) && !zeros(12, 16) && !(zeros(12, 15) && b[15] === 1)) return v4At(12)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4At(12)
  if (b[0] === 0x20 && b[1] === 0x02) return v4At(2)
  return null
}

/** Why the address may not be reached from a live endpoint, or null when it is public. */
export const nonPublicReason = (address: string): string | null => {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, "ipv4") ? kindOf(address, "ipv4") : null
  if (family === 6) {
    const inner = embeddedIpv4(address)
    if (inner !== null) return nonPublicReason(inner)
    return blocked.check(address, "ipv6") ? kindOf(address, "ipv6") : null
  }
  return "not an IP address"
}
