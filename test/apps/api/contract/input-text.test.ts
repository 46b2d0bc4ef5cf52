/**
 * Every string a client sends in a body or a query refuses control characters (decisions.md,
 * Requests and errors; core/schema/common.ts `Text`, `FreeText`): read from the HttpApi
 * definition itself, so a field added later as a plain `Schema.String` fails here before it
 * can carry a NUL to PostgreSQL. Path parameters are left out: the edge answers 404 to any
 * path with `%` (edge/index.ts), and a raw control character never passes Node's parser.
 */
import { HttpApi, type HttpApiEndpoint } from "@effect/platform"
import { Either, Option, Schema, SchemaAST as AST } from "effect"
import { describe, expect, it } from "vitest"
import { HushApi } from "../../../../apps/api/contract/definition.js"
import { ControlFreeSchemaId, FreeText, Text } from "../../../../core/schema/index.js"

/** The paths under `ast` that decode to a string without passing `Text` or `FreeText`. */
const unguardedStrings = (ast: AST.AST, path: string, found: Array<string>, seen = new Set<AST.AST>()): Array<string> => {
  if (seen.has(ast)) return found
  seen.add(ast)
  const walk = (inner: AST.AST, at: string) => unguardedStrings(inner, at, found, seen)
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      found.push(path || "(the whole value)")
      break
    case "Refinement":
      if (Option.getOrUndefined(AST.getSchemaIdAnnotation(ast)) !== ControlFreeSchemaId) walk(ast.from, path)
      break
    // what the handler receives: `limit` is a number made from a string, never kept as one
    case "Transformation":
      walk(ast.to, path)
      break
    case "TypeLiteral":
      for (const property of ast.propertySignatures) walk(property.type, `${path}${path === "" ? "" : "."}${String(property.name)}`)
      for (const index of ast.indexSignatures) walk(index.type, `${path}[*]`)
      break
    case "Union":
      for (const member of ast.types) walk(member, path)
      break
    case "TupleType":
      for (const element of ast.elements) walk(element.type, `${path}[]`)
      for (const rest of ast.rest) walk(rest.type, `${path}[]`)
      break
    case "Suspend":
      walk(ast.f(), path)
      break
    case "Declaration":
      for (const parameter of ast.typeParameters) walk(parameter, path)
      break
    default:
      break
  }
  return found
}

const inputs = () => {
  const schemas: Array<{ readonly where: string; readonly ast: AST.AST }> = []
  HttpApi.reflect(HushApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const props = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      const name = `${endpoint.method} ${endpoint.path}`
      if (Option.isSome(props.payloadSchema)) schemas.push({ where: `${name} body`, ast: props.payloadSchema.value.ast })
      if (Option.isSome(props.urlParamsSchema)) schemas.push({ where: `${name} query`, ast: props.urlParamsSchema.value.ast })
    }
  })
  return schemas
}

describe("strings a client sends", () => {
  it("are Text or FreeText in every body and query of the API", () => {
    const schemas = inputs()
    // the walk reaches the fields it should: the bodies and queries with strings in them
    expect(schemas.length).toBeGreaterThan(20)
    expect(schemas.some((s) => s.where === "POST /v1/files body")).toBe(true)
    expect(schemas.some((s) => s.where === "GET /v1/jobs query")).toBe(true)
    const unguarded = schemas.flatMap(({ where, ast }) => unguardedStrings(ast, "", []).map((path) => `${where}: ${path}`))
    expect(unguarded).toEqual([])
  })

  it("the walk finds a plain string, at any depth", () => {
    const plain = Schema.Struct({ a: Text, b: Schema.optional(Schema.NullOr(Schema.Struct({ c: Schema.Array(Schema.String) }))) })
    expect(unguardedStrings(plain.ast, "", [])).toEqual(["b.c[]"])
  })

  it("Text refuses NUL and every C0 control character; FreeText allows a tab only", () => {
    const accepts = (schema: Schema.Schema<string>, value: string) => Either.isRight(Schema.decodeUnknownEither(schema)(value))
    for (let code = 0; code < 0x20; code++) {
      const value = `a${String.fromCharCode(code)}b`
      expect(accepts(Text, value), `U+${code.toString(16)}`).toBe(false)
      expect(accepts(FreeText, value), `U+${code.toString(16)}`).toBe(code === 0x09)
    }
    for (const ok of ["", "plain", "Café \"live\" ✓", "\u007f", "\u2028"]) {
      expect(accepts(Text, ok)).toBe(true)
      expect(accepts(FreeText, ok)).toBe(true)
    }
  })
})
