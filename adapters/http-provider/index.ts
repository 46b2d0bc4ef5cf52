/**
 * The GPU provider over HTTP (docs/gpu-provider-protocol.md) and the router that sends each
 * model to the provider of its runner.
 */
export { DEFAULT_RETRY, makeClient, parseRetryAfter, type RetryPolicy } from "./client.js"
export { DEFAULT_GPU_RUNNER, type HttpProviderOptions, layerHttpProvider, makeHttpProviderService, outputBound } from "./provider.js"
export { PROTOCOL_HEADER, PROTOCOL_VERSION, RemoteJob, RemoteStatus, type Submission } from "./protocol.js"
export { layerRoutingProvider, makeRoutingProviderService } from "./routing.js"
