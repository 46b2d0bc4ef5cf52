/**
 * Traces (OTEL_EXPORTER_OTLP_ENDPOINT): every span Effect makes, exported by OTLP/HTTP (JSON)
 * to `${endpoint}/v1/traces`, the traces the sampler keeps (sampler.ts; all by default). Without the endpoint tracing is off: spans are no-ops and requests
 * get no span at all. Effect's own tracer would otherwise still make every span (random ids,
 * attributes, the request's URL parsed and its headers redacted) for nobody to read
 * (docs/operations.md, "Metrics, tracing and logging cost").
 * Spans: one per request (the HTTP server's, named by route template, honouring an inbound
 * W3C `traceparent`), per use case (core/services), per SQL statement (@effect/sql), per
 * blob-store call (tracedBlobStore), per job step, and the GPU provider's calls, which carry
 * `traceparent` out (adapters/http-provider).
 *
 * What a span must never hold: the platform's request span records the URL and the headers;
 * credentials' headers are redacted, and requests whose URL carries a credential (signed
 * storage URLs, OAuth callbacks, e-mail links) get no request span at all.
 */
import { OtlpSerialization, OtlpTracer } from "@effect/opentelemetry"
import { FetchHttpClient, Headers, HttpMiddleware, type HttpServerRequest } from "@effect/platform"
import { Duration, Effect, Layer, Option } from "effect"
import { STORAGE_PATH_PREFIX } from "../../adapters/local-storage/config.js"
import type { ObservabilityConfig } from "./observability.js"
import { requestSampler, sampled } from "./sampler.js"

/** Headers that carry a credential, beyond the platform's own (authorization, cookie, set-cookie, x-api-key). */
const SECRET_HEADERS = ["x-csrf-token", "x-hush-signature", "x-amz-security-token", "proxy-authorization"]

/** Query parameters that carry a credential: a signed URL's signature, an OAuth code or state, a link's token. */
const SECRET_QUERY = /[?&](x-amz-[a-z-]*|signature|sig|expires|token|code|state|key)=/i

/**
 * No request span for a URL that carries a credential: the span would record it. A request
 * with no span traces nothing under it either (the edge turns the tracer off for it).
 */
export const carriesCredential = (request: HttpServerRequest.HttpServerRequest) =>
  request.url.startsWith(`${STORAGE_PATH_PREFIX}/`) || SECRET_QUERY.test(request.url)

export const layerTracing = (config: ObservabilityConfig, version: string): Layer.Layer<never> =>
  Option.match(config.otlpEndpoint, {
    onNone: () =>
      Layer.merge(
        Layer.setTracerEnabled(false),
        Layer.scopedDiscard(Effect.locallyScopedWith(HttpMiddleware.currentTracerDisabledWhen, () => () => true))
      ),
    onSome: (endpoint) =>
      Layer.mergeAll(
        Layer.unwrapScoped(Effect.map(
          OtlpTracer.make({
            url: `${endpoint.replace(/\/+$/, "")}/v1/traces`,
            resource: { serviceName: config.serviceName, serviceVersion: version },
            exportInterval: Duration.seconds(1)
          }),
          (tracer) => Layer.setTracer(sampled(tracer, config.sampler))
        )).pipe(Layer.provide(Layer.merge(FetchHttpClient.layer, OtlpSerialization.layerJson))),
        Layer.scopedDiscard(Effect.locallyScopedWith(Headers.currentRedactedNames, (names: ReadonlyArray<string | RegExp>) => [...names, ...SECRET_HEADERS])),
        Layer.scopedDiscard(Effect.locallyScopedWith(HttpMiddleware.currentTracerDisabledWhen, (disabled) => {
          const kept = requestSampler(config.sampler)
          return (request: HttpServerRequest.HttpServerRequest) => disabled(request) || carriesCredential(request) || !kept(request)
        }))
      )
  })

