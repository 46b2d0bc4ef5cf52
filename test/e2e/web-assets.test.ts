/**
 * The web dashboard as the API serves it (apps/api/server/web.ts), over plain HTTP: every page of
 * decisions.md answers the HTML shell (not cached, CSP), the hashed assets are cached for a
 * year and sent compressed when the client takes it, and nothing else under /assets is served.
 */
import { Redacted } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DASHBOARD_PAGES } from "../../apps/api/server/web.js"
import { WEB_DIST } from "../../apps/runtime/build-output.js"
import { signedUrlOrigins } from "../../adapters/s3/config.js"
import { startTestServer, type TestServer } from "../support/server.js"

const get = (server: TestServer, path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}${path}`, { headers, redirect: "manual" })

describe("web dashboard assets", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({
      accounts: { github: { clientId: "gh-client", clientSecret: Redacted.make("gh-secret") } }
    })
  })
  afterAll(async () => {
    await server.close()
  })

  it("every dashboard page answers the shell: HTML, revalidated, with a CSP and the configured sign-in providers", async () => {
    for (const page of DASHBOARD_PAGES) {
      const path = page.replace(":job_id", "job_abc")
      const response = await get(server, path)
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-type"), path).toMatch(/^text\/html/)
      expect(response.headers.get("cache-control")).toBe("no-cache")
      expect(response.headers.get("content-security-policy")).toMatch(/script-src 'self';.*frame-ancestors 'none'/)
      // local disk's signed URLs are this origin's: uploads and players need nothing else
      expect(response.headers.get("content-security-policy")).toContain("connect-src 'self'; media-src 'self';")
      expect(response.headers.get("x-frame-options")).toBe("DENY")
      const html = await response.text()
      expect(html).toContain('<meta name="hush-oauth" content="github">')
      expect(html).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/)
    }
    expect((await get(server, "/dashboard/nope")).status).toBe(404)
  })

  it("on S3 the CSP admits the bucket's signed-URL origins for uploads and players, and only them", () => {
    expect(signedUrlOrigins({ bucket: "audio", region: "eu-west-1", forcePathStyle: false }))
      .toEqual(["https://audio.s3.eu-west-1.amazonaws.com", "https://s3.eu-west-1.amazonaws.com"])
    expect(signedUrlOrigins({ bucket: "audio", region: "auto", endpoint: "http://127.0.0.1:9000/", forcePathStyle: true }))
      .toEqual(["http://127.0.0.1:9000"])
  })

  it("hashed assets: a year's immutable cache, brotli or gzip when accepted, the same bytes either way", async () => {
    const html = await (await get(server, "/dashboard")).text()
    const script = html.match(/src="(\/assets\/[^"]+\.js)"/)![1]!
    const style = html.match(/href="(\/assets\/[^"]+\.css)"/)![1]!
    const original = readFileSync(join(WEB_DIST, script))
    const plain = await get(server, script, { "accept-encoding": "identity" })
    expect(plain.status).toBe(200)
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(plain.headers.get("content-encoding")).toBeNull()
    expect(plain.headers.get("vary")).toBe("Accept-Encoding")
    expect(Buffer.from(await plain.arrayBuffer()).equals(original)).toBe(true)

    // node's fetch decodes by itself; read the raw bytes through node:http instead
    const raw = async (encoding: string) => {
      const { request } = await import("node:http")
      return new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        request(`${server.baseUrl}${script}`, { headers: { "accept-encoding": encoding } }, (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (c) => chunks.push(c))
          res.on("end", () => resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(chunks) }))
        }).on("error", reject).end()
      })
    }
    const br = await raw("gzip, deflate, br")
    expect(br.encoding).toBe("br")
    expect(brotliDecompressSync(br.body).equals(original)).toBe(true)
    expect(br.body.length).toBeLessThan(original.length / 2)
    const gz = await raw("gzip")
    expect(gz.encoding).toBe("gzip")
    expect(gunzipSync(gz.body).equals(original)).toBe(true)

    const css = await get(server, style)
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
  })

  it("only built assets by their plain names: no way out of the folder, no other files", async () => {
    for (const path of [
      // a real .js file outside the folder: served were the name not checked
      "/assets/..%2F..%2F..%2Fnode_modules%2Fpreact%2Fdist%2Fpreact.js", "/assets/..%2Findex.html", "/assets/%2e%2e%2f.inputs",
      "/assets/missing-abc123.js", "/assets/index.html", "/assets/x.js.br", "/assets/.inputs"
    ]) {
      const response = await get(server, path)
      expect(response.status, path).toBe(404)
      expect(response.headers.get("cache-control") ?? "", path).not.toContain("immutable")
    }
  })
})
