import { Context, Data, Effect, Option } from "effect"
import type { OAuthProviderName } from "../domain/users.js"

/** Who the provider says signed in. */
export interface OAuthProfile {
  /** Stable id of the person at the provider (`sub`, or GitHub's numeric id). */
  readonly subject: string
  readonly email: string | null
  /** The provider vouches for the address. */
  readonly emailVerified: boolean
}

/** The provider could not be reached or refused the code (bad code, PKCE mismatch, …). */
export class OAuthFailure extends Data.TaggedError("OAuthFailure")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** One configured provider: authorization code flow with state and PKCE (S256). */
export interface OAuthClient {
  readonly authorizationUrl: (request: { readonly state: string; readonly codeVerifier: string }) => Effect.Effect<string, OAuthFailure>
  readonly exchange: (request: { readonly code: string; readonly codeVerifier: string }) => Effect.Effect<OAuthProfile, OAuthFailure>
}

/** The providers this deployment has configured (adapters/oauth). */
export class OAuthProviders extends Context.Tag("hush/OAuthProviders")<OAuthProviders, {
  readonly get: (provider: OAuthProviderName) => Option.Option<OAuthClient>
}>() {}
