/**
 * The web dashboard (apps/web), served on the API's own origin so the session cookie and the
 * CSRF rules apply unchanged: its pages (decisions.md, Web dashboard) all answer the one HTML
 * shell, and its hashed assets are cached for a year. The build (scripts/build-web.mjs) puts
 * them in `dist/web`, with `.br` and `.gz` twins that are sent when the browser takes them.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { extname, join } from "node:path"
import type { OAuthProviderName } from "../../../core/domain/users.js"
import { OAuthProviders } from "../../../core/ports/oauth.js"
import { WEB_DIST } from "../../runtime/build-output.js"

export const DASHBOARD_PAGES = [
  "/login", "/signup", "/forgot-password", "/reset-password", "/verify-email",
  "/dashboard", "/dashboard/keys", "/dashboard/credits", "/dashboard/ledger", "/dashboard/usage",
  "/dashboard/new", "/dashboard/jobs", "/dashboard/jobs/:job_id", "/dashboard/account", "/dashboard/webhooks"
] as const

const IMMUTABLE = "public, max-age=31536000, immutable"

/**
 * Scripts and styles from this origin only; never framed. Requests and media also go to the
 * signed storage URLs (`storageOrigins`, where they are not this origin): uploads, players.
 */
const pageHeaders = (storageOrigins: ReadonlyArray<string>) => ({
  "cache-control": "no-cache",
  "content-security-policy":
    `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; ` +
    `connect-src ${["'self'", ...storageOrigins].join(" ")}; media-src ${["'self'", ...storageOrigins].join(" ")}; ` +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY"
})

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".map": "application/json"
}

/** An asset's name is `[name]-[hash].[ext]`: letters, digits, `-`, `_` and one extension. */
const ASSET_NAME = /^[A-Za-z0-9_-]+\.[a-z0-9]+$/

const readOrNull = (path: string) =>
  Effect.promise(() => readFile(path).then((bytes) => new Uint8Array(bytes), () => null))

const PROVIDERS: ReadonlyArray<OAuthProviderName> = ["github", "google", "oidc"]

const escapeAttribute = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const notBuilt = HttpServerResponse.text(
  "The web dashboard is not built: run `npm run build` (npm start does it).",
  { status: 503, headers: { "cache-control": "no-store", "retry-after": "5" } }
)

export const webRoutes = (storageOrigins: ReadonlyArray<string>) => HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const headers = pageHeaders(storageOrigins)
    const oauth = yield* OAuthProviders
    const configured = PROVIDERS.filter((name) => oauth.get(name)._tag === "Some").join(" ")

    const shell = Effect.gen(function*() {
      const html = yield* readOrNull(join(WEB_DIST, "index.html"))
      if (html === null) return notBuilt
      // which sign-in buttons the login page shows: configuration the page cannot ask for
      const page = new TextDecoder().decode(html)
        .replace("<head>", `<head><meta name="hush-oauth" content="${escapeAttribute(configured)}">`)
      return HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders(headers))
    })
    for (const path of DASHBOARD_PAGES) yield* router.get(path, shell)
    // the service's root is the dashboard (decisions.md, Deployment settings)
    yield* router.get("/", HttpServerResponse.redirect("/dashboard", { status: 302, headers: { "cache-control": "no-cache" } }))

    yield* router.get("/assets/:name", Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const name = decodeURIComponent(new URL(request.url, "http://localhost").pathname.slice("/assets/".length))
      const type = CONTENT_TYPES[extname(name)]
      if (!ASSET_NAME.test(name) || type === undefined) return HttpServerResponse.empty({ status: 404 })
      const path = join(WEB_DIST, "assets", name)
      const accepted = request.headers["accept-encoding"] ?? ""
      for (const [encoding, suffix] of [["br", ".br"], ["gzip", ".gz"]] as const) {
        if (!accepted.includes(encoding)) continue
        const compressed = yield* readOrNull(path + suffix)
        if (compressed === null) continue
        return HttpServerResponse.uint8Array(compressed, {
          contentType: type,
          headers: { "cache-control": IMMUTABLE, "content-encoding": encoding, vary: "Accept-Encoding", "x-content-type-options": "nosniff" }
        })
      }
      const bytes = yield* readOrNull(path)
      if (bytes === null) return HttpServerResponse.empty({ status: 404 })
      return HttpServerResponse.uint8Array(bytes, {
        contentType: type,
        headers: { "cache-control": IMMUTABLE, vary: "Accept-Encoding", "x-content-type-options": "nosniff" }
      })
    }))
  }))
