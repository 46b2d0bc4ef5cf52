/** An outcome of a user command that is not an API problem: a refused input or model, a failed or canceled job. */
import { Data } from "effect"

export class CliOutcome extends Data.TaggedError("CliOutcome")<{
  /** One or two lines for stderr. */
  readonly message: string
  readonly exitCode: number
  /** What `--json` prints on stdout. */
  readonly json?: unknown
}> {}
