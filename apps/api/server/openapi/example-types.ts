/** The shape of the reference's examples (examples.ts, dashboard-examples.ts), checked by describe.ts. */
import type { ErrorCode } from "../../../../core/errors.js"

export interface OperationExample {
  /** What the success answer is, in a sentence: the success response's description. */
  readonly answered: string
  /** Path parameters by name. */
  readonly path?: Readonly<Record<string, string>>
  /** Query parameters by name, as sent (strings). */
  readonly query?: Readonly<Record<string, string>>
  /** Request headers by name (as documented: `Idempotency-Key`, `X-CSRF-Token`). */
  readonly headers?: Readonly<Record<string, string>>
  /** The JSON request body. */
  readonly body?: unknown
  /** The success answer's JSON body; none for 204 and 302. */
  readonly answer?: unknown
  /** The `detail` of an example problem where the generic one (errors.ts) would not fit this operation. */
  readonly problems?: Partial<Readonly<Record<ErrorCode, string>>>
}

/** By endpoint name (`createFile`). */
export type OperationExamples = Readonly<Record<string, OperationExample>>
