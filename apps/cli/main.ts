/**
 * `npm run hush -- admin …`: through the running server's admin socket when one listens,
 * else directly on the configured persistent store.
 */
import { Effect, Exit } from "effect"
import { listOutbox, type OutboxMessage } from "../../adapters/mail/outbox.js"
import { loadConfig } from "../runtime/config.js"
import { sendAdminCommand } from "../runtime/admin-socket.js"
import { coreLayer } from "../runtime/layers.js"
import { loadOrCreateKeys, secureDataDir } from "../runtime/secrets.js"
import { parseArgs, runAdminCommand, UsageError, USAGE } from "./commands.js"

/** The outbox for a person: newest first, each message with its links. */
const formatMail = (messages: ReadonlyArray<OutboxMessage>) =>
  messages.length === 0
    ? "the dev outbox is empty"
    : messages.map((m) => [`${m.sent_at}  ${m.id}  to ${m.to}`, `  ${m.subject}`, ...m.links.map((link) => `  ${link}`)].join("\n")).join("\n\n")

const print = (json: boolean, value: unknown) =>
  console.log(json ? JSON.stringify(value) : Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}: ${v}`).join("\n"))

const main = async () => {
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs(process.argv.slice(2))
  } catch (error) {
    console.error(error instanceof UsageError ? error.message : String(error))
    if (error instanceof UsageError && error.message !== USAGE) console.error(USAGE)
    return 2
  }
  const config = Effect.runSync(loadConfig)
  if (parsed.command._tag === "MailList") {
    const messages = await listOutbox(config.dataDir, { to: parsed.command.to })
    console.log(parsed.json ? JSON.stringify(messages) : formatMail(messages))
    return 0
  }
  const viaServer = await sendAdminCommand(config.dataDir, parsed.command)
  if (viaServer !== null) {
    if (viaServer.status !== 200) {
      console.error(`error: ${(viaServer.body as { error?: string }).error ?? "the command failed"}`)
      return 1
    }
    print(parsed.json, viaServer.body)
    return 0
  }
  if (config.store === "memory") {
    console.error(`error: no Hush server is running on ${config.dataDir}, and the in-memory store lives only inside the server. Start it (npm start) and run the command again.`)
    return 1
  }
  const keys = Effect.runSync(Effect.zipRight(secureDataDir(config.dataDir), loadOrCreateKeys(config.dataDir)))
  const layer = coreLayer(config, keys, { runners: [] })
  const exit = await Effect.runPromiseExit(runAdminCommand(parsed.command).pipe(Effect.provide(layer)))
  if (Exit.isSuccess(exit)) {
    print(parsed.json, exit.value)
    return 0
  }
  console.error(`error: ${exit.cause._tag === "Fail" ? exit.cause.error.detail : "the command failed"}`)
  return 1
}

main().then((code) => process.exit(code), (error) => {
  console.error(error)
  process.exit(1)
})
