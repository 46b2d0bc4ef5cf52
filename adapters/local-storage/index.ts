/**
 * The embedded blob store on local disk (see ./store.ts) and the HTTP handler for its signed
 * URLs (see ./http.ts for how to mount it beside the HttpApi).
 */
export {
  LocalStorageConfig,
  type LocalStorageOptions,
  type ResolvedLocalStorageConfig,
  STORAGE_PATH_PREFIX
} from "./config.js"
export { contentDisposition, handleStorageRequest, localStorageRouter, localStorageRoutes, parseRange } from "./http.js"
export { PARAM as SIGNED_URL_PARAMS } from "./signing.js"
export { layer, make, layerLocalBlobStore, layerLocalStorage, sweepStale } from "./store.js"
