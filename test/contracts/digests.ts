/**
 * The Digests contract: SHA-256 and HMAC-SHA256 as their standards define them (FIPS 180-4's
 * examples, RFC 4231's test cases), and byte for byte what OpenSSL computes for any input, so
 * a hash stored by one runtime (an API key's, a session's) is found by another.
 */
import { createHash, createHmac } from "node:crypto"
import { encodeHexLowerCase } from "@oslojs/encoding"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { DigestFunctions } from "../../core/rules/secrets.js"

const bytes = (text: string) => new TextEncoder().encode(text)
const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)))
const hex = (data: Uint8Array) => encodeHexLowerCase(data)

export const digestsContract = (name: string, digests: DigestFunctions) => {
  describe(`${name} Digests`, () => {
    it("hashes FIPS 180-4's examples", () => {
      expect(hex(digests.sha256(bytes("")))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
      expect(hex(digests.sha256(bytes("abc")))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      expect(hex(digests.sha256(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))))
        .toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    })

    it("MACs RFC 4231's test cases 1, 2 and 6 (a key longer than the block)", () => {
      expect(hex(digests.hmacSha256(fromHex("0b".repeat(20)), bytes("Hi There"))))
        .toBe("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
      expect(hex(digests.hmacSha256(bytes("Jefe"), bytes("what do ya want for nothing?"))))
        .toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
      expect(hex(digests.hmacSha256(fromHex("aa".repeat(131)), bytes("Test Using Larger Than Block-Size Key - Hash Key First"))))
        .toBe("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    })

    it("agrees with OpenSSL on any data and key, across block boundaries", () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 150 }), (data, key) => {
        expect(hex(digests.sha256(data))).toBe(createHash("sha256").update(data).digest("hex"))
        expect(hex(digests.hmacSha256(key, data))).toBe(createHmac("sha256", key).update(data).digest("hex"))
      }), { numRuns: 500 })
    })

    it("leaves its inputs as they were", () => {
      const data = bytes("hush_test_secret")
      const key = bytes("key")
      digests.hmacSha256(key, data)
      digests.sha256(data)
      expect(new TextDecoder().decode(data)).toBe("hush_test_secret")
      expect(new TextDecoder().decode(key)).toBe("key")
    })
  })
}
