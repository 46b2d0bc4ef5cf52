import { Context, Data, Effect } from "effect"

/** One e-mail: plain text and HTML bodies of the same content. */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

export class MailError extends Data.TaggedError("MailError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** Sends mail: SMTP (`SMTP_URL`), or the dev outbox under DATA_DIR (adapters/mail). */
export class Mailer extends Context.Tag("hush/Mailer")<Mailer, {
  readonly send: (message: MailMessage) => Effect.Effect<void, MailError>
}>() {}
