/**
 * The data directory and the per-deployment secrets (storage URL signing, cursor signing): the
 * secrets are made once and kept in DATA_DIR, owner-only, so restarts keep issued URLs and
 * cursors valid. `HUSH_SIGNING_SECRET` overrides, for several nodes sharing one deployment.
 * Anything wrong stops start-up with a message naming it (a ConfigError), never a stack trace
 * later nor a silent fallback.
 */
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ConfigError, Effect } from "effect"

export interface DeploymentKeys {
  readonly signingSecret: string
  readonly cursorKey: string
}

/** The shortest secret accepted: 32 characters (the generated ones are 64 hex digits, 256 bits). */
export const MIN_SECRET_LENGTH = 32

const SECRETS_FILE = "secrets.json"

const invalid = (path: string, message: string) => ConfigError.InvalidData([path], message)

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`

/**
 * DATA_DIR owner-only: created 0700; everything the process creates from now on is owner-only
 * too (umask 077: blobs, the embedded database, temp files). An existing folder that others can
 * enter is tightened when it is Hush's own (it holds secrets.json), and otherwise refused: a
 * misplaced DATA_DIR (`/tmp`, a home folder) is not chmod-ed behind the operator's back.
 */
export const secureDataDir = (dataDir: string): Effect.Effect<void, ConfigError.ConfigError> =>
  Effect.try({
    try: () => {
      process.umask(0o077)
      if (!existsSync(dataDir)) {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 })
        chmodSync(dataDir, 0o700)
        return undefined
      }
      const stats = statSync(dataDir)
      if (!stats.isDirectory()) return `DATA_DIR ${dataDir} is not a folder`
      if ((stats.mode & 0o077) === 0) return undefined
      if (existsSync(join(dataDir, SECRETS_FILE)) && stats.uid === process.getuid?.()) {
        chmodSync(dataDir, 0o700)
        return undefined
      }
      return `DATA_DIR ${dataDir} is open to other users (mode ${octal(stats.mode)}): chmod 700 it, or set DATA_DIR to a new folder`
    },
    catch: (cause) => invalid("DATA_DIR", `DATA_DIR ${dataDir} cannot be prepared: ${cause instanceof Error ? cause.message : String(cause)}`)
  }).pipe(Effect.flatMap((problem) => problem === undefined ? Effect.void : Effect.fail(invalid("DATA_DIR", problem))))

const isSecret = (value: unknown): value is string => typeof value === "string" && value.length >= MIN_SECRET_LENGTH

/** The keys in DATA_DIR/secrets.json, checked; a ConfigError saying what is wrong with the file otherwise. */
const readKeysFile = (file: string): Effect.Effect<DeploymentKeys, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const text = yield* Effect.try({
      try: () => readFileSync(file, "utf8"),
      catch: (cause) => invalid(SECRETS_FILE, `${file} cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`)
    })
    const advice = "restore it from a backup, or delete it to make new secrets (links and cursors already issued then stop working)"
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => invalid(SECRETS_FILE, `${file} is not valid JSON: ${advice}`)
    })
    const record = typeof parsed === "object" && parsed !== null ? parsed as Record<string, unknown> : {}
    for (const field of ["signingSecret", "cursorKey"] as const) {
      if (!isSecret(record[field])) {
        return yield* Effect.fail(invalid(SECRETS_FILE, `${file}: "${field}" must be a string of at least ${MIN_SECRET_LENGTH} characters; ${advice}`))
      }
    }
    return { signingSecret: record["signingSecret"] as string, cursorKey: record["cursorKey"] as string }
  })

/**
 * The deployment's keys: from `HUSH_SIGNING_SECRET` (at least 32 characters) when set, else
 * from DATA_DIR/secrets.json, made (0600) on first start.
 */
export const loadOrCreateKeys = (dataDir: string): Effect.Effect<DeploymentKeys, ConfigError.ConfigError> =>
  Effect.suspend(() => {
    const shared = process.env["HUSH_SIGNING_SECRET"]
    if (shared !== undefined) {
      return shared.length >= MIN_SECRET_LENGTH
        ? Effect.succeed({ signingSecret: shared, cursorKey: `${shared}:cursor` })
        : Effect.fail(invalid(
          "HUSH_SIGNING_SECRET",
          `HUSH_SIGNING_SECRET must be at least ${MIN_SECRET_LENGTH} characters (it has ${shared.length}): use e.g. \`openssl rand -hex 32\`, or unset it to keep secrets in DATA_DIR`
        ))
    }
    const file = join(dataDir, SECRETS_FILE)
    if (existsSync(file)) return readKeysFile(file)
    return Effect.try({
      try: () => {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 })
        const keys: DeploymentKeys = { signingSecret: randomBytes(32).toString("hex"), cursorKey: randomBytes(32).toString("hex") }
        writeFileSync(file, JSON.stringify(keys), { mode: 0o600, flag: "wx" })
        chmodSync(file, 0o600)
        return keys
      },
      catch: (cause) => invalid(SECRETS_FILE, `${file} cannot be written: ${cause instanceof Error ? cause.message : String(cause)}`)
    })
  })
