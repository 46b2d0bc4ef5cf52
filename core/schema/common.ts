/** Building blocks shared by the wire schemas. */
import { Schema } from "effect"

/** ISO 8601 date-time in UTC; records keep epoch millis and core/time.ts converts. */
export const Timestamp = Schema.String

/** Integer micros of a US dollar. */
export const Micros = Schema.Int

/**
 * A constant field such as `object: "job"`: required on the wire, filled in by the class
 * constructor so code building a response need not repeat it.
 */
export const constant = <const L extends string>(value: L) =>
  Schema.Literal(value).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => value))

/** The spec's pages: `data` plus an opaque `next_cursor`, null on the last page. */
export const NextCursor = Schema.NullOr(Schema.String)
