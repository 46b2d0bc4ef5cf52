/**
 * The reference on the wire (decisions.md, Versioning):
 *   GET /v1/openapi.json            the public API's document
 *   GET /v1/openapi.dashboard.json  the dashboard's (session, account, payment webhook)
 *   GET /docs, /docs/dashboard      Scalar's browsable page of each
 *   GET /docs/scalar.js             Scalar's script, shared by both pages
 * All compressed and with an ETag (compressed.ts). The pages are small: the script and the
 * document are fetched beside them, from this origin only (no fonts, telemetry, registry or
 * proxy: the page works offline), and each is cached and revalidated on its own.
 */
import { HttpApi, HttpApiBuilder, HttpApiScalar, HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { compressedAnswer } from "../compressed.js"
import { referenceDocument } from "./documents.js"
import { REFERENCE_PATHS, type ReferenceName, SCALAR_SCRIPT_PATH } from "./paths.js"

/**
 * Scalar's standalone script, as @effect/platform inlines it in its own reference page (the
 * script is not exported on its own): that page is made once for an empty API and the script
 * taken from it.
 */
const scalarScript = (): string => {
  let page: Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined
  const capture = {
    add: (_method: string, _path: string, handler: Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
      Effect.sync(() => void (page = handler))
  } as unknown as HttpLayerRouter.HttpRouter
  Effect.runSync(Effect.scoped(Layer.build(
    HttpApiScalar.layerHttpLayerRouter({ api: HttpApi.make("scalar"), path: "/scalar" }).pipe(
      Layer.provide(Layer.succeed(HttpLayerRouter.HttpRouter, capture))
    )
  )) as Effect.Effect<Context.Context<never>>)
  const response = Effect.runSync(page!)
  const html = response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : ""
  const start = html.lastIndexOf("<script>")
  const end = html.lastIndexOf("</script>")
  if (start === -1 || end < start) throw new Error("the reference page: Scalar's script was not found in @effect/platform's page")
  return html.slice(start + "<script>".length, end)
}

const escapeAttribute = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * Scalar's configuration: no third-party call (its default fonts, telemetry, the toolbar with
 * registry share and paid SDK generation are off), the bearer key (or the session cookie)
 * selected for "Try it", and the document downloadable as JSON.
 */
const scalarConfiguration = (name: ReferenceName) => ({
  _integration: "html",
  withDefaultFonts: false,
  telemetry: false,
  showToolbar: "never",
  documentDownloadType: "json",
  authentication: { preferredSecurityScheme: name === "public" ? "apiKey" : "session" }
})

const TITLES: Record<ReferenceName, string> = {
  public: "Hush API reference",
  dashboard: "Hush dashboard endpoints (internal)"
}

const page = (name: ReferenceName) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${TITLES[name]}</title>` +
  `<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>` +
  `<script id="api-reference" data-url="${REFERENCE_PATHS[name].document}" ` +
  `data-configuration="${escapeAttribute(JSON.stringify(scalarConfiguration(name)))}"></script>` +
  `<script src="${SCALAR_SCRIPT_PATH}"></script></body></html>`

/** `publicBaseUrl` (PUBLIC_BASE_URL) is each document's one server: clients generated from it call there. */
export const referenceRoutes = (publicBaseUrl: string) => HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    for (const name of ["public", "dashboard"] as const) {
      yield* router.get(REFERENCE_PATHS[name].document, compressedAnswer(() => JSON.stringify(referenceDocument(name, publicBaseUrl)), {
        contentType: "application/json"
      }))
      yield* router.get(REFERENCE_PATHS[name].page, compressedAnswer(() => page(name), { contentType: "text/html; charset=utf-8" }))
    }
    yield* router.get(SCALAR_SCRIPT_PATH, compressedAnswer(scalarScript, { contentType: "text/javascript; charset=utf-8" }))
  }))
