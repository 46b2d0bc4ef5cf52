import type { ParseOptions } from "effect/SchemaAST"

/**
 * Request bodies are decoded strictly: an unknown field is an error. Decoding stops at the
 * first issue: reporting all of them made a body within the edge's limits (10,000 values)
 * cost 100× a flat body of its size (9,900 unknown fields, or 9,900 wrong `events`, each an
 * issue formatted), where one issue costs what a flat body does (bench/hostile-bodies.ts).
 */
export const STRICT: ParseOptions = { onExcessProperty: "error", errors: "first" }
