/**
 * The runtime's SHA-256 and HMAC-SHA256 (core/rules/secrets.ts `DigestFunctions`), for the
 * services that hash secrets at rest (keys, sessions, e-mail links), fingerprint requests and
 * derive ids. Portable JavaScript where no runtime provides its own; Node's through
 * adapters/node-crypto (~3× faster). Both give the same bytes (test/contracts/digests.ts).
 */
import { Context } from "effect"
import { type DigestFunctions, portableDigests } from "../rules/secrets.js"

/** Read with `yield* Digests`. */
export class Digests extends Context.Reference<Digests>()("hush/Digests", {
  defaultValue: (): DigestFunctions => portableDigests
}) {}
