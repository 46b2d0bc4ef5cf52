/**
 * Tables described once. A table is one description laid out as its record: each field is a
 * column (its name and how its value is read and written) or a group of columns that makes a
 * sub-record (a job's pricing; its output, absent while a column is NULL). Everything a
 * repository needs is derived from it when the module loads, never per call: the column list
 * (SELECT, INSERT), the INSERT and UPDATE texts with their placeholders, the record's
 * parameters in that order, and the row → record mapper.
 *
 * Rows come back as the record classes built without the constructor's validation pass
 * (`FROM_DATABASE`): the columns' types, NOT NULLs and CHECK constraints (migrations/) hold the
 * schema's rules, and the pass cost a poll ~6 % of its CPU. node-postgres returns `bigint` (and
 * `count`, `sum`) as strings: every integer goes through `toInt`, which refuses anything that is
 * not a safe integer rather than rounding. NULL becomes `null`, never `undefined`.
 *
 * Other statements number their parameters through `statement`: no `$n` is written by hand.
 */

export type Row = Readonly<Record<string, unknown>>

/** Rows were checked by PostgreSQL on the way in. */
const FROM_DATABASE = { disableValidation: true } as const

// ─────────────────────────────────────────────────────────────── values

export const toInt = (value: unknown, column = "value"): number => {
  const n = typeof value === "number" ? value : typeof value === "string" || typeof value === "bigint" ? Number(value) : NaN
  if (!Number.isSafeInteger(n)) throw new TypeError(`column ${column}: expected a safe integer, got ${String(value)}`)
  return n
}

export const toIntOrNull = (value: unknown, column = "value"): number | null =>
  value === null || value === undefined ? null : toInt(value, column)

const toFloat = (value: unknown, column: string): number => {
  const n = typeof value === "number" ? value : Number(value)
  if (!Number.isFinite(n)) throw new TypeError(`column ${column}: expected a number, got ${String(value)}`)
  return n
}

/** jsonb arrives parsed; a driver configured without the jsonb parser hands text. */
const parsedJson = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

// ─────────────────────────────────────────────────────────────── columns

/** One column: its name, how its value becomes the field's and back, and its parameter's cast. */
export interface Column<A> {
  readonly _tag: "Column"
  readonly name: string
  /** Appended to the column's placeholder (`$8::jsonb`). */
  readonly cast: string
  /** The row's value → the field's. */
  readonly read: (value: unknown) => A
  /** The field's value → the statement's parameter. */
  readonly write: (value: A) => unknown
}

/** A sub-record kept as columns of the row; with `presentIf`, absent (null) while that column is NULL. */
export interface Group<A> {
  readonly _tag: "Group"
  readonly fields: Fields<object>
  readonly make: (props: object) => A
  readonly presentIf: string | undefined
}

export type Field<A> = Column<A> | Group<A>

/** One field per property of a record's constructor. */
export type Fields<P> = { readonly [K in keyof P]-?: Field<P[K]> }

const identity = <A>(value: A): unknown => value

const column = <A>(name: string, read: (value: unknown) => A, write: (value: A) => unknown = identity, cast = ""): Column<A> =>
  ({ _tag: "Column", name, cast, read, write })

/** Text, or a union of literals that a CHECK constraint holds (a status, a mode). */
export const text = <A extends string = string>(name: string): Column<A> => column(name, (value) => value as A)

export const int = (name: string): Column<number> => column(name, (value) => toInt(value, name))

export const float = (name: string): Column<number> => column(name, (value) => toFloat(value, name))

export const bool = (name: string): Column<boolean> => column(name, (value) => value === true)

/** jsonb: parsed as it is read (`read` shapes it), written as JSON text (`write` shapes what is written). */
export const json = <A>(name: string, shape: { readonly read?: (parsed: unknown) => A; readonly write?: (value: A) => unknown } = {}): Column<A> => {
  const read = shape.read ?? ((parsed: unknown) => parsed as A)
  const write = shape.write ?? identity
  return column(name, (value) => read(parsedJson(value)), (value) => JSON.stringify(write(value)), "::jsonb")
}

/** The same column, NULL allowed (read as `null`). */
export const orNull = <A>(inner: Column<A>): Column<A | null> =>
  column(
    inner.name,
    (value) => (value === null || value === undefined ? null : inner.read(value)),
    (value) => (value === null ? null : inner.write(value)),
    inner.cast
  )

/** A record class built from the database's values, without its validation pass. */
type FromDatabase<P, A> = new(props: P, options: typeof FROM_DATABASE) => A

