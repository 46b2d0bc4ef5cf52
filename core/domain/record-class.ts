/**
 * `Schema.Class` whose constructor validates with a parser compiled once.
 *
 * Effect 3's class constructor validates through `ParseResult.validateSync(fields)`, which
 * computes the fields' type-side AST on every call and looks its compiled parser up by that
 * AST's identity. When a field is itself a class (a job's pricing, a file's error), the
 * type-side AST is a new object each time, the lookup misses, and the parser is compiled
 * afresh: ~150 µs per `new JobRecord(…)` against ~4 µs for a record of plain fields
 * (measured 2026-11-26, docs/architecture.md "Keeping the edge cheap"). The check itself is
 * the same; only its compilation moves to module load.
 */
import { ParseResult, Schema } from "effect"

type MakeOptions = boolean | { readonly disableValidation?: boolean }

const skipsValidation = (options: MakeOptions | undefined) =>
  options === true || (typeof options === "object" && options.disableValidation === true)

/**
 * Use as `class X extends RecordClass<X>("X")({ …fields }) {}`; the fields may not have
 * constructor defaults. `X.copy(record, changes)` checks only the changes.
 */
export const RecordClass = <Self>(identifier: string) =>
<Fields extends Schema.Struct.Fields>(fields: Fields) => {
  for (const [name, field] of Object.entries(fields)) {
    // the base constructor merges defaults before it validates; this one validates first
    if (Schema.isPropertySignature(field)) throw new Error(`${identifier}.${name}: RecordClass fields may not be property signatures`)
  }
  const Base = Schema.Class<Self>(identifier)(fields)
  const validate = ParseResult.validateSync(Schema.Struct(fields).annotations({ title: `${identifier} (Constructor)` }))
  const validateChanges = ParseResult.validateSync(
    Schema.partialWith(Schema.Struct(fields), { exact: true }).annotations({ title: `${identifier} (changes)` })
  )
  // the base constructor is told to skip its own pass: the props were checked here
  const Compiled = class extends (Base as new(props: unknown, options?: MakeOptions) => object) {
    constructor(props: unknown, options?: MakeOptions) {
      super(skipsValidation(options) ? props : validate(props), true)
    }
    static copy(this: new(props: unknown, options?: MakeOptions) => object, record: object, changes: object) {
      return new this({ ...record, ...validateChanges(changes) }, true)
    }
  }
  return Compiled as unknown as typeof Base & {
    /**
     * The record with `changes`, of which only the changes are checked: the rest was where the
     * record came from (its constructor, or the database's constraints). A transition's copy
     * (a job claimed, then succeeded) so checks 5 fields, not 24 and their sub-records.
     */
    readonly copy: (record: Self, changes: Partial<Schema.Struct.Type<Fields>>) => Self
  }
}
