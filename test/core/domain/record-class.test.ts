import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { RecordClass } from "../../../core/domain/record-class.js"

class Inner extends Schema.Class<Inner>("Inner")({ n: Schema.Int }) {}
class Outer extends RecordClass<Outer>("Outer")({ id: Schema.String, inner: Inner, maybe: Schema.NullOr(Inner) }) {}

describe("RecordClass", () => {
  it("builds an instance of the class, nested classes kept", () => {
    const outer = new Outer({ id: "a", inner: new Inner({ n: 1 }), maybe: null })
    expect(outer).toBeInstanceOf(Outer)
    expect(outer.inner).toBeInstanceOf(Inner)
    expect(outer.id).toBe("a")
  })

  it("still validates every construction, nested fields included, naming the class", () => {
    for (let i = 0; i < 3; i++) { // the compiled parser is reused, and keeps refusing
      expect(() => new Outer({ id: "a", inner: { n: 1.5 } as Inner, maybe: null })).toThrow(ParseResult.ParseError)
      expect(() => new Outer({ id: 1 as unknown as string, inner: new Inner({ n: 1 }), maybe: null })).toThrow(/Outer \(Constructor\)/)
    }
  })

  it("drops properties that are not fields, as Schema.Class does", () => {
    const outer = new Outer({ id: "a", inner: new Inner({ n: 1 }), maybe: null, extra: 1 } as ConstructorParameters<typeof Outer>[0])
    expect("extra" in outer).toBe(false)
  })

  it("skips the check when told to, as Schema.Class does", () => {
    const unchecked = new Outer({ id: "a", inner: { n: 1.5 } as Inner, maybe: null }, { disableValidation: true })
    expect(unchecked.inner.n).toBe(1.5)
  })

  it("decodes and encodes as a schema, building the nested classes", () => {
    const decoded = Schema.decodeUnknownEither(Outer)({ id: "a", inner: { n: 2 }, maybe: { n: 3 } })
    expect(Either.isRight(decoded)).toBe(true)
    const value = Either.getOrThrow(decoded)
    expect(value).toBeInstanceOf(Outer)
    expect(value.maybe).toBeInstanceOf(Inner)
    expect(Schema.encodeSync(Outer)(value)).toEqual({ id: "a", inner: { n: 2 }, maybe: { n: 3 } })
    expect(Either.isLeft(Schema.decodeUnknownEither(Outer)({ id: "a", inner: { n: "2" }, maybe: null }))).toBe(true)
  })

  it("copies with changes: an instance of the class, the rest kept, each change checked, the record untouched", () => {
    const outer = new Outer({ id: "a", inner: new Inner({ n: 1 }), maybe: null })
    const copied = Outer.copy(outer, { maybe: new Inner({ n: 2 }) })
    expect(copied).toBeInstanceOf(Outer)
    expect(copied).toEqual(new Outer({ id: "a", inner: new Inner({ n: 1 }), maybe: new Inner({ n: 2 }) }))
    expect(outer.maybe).toBeNull()
    expect(() => Outer.copy(outer, { id: 1 as unknown as string })).toThrow(/Outer \(changes\)/)
    expect(() => Outer.copy(outer, { inner: { n: 1.5 } as Inner })).toThrow(ParseResult.ParseError)
    expect(() => Outer.copy(outer, { id: undefined as unknown as string })).toThrow(ParseResult.ParseError)
  })

  it("refuses fields with constructor defaults, which it would validate before merging", () => {
    expect(() => RecordClass("Defaulted")({ n: Schema.Int.pipe(Schema.propertySignature, Schema.withConstructorDefault(() => 1)) }))
      .toThrow(/property signatures/)
  })
})
