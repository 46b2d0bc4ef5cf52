/**
 * Opaque page cursors: the keyset position, bound to the account and mode that asked for it
 * and signed with HMAC-SHA256, so a tampered or borrowed cursor is `400 invalid_request`.
 */
import { constantTimeEqual } from "@oslojs/crypto/subtle"
import { decodeBase64urlIgnorePadding, encodeBase64urlNoPadding } from "@oslojs/encoding"
import { Effect } from "effect"
import { DeploymentSecrets } from "../domain/deployment.js"
import { InvalidRequest } from "../errors.js"
import { Digests } from "../ports/digests.js"
import { type DigestFunctions, utf8 } from "../rules/secrets.js"

export interface CursorPosition {
  readonly createdAt: number
  readonly id: string
}

const mac = (digests: DigestFunctions, key: Uint8Array, scope: string, payload: string) => digests.hmacSha256(key, utf8(`${scope}\n${payload}`))

/** Any JSON position, signed for the scope. */
const encodeSigned = (scope: string, position: unknown) =>
  Effect.map(Effect.zip(DeploymentSecrets, Digests), ([{ cursorKey }, digests]) => {
    const payload = encodeBase64urlNoPadding(utf8(JSON.stringify(position)))
    return `${payload}.${encodeBase64urlNoPadding(mac(digests, cursorKey, scope, payload))}`
  })

const invalidCursor = () =>
  new InvalidRequest({ status: 400, field: "cursor", detail: "cursor is not a valid cursor from next_cursor of this listing" })

/** The signed position, checked by `read` (which throws on a wrong shape). */
const decodeSigned = <A>(scope: string, cursor: string, read: (position: unknown) => A) =>
  Effect.flatMap(Effect.zip(DeploymentSecrets, Digests), ([{ cursorKey }, digests]) =>
    Effect.try({
      try: () => {
        const [payload, signature, ...rest] = cursor.split(".")
        if (payload === undefined || signature === undefined || rest.length > 0) throw invalidCursor()
        if (!constantTimeEqual(decodeBase64urlIgnorePadding(signature), mac(digests, cursorKey, scope, payload))) throw invalidCursor()
        return read(JSON.parse(new TextDecoder().decode(decodeBase64urlIgnorePadding(payload))))
      },
      catch: () => invalidCursor()
    }))

export const encodeCursor = (scope: string, position: CursorPosition) => encodeSigned(scope, [position.createdAt, position.id])

export const decodeCursor = (scope: string, cursor: string) =>
  decodeSigned(scope, cursor, (position) => {
    const [createdAt, id] = position as [unknown, unknown]
    if (!Number.isSafeInteger(createdAt) || typeof id !== "string") throw invalidCursor()
    return { createdAt: createdAt as number, id } satisfies CursorPosition
  })

/** A cursor over a sequence number (the ledger's `seq`). */
export const encodeSeqCursor = (scope: string, seq: number) => encodeSigned(scope, { seq })

export const decodeSeqCursor = (scope: string, cursor: string) =>
  decodeSigned(scope, cursor, (position) => {
    const seq = (position as { seq?: unknown } | null)?.seq
    if (!Number.isSafeInteger(seq)) throw invalidCursor()
    return seq as number
  })