/** A sub-record always present. */
export function group<P, A>(record: FromDatabase<P, A>, fields: NoInfer<Fields<P>>): Group<A>
/** A sub-record that is null while `presentIf` is NULL (and whose columns are all NULL when it is). */
export function group<P, A>(record: FromDatabase<P, A>, fields: NoInfer<Fields<P>>, presentIf: string): Group<A | null>
export function group<P, A>(record: FromDatabase<P, A>, fields: Fields<P>, presentIf?: string): Group<A> {
  return { _tag: "Group", fields: fields as Fields<object>, make: (props) => new record(props as P, FROM_DATABASE), presentIf }
}

// ─────────────────────────────────────────────────────────────── tables

export interface Table<A> {
  readonly name: string
  /** The columns, in the order of the description: `id, account_id, …`. */
  readonly columns: string
  readonly columnNames: ReadonlyArray<string>
  /** The placeholders of a record's parameters, casts included: `$1, $2, …, $8::jsonb, …`. */
  readonly values: string
  /** `INSERT INTO t (columns) VALUES (values)`; parameters: `params(record)`. */
  readonly insert: string
  /** `UPDATE t SET … WHERE key = … RETURNING 1`, every column but the key's; parameters: `params(record)`. */
  readonly update: string
  /** `c = EXCLUDED.c, …` for every column but the key's: an upsert's whole-row update. */
  readonly setExcluded: string
  /** The placeholder of one column among a record's parameters (`$2`); unknown names throw. */
  readonly placeholder: (column: string) => string
  /** How many parameters a record has: a statement's own parameters come after them. */
  readonly width: number
  /** A record's parameters, in column order. */
  readonly params: (record: A) => Array<unknown>
  /** A row of the columns (as `columns` selects them) → the record. */
  readonly decode: (row: Row) => A
  /** The columns qualified by a table alias: `k.id, k.account_id, …`. */
  readonly columnsOf: (alias: string) => string
  /**
   * The columns of a joined table under names of their own (`a.id AS a_id, …`, for a table
   * aliased `a`) and the mapper that reads them back.
   */
  readonly joined: (alias: string) => { readonly columns: string; readonly decode: (row: Row) => A }
  /** `INSERT INTO t (columns) VALUES (…), (…)` for `count` records; parameters: each record's, in turn. */
  readonly insertMany: (count: number) => string
}

/** `insertMany` keeps its texts for up to this many rows. */
const MAX_KEPT_ROWS = 32

interface Leaf {
  readonly column: Column<unknown>
  /** The property path from the record to the value: `["pricing", "billableSeconds"]`. */
  readonly path: ReadonlyArray<string>
}

const leavesOf = (fields: Fields<object>, path: ReadonlyArray<string> = []): Array<Leaf> =>
  Object.entries(fields as Record<string, Field<unknown>>).flatMap(([key, field]) =>
    field._tag === "Column" ? [{ column: field, path: [...path, key] }] : leavesOf(field.fields, [...path, key])
  )

/*
 * The mappers are generated as JavaScript source, once per table, and compiled with `Function`:
 * the same code as a hand-written mapper, where every property access and every call is at a
 * place of its own, so V8 keeps each one monomorphic and inlines it. Mappers made of one closure
 * per column share their code between columns, which makes every access megamorphic: measured
 * on a job, 10× the cost of the hand-written parameters and 1.6× its row mapping. Names enter
 * the source only as JSON string literals; the functions they call are passed in, never written.
 */
const quote = (name: string) => JSON.stringify(name)

/** A record's parameters, in the order of `leaves`: a group that is null gives NULL for each of its columns. */
const compileParams = (leaves: ReadonlyArray<Leaf>): (record: object) => Array<unknown> => {
  const values = leaves.map(({ path }, i) => {
    // record["output"] == null ? null : record["output"]["report"] == null ? null : write[i](…["report"]["x"])
    const access = (n: number) => `record${path.slice(0, n).map((key) => `[${quote(key)}]`).join("")}`
    const guards = path.slice(0, -1).map((_, n) => `${access(n + 1)} == null ? null : `).join("")
    return `(${guards}write[${i}](${access(path.length)}))`
  })
  return new Function("write", `"use strict"; return (record) => [${values.join(", ")}]`)(leaves.map((leaf) => leaf.column.write))
}

