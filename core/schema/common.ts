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

/** Marks the string schemas that refuse control characters (test/apps/api/contract/input-text.test.ts checks every input string has it). */
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
