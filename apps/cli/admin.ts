/**
 * `hush admin …`: acts directly on the configured store, the same data the server
 * uses (decisions.md). On the embedded default it connects to the database of the server
 * running on DATA_DIR, or starts that database itself for the command when none runs.
 */
import { Effect, Exit } from "effect"
import { listOutbox, type OutboxMessage } from "../../adapters/mail/outbox.js"
import { stopOnConfigError } from "../runtime/preflight.js"
import { compose, loadDeployment } from "../runtime/root.js"
import { parseArgs, runAdminCommand, UsageError, USAGE } from "./commands.js"

/** The outbox for a person: newest first, each message with its links. */
const formatMail = (messages: ReadonlyArray<OutboxMessage>) =>
  messages.length === 0
    ? "the dev outbox is empty"
    : messages.map((m) => [`${m.sent_at}  ${m.id}  to ${m.to}`, `  ${m.subject}`, ...m.links.map((link) => `  ${link}`)].join("\n")).join("\n\n")

const print = (json: boolean, value: unknown) =>
  console.log(json ? JSON.stringify(value) : Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}: ${v}`).join("\n"))

export const runAdmin = async (argv: ReadonlyArray<string>): Promise<number> => {
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs(argv)
  } catch (error) {
    console.error(error instanceof UsageError ? error.message : String(error))
    if (error instanceof UsageError && error.message !== USAGE) console.error(USAGE)
    return 2
  }
  const { config, keys } = Effect.runSync(stopOnConfigError("hush admin")(loadDeployment))
  if (parsed.command._tag === "MailList") {
    const messages = await listOutbox(config.dataDir, { to: parsed.command.to })
    console.log(parsed.json ? JSON.stringify(messages) : formatMail(messages))
    return 0
  }
  if (config.store === "memory") {
    console.error("error: the in-memory store (HUSH_STORE=memory) lives only inside its server process; the CLI cannot reach it. Use the embedded default or DATABASE_URL.")
    return 1
  }
  const root = compose(config, keys, { runners: [], attachEmbedded: true, authenticates: false })
  const exit = await Effect.runPromiseExit(runAdminCommand(parsed.command).pipe(Effect.provide(root.core)))
  if (Exit.isSuccess(exit)) {
    print(parsed.json, exit.value)
    return 0
  }
  console.error(`error: ${exit.cause._tag === "Fail" ? exit.cause.error.detail : "the command failed"}`)
  return 1
}
