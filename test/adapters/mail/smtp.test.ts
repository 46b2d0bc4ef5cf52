/**
 * The SMTP adapter (nodemailer) against a real SMTP server started here (smtp-server): what the
 * server received is what the Mailer was given, with authentication from SMTP_URL; a server that
 * refuses or is away is a MailError, not a crash.
 */
import { Effect, Redacted } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layerSmtpMailer } from "../../../adapters/mail/smtp.js"
import { Mailer, type MailMessage } from "../../../core/ports/mailer.js"
import { verificationMail } from "../../../core/services/mail.js"

interface Received {
  readonly from: string | undefined
  readonly to: ReadonlyArray<string>
  readonly user: string | undefined
  readonly raw: string
}

describe("SMTP mailer", () => {
  const received: Array<Received> = []
  let server: SMTPServer
  let port = 0
  beforeAll(async () => {
    server = new SMTPServer({
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      authOptional: false,
      onAuth(auth, _session, callback) {
        if (auth.username === "hush" && auth.password === "s3cret pass") callback(null, { user: auth.username })
        else callback(new Error("invalid credentials"))
      },
      onRcptTo(address, _session, callback) {
        if (address.address.endsWith("@refused.example")) callback(new Error("mailbox unavailable"))
        else callback()
      },
      onData(stream, session, callback) {
        const chunks: Array<Buffer> = []
        stream.on("data", (c: Buffer) => chunks.push(c))
        stream.on("end", () => {
          received.push({
            from: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            user: session.user as string | undefined,
            raw: Buffer.concat(chunks).toString("utf8")
          })
          callback()
        })
      }
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    port = (server.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const send = (url: string, message: MailMessage) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(Mailer, (mailer) => mailer.send(message)).pipe(
      Effect.provide(layerSmtpMailer({ url: Redacted.make(url), from: "Hush <no-reply@hush.test>" })),
      Effect.either
    )))

  it("delivers the message, text and HTML, from MAIL_FROM, authenticated with SMTP_URL's credentials", async () => {
    const message = verificationMail("ada@example.com", "http://localhost:8787/verify-email?token=abc")
    const result = await send(`smtp://hush:${encodeURIComponent("s3cret pass")}@127.0.0.1:${port}`, message)
    expect(result._tag).toBe("Right")
    expect(received).toHaveLength(1)
    const [mail] = received
    expect(mail!.user).toBe("hush")
    expect(mail!.from).toBe("no-reply@hush.test")
    expect(mail!.to).toEqual(["ada@example.com"])
    expect(mail!.raw).toMatch(/^From: Hush <no-reply@hush\.test>$/m)
    expect(mail!.raw).toMatch(/^To: ada@example\.com$/m)
    expect(mail!.raw).toContain(`Subject: ${message.subject}`)
    expect(mail!.raw).toMatch(/Content-Type: multipart\/alternative/)
    expect(mail!.raw).toMatch(/Content-Type: text\/plain/)
    expect(mail!.raw).toMatch(/Content-Type: text\/html/)
    expect(mail!.raw.replace(/=\r?\n/g, "")).toContain("http://localhost:8787/verify-email?token=3Dabc")
  })

  it("a refused recipient, wrong credentials or no server are MailErrors", async () => {
    const message: MailMessage = { to: "x@refused.example", subject: "s", text: "t", html: "<p>t</p>" }
    const refused = await send(`smtp://hush:${encodeURIComponent("s3cret pass")}@127.0.0.1:${port}`, message)
    expect(refused._tag === "Left" && refused.left._tag).toBe("MailError")
    const wrong = await send(`smtp://hush:nope@127.0.0.1:${port}`, { ...message, to: "a@example.com" })
    expect(wrong._tag === "Left" && wrong.left.message).toMatch(/SMTP delivery failed/)
    const away = await send("smtp://127.0.0.1:1", { ...message, to: "a@example.com" })
    expect(away._tag).toBe("Left")
    expect(received.filter((r) => r.to.includes("a@example.com") || r.to.includes("x@refused.example"))).toEqual([])
  })
})
