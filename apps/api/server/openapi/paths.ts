/** Where the reference is served (decisions.md, Versioning); the routes are serve.ts. */
export const REFERENCE_PATHS = {
  public: { document: "/v1/openapi.json", page: "/docs" },
  dashboard: { document: "/v1/openapi.dashboard.json", page: "/docs/dashboard" }
} as const

export type ReferenceName = keyof typeof REFERENCE_PATHS

/** Scalar's script, shared by both pages. */
export const SCALAR_SCRIPT_PATH = "/docs/scalar.js"
