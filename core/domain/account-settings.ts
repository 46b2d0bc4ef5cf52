/**
 * The numbers and settings of self-serve accounts (decisions.md: Dashboard, Dashboard details,
 * E-mail), read from configuration with these defaults.
 */
import { Context } from "effect"
import { DAY, HOUR, MINUTE } from "../time.js"

export interface AccountSettings {
  /** `PUBLIC_BASE_URL`: links in e-mails, the dashboard's own origin, OAuth redirect URIs. */
  readonly publicBaseUrl: string
  /** The terms a signup accepts (`TERMS_VERSION`). */
  readonly termsVersion: string
  readonly sessionIdleMs: number
  readonly sessionAbsoluteMs: number
  readonly verifyTokenTtlMs: number
  readonly resetTokenTtlMs: number
  /** Verification mails (signup and resend) per user and hour; reset mails likewise. */
  readonly mailsPerHour: number
  readonly signupsPerHourPerIp: number
  readonly failedLoginsPerAddress: number
  readonly failedLoginsPerIp: number
  readonly failedLoginWindowMs: number
  readonly oauthStateTtlMs: number
  readonly maxActiveKeys: number
  readonly dashboardLots: number
  readonly usageMaxDays: number
}

export const DEFAULT_TERMS_VERSION = "2026-11-01"

export const defaultAccountSettings = (publicBaseUrl: string): AccountSettings => ({
  publicBaseUrl: publicBaseUrl.replace(/\/+$/, ""),
  termsVersion: DEFAULT_TERMS_VERSION,
  sessionIdleMs: 7 * DAY,
  sessionAbsoluteMs: 30 * DAY,
  verifyTokenTtlMs: DAY,
  resetTokenTtlMs: HOUR,
  mailsPerHour: 5,
  signupsPerHourPerIp: 10,
  failedLoginsPerAddress: 10,
  failedLoginsPerIp: 100,
  failedLoginWindowMs: 15 * MINUTE,
  oauthStateTtlMs: 10 * MINUTE,
  maxActiveKeys: 50,
  dashboardLots: 100,
  usageMaxDays: 366
})

export class AccountSettingsConfig extends Context.Tag("hush/AccountSettings")<AccountSettingsConfig, AccountSettings>() {}
