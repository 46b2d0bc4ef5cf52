/** Mail kept in memory (core tests): sent messages are read back through `MemoryOutbox`. */
import { Context, Effect, Layer, Ref } from "effect"
import { Mailer, type MailMessage } from "../../core/ports/mailer.js"

export class MemoryOutbox extends Context.Tag("hush/adapters/MemoryOutbox")<MemoryOutbox, {
  /** Oldest first. */
  readonly messages: Effect.Effect<ReadonlyArray<MailMessage>>
}>() {}

export const layerMemoryMailer = Layer.effectContext(Effect.gen(function*() {
  const sent = yield* Ref.make<ReadonlyArray<MailMessage>>([])
  return Context.make(Mailer, { send: (message) => Ref.update(sent, (all) => [...all, message]) })
    .pipe(Context.add(MemoryOutbox, { messages: Ref.get(sent) }))
}))
