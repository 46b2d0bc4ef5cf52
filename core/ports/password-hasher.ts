import { Context, Effect } from "effect"

/**
 * Password hashing (argon2id in production: adapters/argon2). The hash string carries its own
 * algorithm, parameters and salt.
 */
export class PasswordHasher extends Context.Tag("hush/PasswordHasher")<PasswordHasher, {
  readonly hash: (password: string) => Effect.Effect<string>
  /**
   * True when `password` matches `hash`. With `hash` null (no such user, or no password set)
   * it does the same work against a hash of its own and answers false, so a wrong address
   * takes as long as a wrong password.
   */
  readonly verify: (hash: string | null, password: string) => Effect.Effect<boolean>
}>() {}
