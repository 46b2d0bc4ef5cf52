/**
 * Client addresses (decisions.md, Requests and errors): IPv4 and IPv6 parsed by hand (no Node
 * import: the dashboard's bundle reaches the rate limits), CIDR ranges, the address a request
 * comes from behind `TRUSTED_PROXIES`, and the network a per-IP rate bucket counts (an IPv6
 * client's /64: one host holds the whole /64 and could rotate through it).
 */

export interface IpAddress {
  readonly family: 4 | 6
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array
}

/** A range of addresses: `10.0.0.0/8`, `fd00::/8`; a bare address is a range of one. */
export interface Cidr extends IpAddress {
  readonly prefix: number
}

const DECIMAL_OCTET = /^(?:0|[1-9]\d{0,2})$/
const HEX_GROUP = /^[0-9a-f]{1,4}$/i

const ipv4Bytes = (text: string): Uint8Array | null => {
  const parts = text.split(".")
  if (parts.length !== 4) return null
  const bytes = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    if (!DECIMAL_OCTET.test(parts[i]!)) return null
    const n = Number(parts[i])
    if (n > 255) return null
    bytes[i] = n
  }
  return bytes
}

/** An IPv6 address's 16 bytes (`::` compression, a dotted IPv4 tail); null when it does not parse. */
export const ipv6Bytes = (text: string): Uint8Array | null => {
  let groups = text
  let tail: Uint8Array | null = null
  const lastColon = groups.lastIndexOf(":")
  if (lastColon !== -1 && groups.includes(".", lastColon)) {
    tail = ipv4Bytes(groups.slice(lastColon + 1))
    if (tail === null) return null
    groups = `${groups.slice(0, lastColon + 1)}0:0`
  }
  const halves = groups.split("::")
  if (halves.length > 2) return null
  const split = (half: string) => (half === "" ? [] : half.split(":"))
  const left = split(halves[0]!)
  const right = halves.length === 2 ? split(halves[1]!) : []
  const missing = 8 - left.length - right.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const all = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...right]
  const bytes = new Uint8Array(16)
  for (let i = 0; i < 8; i++) {
    if (!HEX_GROUP.test(all[i]!)) return null
    const n = parseInt(all[i]!, 16)
    bytes[i * 2] = n >> 8
    bytes[i * 2 + 1] = n & 0xff
  }
  if (tail !== null) bytes.set(tail, 12)
  return bytes
}

const isMappedIpv4 = (b: Uint8Array) => b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff

/**
 * An address as a socket or `X-Forwarded-For` gives it: IPv4, IPv6 (brackets and a zone
 * allowed), an IPv4 one with a port. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, as a
 * dual-stack socket reports an IPv4 peer) is that IPv4 address. Null when it is none of these.
 */
export const parseIp = (text: string): IpAddress | null => {
  let address = text.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address)
  if (bracketed !== null) address = bracketed[1]!
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.indexOf(":"))
  const zone = address.indexOf("%")
  if (zone !== -1) address = address.slice(0, zone)
  if (!address.includes(":")) {
    const v4 = ipv4Bytes(address)
    return v4 === null ? null : { family: 4, bytes: v4 }
  }
  const v6 = ipv6Bytes(address)
  if (v6 === null) return null
  return isMappedIpv4(v6) ? { family: 4, bytes: v6.slice(12) } : { family: 6, bytes: v6 }
}

/** `address/prefix`, or a bare address (all its bits); null when it does not parse. */
export const parseCidr = (text: string): Cidr | null => {
  const [addressText, prefixText, ...rest] = text.trim().split("/")
  if (rest.length > 0 || addressText === undefined) return null
  const address = parseIp(addressText)
  if (address === null) return null
  const bits = address.bytes.length * 8
  // a mapped IPv6 range (::ffff:10.0.0.0/104) is the IPv4 range it maps
  const mappedShift = address.family === 4 && addressText.includes(":") ? 96 : 0
  if (prefixText === undefined) return { ...address, prefix: bits }
  if (!/^\d{1,3}$/.test(prefixText)) return null
  const prefix = Number(prefixText) - mappedShift
  return prefix < 0 || prefix > bits ? null : { ...address, prefix }
}

export const cidrContains = (cidr: Cidr, address: IpAddress): boolean => {
  if (cidr.family !== address.family) return false
  const whole = cidr.prefix >> 3
  for (let i = 0; i < whole; i++) if (cidr.bytes[i] !== address.bytes[i]) return false
  const rest = cidr.prefix & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (cidr.bytes[whole]! & mask) === (address.bytes[whole]! & mask)
}

const isTrusted = (address: IpAddress, trusted: ReadonlyArray<Cidr>) => trusted.some((cidr) => cidrContains(cidr, address))

/**
 * The client's address: the socket's peer, unless the peer is a trusted proxy; then the
 * right-most address of `X-Forwarded-For` that is not itself a trusted proxy (each proxy
 * appends the address it was connected from: what lies left of the last untrusted hop is
 * whatever that client wrote). Where every listed hop is trusted, the left-most one; where an
 * entry does not parse, the trusted hop that reported it (a proxy wrote it, the client did not).
 */
export const clientAddressOf = (peer: string, forwardedFor: string | undefined, trusted: ReadonlyArray<Cidr>): string => {
  const peerAddress = parseIp(peer)
  if (trusted.length === 0 || peerAddress === null || !isTrusted(peerAddress, trusted) || forwardedFor === undefined) return peer
  const hops = forwardedFor.split(",")
  let nearest = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim()
    const address = parseIp(hop)
    if (address === null) return nearest
    if (!isTrusted(address, trusted)) return hop
    nearest = hop
  }
  return nearest
}

const hex = (bytes: Uint8Array, at: number) => ((bytes[at]! << 8) | bytes[at + 1]!).toString(16)

/**
 * What a per-IP rate bucket counts: an IPv4 address as it is, an IPv6 client by its /64
 * (`2001:db8:1:2::/64`), anything else as given.
 */
export const rateNetworkOf = (address: string): string => {
  const parsed = parseIp(address)
  if (parsed === null) return address
  if (parsed.family === 4) return parsed.bytes.join(".")
  return `${[0, 2, 4, 6].map((at) => hex(parsed.bytes, at)).join(":")}::/64`
}

/**
 * `TRUSTED_PROXIES`: comma-separated CIDRs (a bare address is one host); empty or unset, none.
 * Returns the entry that does not parse, to be named in the start-up error.
 */
export const parseTrustedProxies = (text: string | undefined): { readonly cidrs: ReadonlyArray<Cidr> } | { readonly invalid: string } => {
  const entries = (text ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  const cidrs: Array<Cidr> = []
  for (const entry of entries) {
    const cidr = parseCidr(entry)
    if (cidr === null) return { invalid: entry }
    cidrs.push(cidr)
  }
  return { cidrs }
}
