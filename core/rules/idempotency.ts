/** `Idempotency-Key` (decisions.md): 1 to 255 printable ASCII characters, no surrounding space. */
import { Either } from "effect"
import { InvalidRequest } from "../errors.js"

const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/

export const checkIdempotencyKey = (key: string): Either.Either<string, InvalidRequest> =>
  KEY_PATTERN.test(key)
    ? Either.right(key)
    : Either.left(new InvalidRequest({
      status: 400, field: "Idempotency-Key", detail: "the Idempotency-Key header must be 1 to 255 printable ASCII characters"
    }))

/** Statuses whose answer is kept for replays: not 429 or 5xx (those retry afresh). */
export const isRecordableStatus = (status: number): boolean => status !== 429 && status < 500
