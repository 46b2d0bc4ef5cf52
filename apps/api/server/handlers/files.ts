import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Schema } from "effect"
import { LimitsConfig } from "../../../../core/domain/limits.js"
import { CompleteIn } from "../../../../core/schema/index.js"
import { CurrentCaller } from "../../../../core/domain/caller.js"
import { completeFile, createFile, deleteFile, getFile } from "../../../../core/services/files.js"
import { presentCreateOut, presentFile } from "../../../../core/services/present.js"
import { Background } from "../background.js"
import { HushApi } from "../../contract/definition.js"
import { jsonAnswer } from "../edge/json-answer.js"
import { STRICT } from "../../contract/strict.js"
import { bodyJson } from "../edge/body.js"
import { invalidFromParseError } from "../edge/invalid.js"

const decodeCompleteBody = Schema.decodeUnknown(Schema.NullOr(CompleteIn), STRICT)

/** The optional body of complete: absent or `null` means no parts. The edge already refused malformed and hostile JSON. */
const completeBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.orDie(request.text)
  if (text.trim() === "") return null
  const parsed = yield* bodyJson(request)
  return yield* decodeCompleteBody(parsed).pipe(Effect.mapError((e) => invalidFromParseError(e, 422, "request body")))
})

export const FilesHandlers = HttpApiBuilder.group(HushApi, "files", (handlers) =>
  Effect.gen(function*() {
    const limits = yield* LimitsConfig
    const background = yield* Background
    const answer = {
      created: yield* jsonAnswer(HushApi, "files", "createFile"),
      file: yield* jsonAnswer(HushApi, "files", "getFile"),
      completed: yield* jsonAnswer(HushApi, "files", "completeFile")
    }
    return handlers
      .handle("createFile", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const idempotencyKey = (yield* HttpServerRequest.HttpServerRequest).headers["idempotency-key"]
          const created = yield* createFile(caller, {
            filename: payload.filename, sizeBytes: payload.size_bytes, contentType: payload.content_type
          }, idempotencyKey)
          return answer.created(presentCreateOut(created.file, created.upload, created.expiresAt))
        }))
      .handle("getFile", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => getFile(caller, path.file_id)).pipe(Effect.map((file) => answer.file(presentFile(file, limits)))))
      .handle("deleteFile", ({ path }) => Effect.flatMap(CurrentCaller, (caller) => deleteFile(caller, path.file_id)))
      .handle("completeFile", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const body = yield* completeBody
          const parts = body?.parts?.map((p) => ({ partNumber: p.part_number, etag: p.etag })) ?? null
          const file = yield* completeFile(caller, path.file_id, parts)
          if (file.status === "validating") yield* background.validate(file)
          return answer.completed(presentFile(file, limits))
        }))
  }))
