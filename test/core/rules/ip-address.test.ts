/** Client addresses (core/rules/ip-address.ts) and the TRUSTED_PROXIES setting. */
import { ConfigProvider, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../../apps/runtime/config.js"
import {
  cidrContains, clientAddressOf, parseCidr, parseIp, parseTrustedProxies, rateNetworkOf
} from "../../../core/rules/ip-address.js"

const trusted = (text: string) => {
  const parsed = parseTrustedProxies(text)
  if ("invalid" in parsed) throw new Error(parsed.invalid)
  return parsed.cidrs
}

describe("parseIp", () => {
  it("reads IPv4, IPv6 (compressed, with a dotted tail, bracketed, with a zone) and an IPv4 address with a port", () => {
    expect(parseIp("192.0.2.1")).toEqual({ family: 4, bytes: new Uint8Array([192, 0, 2, 1]) })
    expect(parseIp("192.0.2.1:8080")?.bytes).toEqual(new Uint8Array([192, 0, 2, 1]))
    expect(parseIp("2001:db8::1")?.bytes).toEqual(new Uint8Array([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]))
    expect(parseIp("[2001:db8::1]:443")?.family).toBe(6)
    expect(parseIp("fe80::1%eth0")?.family).toBe(6)
    expect(parseIp("::")?.bytes).toEqual(new Uint8Array(16))
    expect(parseIp("64:ff9b::192.0.2.1")?.bytes.slice(12)).toEqual(new Uint8Array([192, 0, 2, 1]))
  })

  it("takes an IPv4-mapped IPv6 address for the IPv4 one (a dual-stack socket's peer)", () => {
    expect(parseIp("::ffff:127.0.0.1")).toEqual({ family: 4, bytes: new Uint8Array([127, 0, 0, 1]) })
    expect(parseIp("::ffff:7f00:1")).toEqual({ family: 4, bytes: new Uint8Array([127, 0, 0, 1]) })
  })

  it("refuses what is not an address", () => {
    for (const bad of ["", "unknown", "256.0.0.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "::g", "2001:db8::1.2.3", "1.2.3.4:port"]) {
      expect(parseIp(bad), bad).toBeNull()
    }
  })
})

describe("CIDRs", () => {
  it("contain the addresses of their prefix, of their own family only", () => {
    const ten = parseCidr("10.0.0.0/8")!
    expect(cidrContains(ten, parseIp("10.255.1.2")!)).toBe(true)
    expect(cidrContains(ten, parseIp("11.0.0.0")!)).toBe(false)
    const odd = parseCidr("192.0.2.128/25")!
    expect(cidrContains(odd, parseIp("192.0.2.200")!)).toBe(true)
    expect(cidrContains(odd, parseIp("192.0.2.127")!)).toBe(false)
    const v6 = parseCidr("fd00::/8")!
    expect(cidrContains(v6, parseIp("fd12:3456::1")!)).toBe(true)
    expect(cidrContains(v6, parseIp("fe00::1")!)).toBe(false)
    expect(cidrContains(parseCidr("0.0.0.0/0")!, parseIp("::1")!)).toBe(false)
    expect(cidrContains(parseCidr("::ffff:10.0.0.0/104")!, parseIp("10.1.1.1")!)).toBe(true)
  })

  it("a bare address is one host", () => {
    const one = parseCidr("192.0.2.7")!
    expect(cidrContains(one, parseIp("192.0.2.7")!)).toBe(true)
    expect(cidrContains(one, parseIp("192.0.2.8")!)).toBe(false)
  })

  it("refuses bad prefixes", () => {
    for (const bad of ["10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "::/129", "10.0.0.0/8/8", "10.0.0.0/x", "proxy.local"]) expect(parseCidr(bad), bad).toBeNull()
  })
})

describe("clientAddressOf", () => {
  const proxies = trusted("127.0.0.1/32, 10.0.0.0/8, fd00::/8")

  it("is the socket's peer without trusted proxies, or when the peer is not one", () => {
    expect(clientAddressOf("198.51.100.1", "203.0.113.5", [])).toBe("198.51.100.1")
    expect(clientAddressOf("198.51.100.1", "203.0.113.5", proxies)).toBe("198.51.100.1")
  })

  it("behind trusted proxies, the right-most address that is not one", () => {
    expect(clientAddressOf("127.0.0.1", "203.0.113.5", proxies)).toBe("203.0.113.5")
    expect(clientAddressOf("::ffff:127.0.0.1", "203.0.113.5", proxies)).toBe("203.0.113.5")
    expect(clientAddressOf("127.0.0.1", "6.6.6.6, 203.0.113.5, 10.0.0.2", proxies)).toBe("203.0.113.5")
    expect(clientAddressOf("fd00::1", "2001:db8::7,fd00::2", proxies)).toBe("2001:db8::7")
  })

  it("with no header, the peer; every hop trusted, the left-most; a hop that does not parse, the trusted one that reported it", () => {
    expect(clientAddressOf("127.0.0.1", undefined, proxies)).toBe("127.0.0.1")
    expect(clientAddressOf("127.0.0.1", "10.0.0.3, 10.0.0.2", proxies)).toBe("10.0.0.3")
    expect(clientAddressOf("127.0.0.1", "203.0.113.5, garbage, 10.0.0.2", proxies)).toBe("10.0.0.2")
    expect(clientAddressOf("127.0.0.1", "garbage", proxies)).toBe("127.0.0.1")
  })
})

describe("rateNetworkOf", () => {
  it("keys IPv4 by its address and IPv6 by its /64", () => {
    expect(rateNetworkOf("203.0.113.5")).toBe("203.0.113.5")
    expect(rateNetworkOf("::ffff:203.0.113.5")).toBe("203.0.113.5")
    expect(rateNetworkOf("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64")
    expect(rateNetworkOf("2001:0db8:0001:0002:ffff:ffff:ffff:fffe")).toBe("2001:db8:1:2::/64")
    expect(rateNetworkOf("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64")
    expect(rateNetworkOf("unknown")).toBe("unknown")
  })
})

describe("TRUSTED_PROXIES", () => {
  const load = (value: string) =>
    Effect.runPromiseExit(loadConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TRUSTED_PROXIES", value]])))))

  it("reads comma-separated CIDRs; empty is none", async () => {
    const exit = await load(" 10.0.0.0/8 ,192.0.2.7, fd00::/8 ")
    expect(Exit.isSuccess(exit) && exit.value.trustedProxies?.map((c) => `${c.family}/${c.prefix}`)).toEqual(["4/8", "4/32", "6/8"])
    const empty = await load("")
    expect(Exit.isSuccess(empty) && empty.value.trustedProxies).toEqual([])
  })

  it("stops start-up naming the setting and the entry that is not a CIDR", async () => {
    for (const [value, entry] of [["10.0.0.0/8, proxy.internal", "proxy.internal"], ["10.0.0.0/33", "10.0.0.0/33"]] as const) {
      const exit = await load(value)
      expect(Exit.isFailure(exit)).toBe(true)
      const message = Exit.isFailure(exit) ? String(exit.cause) : ""
      expect(message).toContain("TRUSTED_PROXIES")
      expect(message).toContain(`'${entry}'`)
    }
  })
})
