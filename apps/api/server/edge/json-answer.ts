/**
 * An endpoint's success value answered as JSON without the HttpApi's encoding pass, where that
 * pass would give back the value's own fields: the wire classes (core/schema) are plain
 * strings, numbers, literals and nested classes, so `JSON.stringify` of the value is the JSON
 * of its encoding. The pass walked every field of a job on each poll (~10 % of a poll's CPU,
 * measured side by side). Where a schema has any other transformation (a number sent as a
 * string, a date, a default filled in), the answerer hands the value back unchanged and the
 * HttpApi encodes it as before; the status and content type are the endpoint's own either way.
 */
import { type HttpApi, type HttpApiEndpoint, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Schema, SchemaAST as AST } from "effect"

/**
 * Whether encoding a value of `ast` yields exactly its own JSON-visible fields: no
 * transformation but a `Schema.Class`'s (instance ↔ its fields), and only JSON's own types.
 */
export const encodesAsItself = (ast: AST.AST, seen: Set<AST.AST> = new Set()): boolean => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null || typeof ast.literal !== "bigint"
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "TemplateLiteral":
    case "Enums":
      return true
    case "Refinement":
      return encodesAsItself(ast.from, seen)
    case "Union":
      return ast.types.every((member) => encodesAsItself(member, seen))
    case "TupleType":
      return ast.elements.every((element) => encodesAsItself(element.type, seen)) &&
        ast.rest.every((rest) => encodesAsItself(rest.type, seen))
    case "TypeLiteral":
      return ast.propertySignatures.every((field) => typeof field.name === "string" && encodesAsItself(field.type, seen)) &&
        ast.indexSignatures.every((index) => encodesAsItself(index.type, seen))
    case "Suspend": {
      if (seen.has(ast)) return true
      seen.add(ast)
      return encodesAsItself(ast.f(), seen)
    }
    case "Transformation":
      // a Schema.Class: its instance encodes as its fields (the `from` side), nothing else changes
      return isClass(ast) && encodesAsItself(ast.from, seen)
    default:
      return false
  }
}

/** `Schema.Class` (and TaggedClass, TaggedError): the only transformation to a declaration that carries surrogates on both sides. */
const isClass = (ast: AST.Transformation) =>
  ast.transformation._tag === "FinalTransformation" &&
  ast.to._tag === "Declaration" &&
  ast.annotations[AST.SurrogateAnnotationId] !== undefined &&
  ast.to.annotations[AST.SurrogateAnnotationId] !== undefined

/**
 * On in the tests' servers: every direct answer is also encoded through its schema and must
 * give the same JSON, so a presenter's stray field or out-of-range value fails the request
 * (500) there, as the encoding pass would have failed it.
 */
export class CheckJsonAnswers extends Context.Reference<CheckJsonAnswers>()("hush/api/CheckJsonAnswers", {
  defaultValue: () => false
}) {}

export interface JsonAnswer {
  <A>(value: A): A | HttpServerResponse.HttpServerResponse
  /** Whether values are answered directly (false: handed back for the HttpApi's encoding). */
  readonly direct: boolean
}

/** The answerer of `api`'s endpoint `group`.`name`; an unknown endpoint is a defect at start-up. */
export const jsonAnswer = (api: HttpApi.HttpApi.Any, group: string, name: string): Effect.Effect<JsonAnswer> =>
  Effect.map(CheckJsonAnswers, (check) => {
    const endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps | undefined =
      (api as unknown as HttpApi.HttpApi.AnyWithProps).groups[group]?.endpoints[name]
    if (endpoint === undefined) throw new Error(`no endpoint ${group}.${name} in the API`)
    const schemas = new Set<Schema.Schema.Any>()
    HttpApiSchema.deunionize(schemas, endpoint.successSchema)
    const [only] = schemas
    const handBack = Object.assign(<A>(value: A) => value, { direct: false })
    if (schemas.size !== 1 || only === undefined || HttpApiSchema.isVoid(only.ast)) return handBack
    const encoding = HttpApiSchema.getEncoding(only.ast)
    if (encoding.kind !== "Json" || !encodesAsItself(only.ast)) return handBack
    const options = { status: HttpApiSchema.getStatusSuccess(only), contentType: encoding.contentType }
    const encode = Schema.encodeUnknownSync(only as Schema.Schema<unknown, unknown, never>)
    const answer = <A>(value: A) => {
      if (check) {
        const direct = JSON.stringify(value)
        const encoded = JSON.stringify(encode(value))
        if (direct !== encoded) throw new Error(`${group}.${name}: the direct answer ${direct} is not its encoding ${encoded}`)
      }
      return HttpServerResponse.unsafeJson(value, options)
    }
    return Object.assign(answer, { direct: true })
  })
