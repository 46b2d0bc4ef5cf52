/**
 * The one place that touches node-postgres's unexported fields (pg 8.23.1, pinned in
 * package.json: lib/query.js and lib/result.js). Nothing else in Hush reads or writes them.
 *
 * For every execution, node-postgres builds its result's shape from the row description: a
 * parser per column, and the empty row that every row is copied from, made as a
 * dictionary-mode object (~11 µs for a job's 35 columns, 7 % of a poll's CPU). A named
 * statement of ours builds it once per pool and reuses it while the description matches
 * (names, types, formats); a different one (the table changed) is built and kept afresh.
 *
 * Should an upgrade of `pg` move these fields, `reusesShapes` is false and every statement
 * builds its shape as node-postgres does: slower, never wrong. `test/adapters/postgres/pool.test.ts`
 * asserts that the pinned version still has them.
 */
import pg from "pg"

/** What node-postgres keeps, unexported, on a statement while its rows arrive. */
interface QueryInternals {
  readonly name?: string
  readonly callback?: unknown
  _accumulateRows: unknown
  readonly _result: ResultInternals
  listeners(event: "row"): ReadonlyArray<unknown>
}

interface ResultInternals {
  fields: ReadonlyArray<pg.FieldDef>
  _parsers: unknown
  _prebuiltEmptyResultObject: unknown
  readonly command: unknown
}

/** A named statement's result shape, as node-postgres builds it from the row description. */
interface Shape {
  readonly fields: ReadonlyArray<pg.FieldDef>
  readonly parsers: unknown
  readonly empty: unknown
}

type RowDescription = { readonly fields: ReadonlyArray<pg.FieldDef> }

const describeRows = (pg.Query.prototype as unknown as { handleRowDescription?(this: unknown, message: RowDescription): void })
  .handleRowDescription

/**
 * Whether this `pg` handles a row description as 8.23.1 does (its result's fields, parsers and
 * empty row, then `_accumulateRows`): checked once, on a statement never sent.
 */
export const reusesShapes: boolean = (() => {
  if (typeof describeRows !== "function") return false
  const source = String(describeRows)
  const result = (new pg.Query("SELECT 1") as unknown as Partial<QueryInternals>)._result
  return source.includes("addFields") && source.includes("_accumulateRows") && result !== undefined &&
    "fields" in result && "_parsers" in result && "_prebuiltEmptyResultObject" in result && result.command === null
})()

const sameFields = (a: ReadonlyArray<pg.FieldDef>, b: ReadonlyArray<pg.FieldDef>) => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.name !== b[i]!.name || a[i]!.dataTypeID !== b[i]!.dataTypeID || a[i]!.format !== b[i]!.format) return false
  }
  return true
}

/**
 * A `pg.Query` class for one pool's named statements, keeping each name's result shape; plain
 * `pg.Query` when this `pg` lacks the fields (`reusesShapes`).
 */
export const namedStatementClass = (): typeof pg.Query => {
  if (!reusesShapes) return pg.Query
  const shapes = new Map<string, Shape>()
  return class NamedStatement extends pg.Query {
    handleRowDescription(message: RowDescription) {
      const self = this as unknown as QueryInternals
      const shape = self.name === undefined ? undefined : shapes.get(self.name)
      const result = self._result
      // a second result of a multi-statement text (command set) goes node-postgres's way
      if (shape === undefined || result.command !== null || !sameFields(shape.fields, message.fields)) {
        describeRows!.call(this, message)
        if (self.name !== undefined) shapes.set(self.name, { fields: message.fields, parsers: result._parsers, empty: result._prebuiltEmptyResultObject })
        return
      }
      result.fields = message.fields
      result._parsers = shape.parsers
      result._prebuiltEmptyResultObject = shape.empty
      self._accumulateRows = self.callback !== undefined || self.listeners("row").length === 0
    }
  }
}
