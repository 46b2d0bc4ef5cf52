/** Building blocks shared by the wire schemas. */
import { Schema } from "effect"

/** ISO 8601 date-time in UTC; records keep epoch millis and core/time.ts converts. */
export const Timestamp = Schema.String

/**
 * A field with its caller-facing description (what it means, units, default), written for the
 * API reference. It annotates the property, not its type: validation messages keep naming the
 * rule that failed ("a string at most 64 character(s) long"), never this text.
 */
export const field = <S extends Schema.Schema.All>(schema: S, description: string) =>
  Schema.propertySignature(schema).annotations({ description })

/** Integer micros of a US dollar. */
export const Micros = Schema.Int

/**
 * A constant field such as `object: "job"`: required on the wire, filled in by the class
 * constructor so code building a response need not repeat it.
 */
export const constant = <const L extends string>(value: L) =>
  Schema.Literal(value).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => value))
    .annotations({ description: `Always \`${value}\`: the kind of object.` })

/** The spec's pages: `data` plus an opaque `next_cursor`, null on the last page. */
export const NextCursor = Schema.NullOr(Schema.String)

/** The `next_cursor` field of every page. */
export const nextCursorField = field(
  NextCursor,
  "Pass as `cursor` to get the next page; null on the last page. Opaque: do not build or change one."
)
