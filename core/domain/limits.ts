import { Context } from "effect"
import { DAY, HOUR, MINUTE, SECOND } from "../time.js"

const MiB = 1024 * 1024
const GiB = 1024 * MiB

/**
 * The numbers of the spec and decisions.md, read from configuration with these defaults.
 * Sizes are binary units, as the spec's own 5 GB = 5,368,709,120 bytes.
 */
export interface Limits {
  readonly uploadWindowMs: number
  readonly putMaxBytes: number
  readonly multipartPartBytes: number
  readonly liveMaxFileBytes: number
  readonly testMaxFileBytes: number
  readonly maxAudioSeconds: number
  readonly readyRetentionMs: number
  readonly rejectedRetentionMs: number
  readonly outputRetentionMs: number
  readonly outputLinkTtlMs: number
  readonly openUploads: number
  readonly retainedInputBytes: { readonly live: number; readonly test: number }
  readonly validationsPerHour: number
  /** How long validating one upload may take (decoding included); test-mode files get less. */
  readonly validationTimeLimitMs: { readonly live: number; readonly test: number }
  /**
   * A shorter limit for an upload whose header declares its length (core/rules/files.ts,
   * `declaredDurationVerdict`): `floorMs`, plus `perAudioSecondMs` per declared second, plus
   * `perMiBMs` per MiB of the upload (its transfer), never over `validationTimeLimitMs`.
   */
  readonly validationBudget: { readonly floorMs: number; readonly perAudioSecondMs: number; readonly perMiBMs: number }
  readonly jobLeaseMs: number
  readonly maxJobAttempts: number
  readonly lotLifetimeMs: number
  readonly idempotencyTtlMs: number
  /** A webhook attempt is delivered by a 2xx within this (decisions.md: 10 s). */
  readonly webhookTimeoutMs: number
  /** How long a worker holds a claimed delivery; longer than webhookTimeoutMs. */
  readonly webhookLeaseMs: number
  /**
   * How long a job or a validation keeps trying while storage (or the database) is unreachable
   * (decisions.md, Faults: 10 minutes); then the job fails with `internal_error`, its hold released.
   */
  readonly dependencyOutageMs: number
}

/** The window of the `validationsPerHour` quota. */
export const VALIDATION_WINDOW_MS = HOUR

export const DEFAULT_LIMITS: Limits = {
  uploadWindowMs: 6 * HOUR,
  putMaxBytes: 100 * MiB,
  multipartPartBytes: 64 * MiB,
  liveMaxFileBytes: 5 * GiB,
  testMaxFileBytes: 25 * MiB,
  maxAudioSeconds: 21_600,
  readyRetentionMs: 7 * DAY,
  rejectedRetentionMs: DAY,
  outputRetentionMs: 7 * DAY,
  outputLinkTtlMs: HOUR,
  openUploads: 10,
  retainedInputBytes: { live: 50 * GiB, test: 250 * MiB },
  validationsPerHour: 100,
  // a 25 MB test file decodes in about a second; two minutes covers hours of live audio on a busy host
  validationTimeLimitMs: { live: 2 * MINUTE, test: 20 * SECOND },
  // 6 h declared gets 118 s, as the 2-minute limit assumes (200× real time, ~10× under what this
  // 2-core machine decodes busy); the floor covers a start on a loaded host; 25 MiB/s from storage
  validationBudget: { floorMs: 10 * SECOND, perAudioSecondMs: 5, perMiBMs: 40 },
  jobLeaseMs: 30 * SECOND,
  maxJobAttempts: 3,
  lotLifetimeMs: 365 * DAY,
  idempotencyTtlMs: DAY,
  webhookTimeoutMs: 10 * SECOND,
  webhookLeaseMs: 30 * SECOND,
  dependencyOutageMs: 10 * MINUTE
}

export class LimitsConfig extends Context.Tag("hush/Limits")<LimitsConfig, Limits>() {}
