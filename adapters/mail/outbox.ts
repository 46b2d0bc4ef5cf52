/**
 * The dev outbox: without SMTP_URL, mail is written to `DATA_DIR/outbox/` (one JSON file per
 * message, written whole then renamed, so a reader never sees half of one) and read back by
 * `admin mail list`, newest first, as `[{id, to, subject, text, links, sent_at}]`.
 *
 * With `logLinks` (development: decisions.md, Deployment settings) each message is also logged
 * at info level with its recipient, subject and links, so the verification or reset link is in
 * the terminal that runs `npm start`. Never in production: those links are credentials.
 */
import { Clock, Effect, Layer } from "effect"
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { MailError, Mailer, type MailMessage } from "../../core/ports/mailer.js"
import { randomId } from "../webcrypto/ids.js"

export interface OutboxMessage {
  readonly id: string
  readonly to: string
  readonly subject: string
  readonly text: string
  /** Every URL in the text, in order. */
  readonly links: ReadonlyArray<string>
  readonly sent_at: string
}

export const outboxDir = (dataDir: string) => join(dataDir, "outbox")

/** Every http(s) URL in a text. */
export const linksIn = (text: string): ReadonlyArray<string> => text.match(/https?:\/\/[^\s<>"')\]]+/g) ?? []

/** Orders messages written in the same millisecond by this process. */
let sequence = 0

export interface OutboxOptions {
  /** Log each message's recipient, subject and links at info level (development only). */
  readonly logLinks?: boolean
}

export const layerOutboxMailer = (dataDir: string, options: OutboxOptions = {}) =>
  Layer.succeed(Mailer, {
    send: (message: MailMessage) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const id = randomId("mail")
        const dir = outboxDir(dataDir)
        const stored = {
          id, to: message.to, subject: message.subject, text: message.text, html: message.html,
          links: linksIn(message.text), sent_at: new Date(now).toISOString()
        }
        const name = `${String(now).padStart(15, "0")}-${String(++sequence % 1e9).padStart(9, "0")}-${id}.json`
        yield* Effect.tryPromise({
          try: async () => {
            await mkdir(dir, { recursive: true, mode: 0o700 })
            await writeFile(join(dir, `.${name}.tmp`), JSON.stringify(stored, null, 2), { mode: 0o600 })
            await rename(join(dir, `.${name}.tmp`), join(dir, name))
          },
          catch: (cause) => new MailError({ message: `cannot write to the dev outbox ${dir}`, cause })
        })
        if (options.logLinks === true) {
          yield* Effect.logInfo(`e-mail to ${message.to} (${message.subject}): ${stored.links.join(" ") || "no link"}`).pipe(
            Effect.annotateLogs({ outbox: dir })
          )
        }
      })
  })

/** The outbox, newest first; only messages to `to` (compared case-insensitively) when given. */
export const listOutbox = async (dataDir: string, options: { readonly to?: string | undefined } = {}): Promise<ReadonlyArray<OutboxMessage>> => {
  const dir = outboxDir(dataDir)
  let names: Array<string>
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith(".json") && !name.startsWith("."))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return []
    throw error
  }
  const wanted = options.to?.trim().toLowerCase()
  const messages: Array<OutboxMessage> = []
  for (const name of names.sort().reverse()) {
    const m = JSON.parse(await readFile(join(dir, name), "utf8")) as OutboxMessage
    if (wanted !== undefined && m.to.trim().toLowerCase() !== wanted) continue
    messages.push({ id: m.id, to: m.to, subject: m.subject, text: m.text, links: m.links, sent_at: m.sent_at })
  }
  return messages
}
