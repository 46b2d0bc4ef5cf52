/**
 * Mail over SMTP with nodemailer: `SMTP_URL` (`smtp://user:pass@host:port`, or `smtps://` for
 * TLS from the start; STARTTLS is used when the server offers it), from `MAIL_FROM`.
 */
import { Effect, Layer, Redacted } from "effect"
import nodemailer from "nodemailer"
import { MailError, Mailer } from "../../core/ports/mailer.js"

export const DEFAULT_MAIL_FROM = "Hush <no-reply@localhost>"

export interface SmtpSettings {
  readonly url: Redacted.Redacted<string>
  readonly from: string
}

export const layerSmtpMailer = (settings: SmtpSettings) =>
  Layer.scoped(Mailer, Effect.gen(function*() {
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport(Redacted.value(settings.url), {
          // fail in seconds, not the library's minutes, when the server is away
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000
        } as never)),
      (t) => Effect.sync(() => t.close())
    )
    return {
      send: (message) =>
        Effect.tryPromise({
          try: () => transport.sendMail({ from: settings.from, to: message.to, subject: message.subject, text: message.text, html: message.html }),
          catch: (cause) => new MailError({ message: `SMTP delivery failed: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
        }).pipe(Effect.asVoid)
    }
  }))
