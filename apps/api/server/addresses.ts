/**
 * Where a person finds a running Hush (decisions.md, Deployment settings): the dashboard, the
 * API reference and the API, on the address its links use (PUBLIC_BASE_URL, by default
 * http://localhost:PORT), not the socket's 0.0.0.0. `npm start` logs them once it listens.
 */
export interface ServiceAddresses {
  readonly dashboard: string
  readonly docs: string
  readonly api: string
}

export const serviceAddresses = (publicBaseUrl: string, listeningPort: number): ServiceAddresses => {
  const url = new URL(publicBaseUrl)
  // PORT=0 asks the system for a port: the default base names port 0, the socket knows the real one
  if (url.port === "0") url.port = String(listeningPort)
  const base = url.toString().replace(/\/+$/, "")
  return { dashboard: `${base}/dashboard`, docs: `${base}/docs`, api: `${base}/v1` }
}

/** The start line: one line, each address a link a terminal can open. */
export const startMessage = (addresses: ServiceAddresses, listeningPort: number): string =>
  `Hush is ready (port ${listeningPort}): dashboard ${addresses.dashboard}  API reference ${addresses.docs}  API ${addresses.api}`
