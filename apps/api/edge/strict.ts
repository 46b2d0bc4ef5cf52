import type { ParseOptions } from "effect/SchemaAST"

/** Request bodies are decoded strictly: an unknown field is an error, all issues reported. */
export const STRICT: ParseOptions = { onExcessProperty: "error", errors: "all" }
