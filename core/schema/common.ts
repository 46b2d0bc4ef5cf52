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

/** Marks the string schemas that refuse control characters (test/input-text.test.ts checks every input string has it). */
export const ControlFreeSchemaId: unique symbol = Symbol.for("hush/schema/ControlFree")

// eslint-disable-next-line no-control-regex
const C0 = /[\u0000-\u001f]/
// eslint-disable-next-line no-control-regex
const C0_BUT_TAB = /[\u0000-\u0008\u000a-\u001f]/

/**
 * A string a client sends (decisions.md, Requests and errors): no NUL or other C0 control
 * character, which nothing of ours needs and PostgreSQL refuses (NUL) in text. Every string of
 * a request's body or query is one of these or `FreeText`: in a body its field is `422
 * invalid_request`, in a query `400`, before any handler runs.
 */
export const Text = Schema.String.pipe(Schema.filter((s) => !C0.test(s), {
  schemaId: ControlFreeSchemaId,
  message: () => "must not contain control characters (U+0000 to U+001F)"
}))

/** Free text (a description, a password): as `Text`, but a tab is allowed. */
export const FreeText = Schema.String.pipe(Schema.filter((s) => !C0_BUT_TAB.test(s), {
  schemaId: ControlFreeSchemaId,
  message: () => "must not contain control characters (U+0000 to U+001F) other than a tab"
}))
