/**
 * The e-mails of self-serve accounts, as plain text and HTML of the same content, and their
 * sending. Links point at the web pages of decisions.md ({PUBLIC_BASE_URL}/verify-email,
 * /reset-password), which post the token to the API.
 */
import { Effect } from "effect"
import { type MailMessage, Mailer } from "../ports/mailer.js"

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** Paragraphs (a link on its own line becomes an anchor) → the message. */
const compose = (to: string, subject: string, paragraphs: ReadonlyArray<string>): MailMessage => ({
  to,
  subject,
  text: `${paragraphs.join("\n\n")}\n\n— Hush\n`,
  html: `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${
    paragraphs.map((p) => /^https?:\/\/\S+$/.test(p)
      ? `<p><a href="${escapeHtml(p)}">${escapeHtml(p)}</a></p>`
      : `<p>${escapeHtml(p)}</p>`).join("")
  }<p>— Hush</p></body></html>`
})

export const verificationMail = (to: string, link: string): MailMessage =>
  compose(to, "Verify your e-mail address for Hush", [
    "Welcome to Hush. Open this link to verify your e-mail address (it works once, for 24 hours):",
    link,
    "Until the address is verified you can use test keys; live keys need a verified address.",
    "If you did not sign up for Hush, ignore this message."
  ])

export const resetMail = (to: string, link: string): MailMessage =>
  compose(to, "Reset your Hush password", [
    "Someone asked to reset the password of the Hush account with this address. Open this link to choose a new one (it works once, for 1 hour):",
    link,
    "If it was not you, ignore this message: your password stays as it is."
  ])

export const passwordChangedMail = (to: string): MailMessage =>
  compose(to, "Your Hush password was changed", [
    "The password of your Hush account was just changed, and every signed-in session was ended.",
    "If this was not you, reset your password at once and contact support."
  ])

/** Sends a message; a failure is logged, not raised (the caller's operation stands). */
export const sendQuietly = (message: MailMessage) =>
  Effect.flatMap(Mailer, (mailer) => mailer.send(message)).pipe(
    Effect.catchAll((error) => Effect.logWarning(`mail to ${message.to} ("${message.subject}") not sent: ${error.message}`))
  )
