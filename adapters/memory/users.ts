/** In-memory users, sessions, e-mail tokens, OAuth identities and states, over the one MemoryDb. */
import { Effect, HashMap, Layer, Option } from "effect"
import { EmailTokenRecord, SessionRecord } from "../../core/domain/users.js"
import { EmailTokenRepo, OAuthRepo, SessionRepo, UserRepo } from "../../core/ports/users.js"
import { emailKey } from "../../core/rules/users.js"
import { MemoryDb, type MemoryState } from "./store.js"

const values = <V>(map: HashMap.HashMap<string, V>): Array<V> => [...HashMap.values(map)]

const set = <K extends "users" | "sessions" | "emailTokens" | "oauthIdentities" | "oauthStates">(
  state: MemoryState, table: K, id: string, value: unknown
): MemoryState => ({ ...state, [table]: HashMap.set(state[table] as HashMap.HashMap<string, unknown>, id, value) })

export const layerMemoryUserRepo = Layer.effect(UserRepo, Effect.map(MemoryDb, (db) => ({
  insert: (user) =>
    db.modify((s) =>
      values(s.users).some((u) => emailKey(u.email) === emailKey(user.email) || u.id === user.id || u.accountId === user.accountId)
        ? ["email_taken" as const, s]
        : ["inserted" as const, set(s, "users", user.id, user)]),
  get: (id) => db.read((s) => HashMap.get(s.users, id)),
  findByEmail: (email) => db.read((s) => Option.fromNullable(values(s.users).find((u) => emailKey(u.email) === emailKey(email)))),
  findByAccount: (accountId) => db.read((s) => Option.fromNullable(values(s.users).find((u) => u.accountId === accountId))),
  update: (user) => db.modify((s) => [undefined, set(s, "users", user.id, user)] as const)
})))

export const layerMemorySessionRepo = Layer.effect(SessionRepo, Effect.map(MemoryDb, (db) => {
  const removeWhere = (keep: (session: SessionRecord) => boolean) =>
    db.modify((s) => {
      const kept = HashMap.filter(s.sessions, keep)
      return [HashMap.size(s.sessions) - HashMap.size(kept), { ...s, sessions: kept }] as const
    })
  return {
    insert: (session) => db.modify((s) => [undefined, set(s, "sessions", session.idHash, session)] as const),
    get: (idHash) => db.read((s) => HashMap.get(s.sessions, idHash)),
    touch: (idHash, lastSeenAt) =>
      db.modify((s) => {
        const found = HashMap.get(s.sessions, idHash)
        // never moves backwards: a slower request does not undo a later touch
        if (Option.isNone(found) || found.value.lastSeenAt >= lastSeenAt) return [undefined, s] as const
        return [undefined, set(s, "sessions", idHash, new SessionRecord({ ...found.value, lastSeenAt }))] as const
      }),
    delete: (idHash) => db.modify((s) => [undefined, { ...s, sessions: HashMap.remove(s.sessions, idHash) }] as const),
    deleteByUser: (userId, except) => removeWhere((session) => session.userId !== userId || session.idHash === except),
    deleteExpired: ({ idleBefore, createdBefore }) =>
      removeWhere((session) => session.lastSeenAt >= idleBefore && session.createdAt >= createdBefore)
  }
}))

export const layerMemoryEmailTokenRepo = Layer.effect(EmailTokenRepo, Effect.map(MemoryDb, (db) => ({
  insert: (token) => db.modify((s) => [undefined, set(s, "emailTokens", token.hash, token)] as const),
  use: (hash, purpose, now) =>
    db.modify((s) => {
      const found = Option.filter(HashMap.get(s.emailTokens, hash), (t) => t.purpose === purpose)
      if (Option.isNone(found) || found.value.usedAt !== null) return [found, s] as const
      return [found, set(s, "emailTokens", hash, new EmailTokenRecord({ ...found.value, usedAt: now }))] as const
    }),
  useAll: (userId, purpose, now) =>
    db.modify((s) => [undefined, {
      ...s,
      emailTokens: HashMap.map(s.emailTokens, (t) =>
        t.userId === userId && t.purpose === purpose && t.usedAt === null ? new EmailTokenRecord({ ...t, usedAt: now }) : t)
    }] as const),
  createdSince: (userId, purpose, since) =>
    db.read((s) => {
      const times = values(s.emailTokens).filter((t) => t.userId === userId && t.purpose === purpose && t.createdAt >= since).map((t) => t.createdAt)
      return { count: times.length, earliest: times.length === 0 ? null : Math.min(...times) }
    }),
  deleteExpired: (before) =>
    db.modify((s) => {
      const kept = HashMap.filter(s.emailTokens, (t) => t.expiresAt >= before)
      return [HashMap.size(s.emailTokens) - HashMap.size(kept), { ...s, emailTokens: kept }] as const
    })
})))

const identityId = (provider: string, subject: string) => `${provider}\u0000${subject}`

export const layerMemoryOAuthRepo = Layer.effect(OAuthRepo, Effect.map(MemoryDb, (db) => ({
  insertState: (state) => db.modify((s) => [undefined, set(s, "oauthStates", state.hash, state)] as const),
  takeState: (hash) =>
    db.modify((s) => [HashMap.get(s.oauthStates, hash), { ...s, oauthStates: HashMap.remove(s.oauthStates, hash) }] as const),
  deleteExpiredStates: (before) =>
    db.modify((s) => {
      const kept = HashMap.filter(s.oauthStates, (state) => state.expiresAt >= before)
      return [HashMap.size(s.oauthStates) - HashMap.size(kept), { ...s, oauthStates: kept }] as const
    }),
  findIdentity: (provider, subject) => db.read((s) => HashMap.get(s.oauthIdentities, identityId(provider, subject))),
  insertIdentity: (identity) =>
    db.modify((s) => {
      const id = identityId(identity.provider, identity.subject)
      const taken = HashMap.has(s.oauthIdentities, id) ||
        values(s.oauthIdentities).some((i) => i.userId === identity.userId && i.provider === identity.provider)
      return taken ? ["taken" as const, s] : ["inserted" as const, set(s, "oauthIdentities", id, identity)]
    }),
  deleteIdentitiesOf: (userId) =>
    db.modify((s) => {
      const kept = HashMap.filter(s.oauthIdentities, (i) => i.userId !== userId)
      return [HashMap.size(s.oauthIdentities) - HashMap.size(kept), { ...s, oauthIdentities: kept }] as const
    }),
  identitiesOf: (userId) =>
    db.read((s) => values(s.oauthIdentities).filter((i) => i.userId === userId).sort((a, b) => a.createdAt - b.createdAt))
})))

export const layerMemoryUserRepositories = Layer.mergeAll(layerMemoryUserRepo, layerMemorySessionRepo, layerMemoryEmailTokenRepo, layerMemoryOAuthRepo)