/** The mapper of a record from a row whose column names carry `prefix`. */
const compileDecode = (fields: Fields<object>, make: (props: object) => unknown, prefix: string): (row: Row) => unknown => {
  const reads: Array<(value: unknown) => unknown> = []
  const makes: Array<(props: object) => unknown> = []
  const source = (fields: Fields<object>, make: (props: object) => unknown, presentIf: string | undefined): string => {
    const made = `make[${makes.push(make) - 1}]({ ${
      Object.entries(fields as Record<string, Field<unknown>>).map(([key, field]) =>
        `${quote(key)}: ${
          field._tag === "Column"
            ? `read[${reads.push(field.read) - 1}](row[${quote(prefix + field.name)}])`
            : source(field.fields, field.make, field.presentIf)
        }`
      ).join(", ")
    } })`
    return presentIf === undefined ? made : `(row[${quote(prefix + presentIf)}] == null ? null : ${made})`
  }
  const body = source(fields, make, undefined)
  return new Function("read", "make", `"use strict"; return (row) => ${body}`)(reads, makes)
}

/**
 * The description of table `name`, whose rows are `record`s; `key` names the columns an UPDATE
 * finds its row by (default `id`).
 */
export const table = <P, A>(
  name: string,
  record: FromDatabase<P, A>,
  fields: NoInfer<Fields<P>>,
  options: { readonly key?: ReadonlyArray<string> } = {}
): Table<A> => {
  const leaves = leavesOf(fields as Fields<object>)
  const columnNames = leaves.map((leaf) => leaf.column.name)
  const duplicate = columnNames.find((c, i) => columnNames.indexOf(c) !== i)
  if (duplicate !== undefined) throw new Error(`table ${name}: column ${duplicate} is described twice`)
  const key = options.key ?? ["id"]
  for (const c of key) if (!columnNames.includes(c)) throw new Error(`table ${name}: key column ${c} is not described`)
  const placeholders = leaves.map((leaf, i) => `$${i + 1}${leaf.column.cast}`)
  const placeholder = (c: string) => {
    const i = columnNames.indexOf(c)
    if (i < 0) throw new Error(`table ${name} has no column ${c}`)
    return placeholders[i]!
  }
  const columns = columnNames.join(", ")
  const values = placeholders.join(", ")
  const others = columnNames.filter((c) => !key.includes(c))
  const width = leaves.length
  const make = (props: object) => new record(props as P, FROM_DATABASE)
  const many = new Map<number, string>()
  return {
    name,
    columns,
    columnNames,
    values,
    insert: `INSERT INTO ${name} (${columns}) VALUES (${values})`,
    update: `UPDATE ${name} SET ${others.map((c) => `${c} = ${placeholder(c)}`).join(", ")} WHERE ${
      key.map((c) => `${c} = ${placeholder(c)}`).join(" AND ")
    } RETURNING 1`,
    setExcluded: others.map((c) => `${c} = EXCLUDED.${c}`).join(", "),
    placeholder,
    width,
    params: compileParams(leaves) as (record: A) => Array<unknown>,
    decode: compileDecode(fields as Fields<object>, make, "") as (row: Row) => A,
    columnsOf: (alias) => columnNames.map((c) => `${alias}.${c}`).join(", "),
    joined: (alias) => ({
      columns: columnNames.map((c) => `${alias}.${c} AS ${alias}_${c}`).join(", "),
      decode: compileDecode(fields as Fields<object>, make, `${alias}_`) as (row: Row) => A
    }),
    insertMany: (count) => {
      const kept = many.get(count)
      if (kept !== undefined) return kept
      const rows = Array.from({ length: count }, (_, r) => `(${leaves.map((leaf, i) => `$${r * width + i + 1}${leaf.column.cast}`).join(", ")})`)
      const text = `INSERT INTO ${name} (${columns}) VALUES ${rows.join(", ")}`
      // the usual counts are few and small (an account's endpoints); a rare large one is not kept
      if (count <= MAX_KEPT_ROWS) many.set(count, text)
      return text
    }
  }
}

// ─────────────────────────────────────────────────────────────── statements

/**
 * A statement's text with its parameters numbered `$1, $2, …` in the order `names` lists them,
 * which is the order the call passes their values in; `build` places them by name, as often as
 * it needs. After a table (`after`), the numbers follow its record's parameters: the call passes
 * `[...table.params(record), …values]`.
 */
export const statement = <const N extends ReadonlyArray<string>>(
  names: N,
  build: (p: { readonly [K in N[number]]: string }) => string,
  after?: { readonly width: number }
): string => {
  const offset = after?.width ?? 0
  return build(Object.fromEntries(names.map((n, i) => [n, `$${offset + i + 1}`])) as { readonly [K in N[number]]: string })
}
